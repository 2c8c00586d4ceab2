package httpapi

import (
	"io"
	"sync"
	"time"
)

// LogWriter batches log lines on their way to an io.Writer, so that an
// access log line per request does not cost a write system call per
// request. It writes what it holds when that reaches logFlushAt bytes, every
// interval, and on Flush and Close; a line waits at most about interval.
// Writes are never reordered. It is safe for concurrent use.
type LogWriter struct {
	w io.Writer

	mu     sync.Mutex // guards buf and closed
	buf    []byte
	closed bool

	wmu   sync.Mutex // serializes writes to w; guards spare
	spare []byte

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// logFlushAt is the batch size that is written at once. A writer that is
// slower than the log fills the batch and makes Write wait for it, so that
// memory stays bounded.
const logFlushAt = 32 << 10

// NewLogWriter returns a LogWriter writing to w at least every interval
// (100 ms when 0). Close it to write the rest and stop its goroutine.
func NewLogWriter(w io.Writer, interval time.Duration) *LogWriter {
	if interval <= 0 {
		interval = 100 * time.Millisecond
	}
	l := &LogWriter{w: w, stop: make(chan struct{}), done: make(chan struct{})}
	go l.loop(interval)
	return l
}

func (l *LogWriter) loop(interval time.Duration) {
	defer close(l.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			_ = l.Flush()
		}
	}
}

// Write adds p to the batch; after Close it writes p through. It never
// fails: a log line that cannot be written is not the caller's problem.
func (l *LogWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		l.wmu.Lock()
		defer l.wmu.Unlock()
		_, _ = l.w.Write(p)
		return len(p), nil
	}
	l.buf = append(l.buf, p...)
	full := len(l.buf) >= logFlushAt
	l.mu.Unlock()
	if full {
		_ = l.Flush()
	}
	return len(p), nil
}

// Flush writes what the batch holds.
func (l *LogWriter) Flush() error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	b := l.buf
	l.buf = l.spare[:0]
	l.mu.Unlock()
	if len(b) == 0 {
		l.spare = b
		return nil
	}
	_, err := l.w.Write(b)
	if cap(b) <= 4*logFlushAt {
		l.spare = b[:0]
	} else {
		l.spare = nil
	}
	return err
}

// Close writes what the batch holds and stops the periodic writes; later
// writes go straight through. Close is idempotent.
func (l *LogWriter) Close() error {
	l.once.Do(func() {
		close(l.stop)
		<-l.done
	})
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	return l.Flush()
}
