package format

import (
	"errors"
	"fmt"

	"github.com/lnpdb/lnpdb"
)

var (
	// ErrFormat reports a file that is not an lnpdb table of a version this
	// reader understands.
	ErrFormat = errors.New("format: unsupported file")

	// ErrCorrupt reports a table whose bytes fail a checksum or a structural
	// check. Errors wrapping it are *CorruptError values naming the section.
	ErrCorrupt = errors.New("format: table is corrupt")

	// ErrClosed is returned by lookups on a closed DB. It is the same value as
	// lnpdb.ErrClosed.
	ErrClosed = lnpdb.ErrClosed
)

// CorruptError says which section of a table is damaged and how.
type CorruptError struct {
	Section string // section id, or "header"/"directory"
	Reason  string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("format: corrupt table: section %s: %s", e.Section, e.Reason)
}

// Unwrap makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

func corrupt(section, format string, args ...any) error {
	return &CorruptError{Section: section, Reason: fmt.Sprintf(format, args...)}
}

// errCorruptRecord is returned from the hot path, where building a message
// would allocate; Verify names the section and offset.
var errCorruptRecord = &CorruptError{Section: "record", Reason: "a record points outside its dictionary; run Verify"}
