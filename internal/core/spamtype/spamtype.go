// Package spamtype names the spam types a trust record carries, in the
// order a table stores them (as an index, so the order is part of the file
// format): one list for format, which stores them, internal/ingest/source,
// which reads them, and trust, which exports them. Standard library only.
package spamtype

// The spam types.
const (
	None         = "NONE"
	Spam         = "SPAM"
	Scam         = "SCAM"
	Robocall     = "ROBOCALL"
	Telemarketer = "TELEMARKETER"
)

// Types lists the spam types in their stored order.
var Types = [...]string{None, Spam, Scam, Robocall, Telemarketer}
