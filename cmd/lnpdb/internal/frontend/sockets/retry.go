package sockets

import (
	"log/slog"
	"net"
	"sync/atomic"
	"time"
)

// Retrier owns the rule that a socket's error other than its own close is
// never fatal to a front end: a listener's failed accept (see [Gate]) and
// a UDP socket's failed read (internal/frontend/udpbatch) are each counted,
// logged at most once a second, and retried after a pause growing from
// 5 ms to 1 s, as net/http's Server waits after a temporary error. The zero
// value counts and logs nothing; its methods are safe for concurrent use.
type Retrier struct {
	Logger *slog.Logger // nil: no log
	Msg    string       // the log line's message: "accept failed; retrying"
	Count  string       // the log line's key for the count: "accept_errors"

	failed  atomic.Int64
	lastLog atomic.Int64 // unix nanoseconds of the last error logged
}

// Retry pauses: as net/http's Server waits after a temporary error.
const (
	minRetry = 5 * time.Millisecond
	maxRetry = time.Second
)

// Errors returns the number of errors retried.
func (r *Retrier) Errors() int64 { return r.failed.Load() }

// Failed counts err on addr, logs it with attrs (unless a line was logged
// less than a second ago), and returns the pause before the retry: the one
// after prev, the pause before the previous retry (0 after a success).
func (r *Retrier) Failed(addr net.Addr, err error, prev time.Duration, attrs ...any) time.Duration {
	n := r.failed.Add(1)
	pause := min(max(2*prev, minRetry), maxRetry)
	if r.Logger == nil {
		return pause
	}
	now := time.Now().UnixNano()
	last := r.lastLog.Load()
	if now-last < int64(time.Second) || !r.lastLog.CompareAndSwap(last, now) {
		return pause
	}
	r.Logger.Warn(r.Msg, append([]any{"addr", addr, "err", err, "retry_in", pause, r.Count, n}, attrs...)...)
	return pause
}
