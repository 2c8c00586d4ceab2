package httpapi

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// LogWriter batches log lines on their way to an io.Writer, so that an
// access log line per request does not cost a write system call per
// request, and so that a log sink that stops reading (a full pipe, a stuck
// terminal, a hung log shipper) never stalls a request.
//
// Write only appends to a bounded buffer; a goroutine of its own writes the
// buffer out when it reaches logFlushAt bytes, every interval, and on
// Flush and Close, so a line waits at most about interval. While the sink
// does not keep up and the buffer holds logMaxBuffered bytes, Write drops
// lines and counts them ([LogWriter.Dropped]); once the sink takes writes
// again, a notice saying how many were dropped precedes the next lines.
// Lines are never reordered. It is safe for concurrent use.
type LogWriter struct {
	w   io.Writer
	max int // logMaxBuffered; smaller in tests

	mu      sync.Mutex // guards buf, pending, closed
	buf     []byte
	pending uint64 // lines dropped since the last notice was written
	closed  bool

	dropped atomic.Uint64
	notice  atomic.Pointer[func(dropped uint64) []byte]

	wmu   sync.Mutex // held while writing to w; guards spare
	spare []byte

	kick  chan struct{}   // a batch is full
	flush chan chan error // Flush asks the goroutine to write now
	stop  chan struct{}
	done  chan struct{}

	once     sync.Once
	closeErr error
	stuck    atomic.Bool // Close gave up waiting for the sink
}

const (
	// logFlushAt is the batch size that is written at once.
	logFlushAt = 32 << 10
	// logMaxBuffered bounds what waits for a slow sink: a few seconds of
	// access log at a high request rate. Past it lines are dropped.
	logMaxBuffered = 1 << 20
	// logCloseWait is how long Close waits for a sink to take the rest.
	logCloseWait = 2 * time.Second
)

// NewLogWriter returns a LogWriter writing to w at least every interval
// (100 ms when 0). Close it to write the rest and stop its goroutine.
func NewLogWriter(w io.Writer, interval time.Duration) *LogWriter {
	if interval <= 0 {
		interval = 100 * time.Millisecond
	}
	l := &LogWriter{w: w, max: logMaxBuffered, kick: make(chan struct{}, 1), flush: make(chan chan error),
		stop: make(chan struct{}), done: make(chan struct{})}
	go l.loop(interval)
	return l
}

// SetDropNotice sets the function that formats the notice written when
// lines were dropped, so that it matches the log's format (text or JSON).
// It is called from the LogWriter's goroutine; its result should end in a
// newline. Without one the notice is a line in slog's text format.
func (l *LogWriter) SetDropNotice(format func(dropped uint64) []byte) {
	l.notice.Store(&format)
}

// Dropped returns how many lines were dropped, since the start, because the
// sink did not keep up.
func (l *LogWriter) Dropped() uint64 { return l.dropped.Load() }

func (l *LogWriter) loop(interval time.Duration) {
	defer close(l.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			_ = l.write()
			return
		case c := <-l.flush:
			c <- l.write()
		case <-l.kick:
			_ = l.write()
		case <-t.C:
			_ = l.write()
		}
	}
}

// Write adds p to the batch, or drops it when the sink is that far behind.
// It never blocks on the sink and never fails: a log line that cannot be
// written is not the caller's problem.
func (l *LogWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		l.writeThrough(p)
		return len(p), nil
	}
	// A line is dropped only behind others: a single huge line still goes
	// out when the sink keeps up.
	if len(l.buf) > 0 && len(l.buf)+len(p) > l.max {
		n := lines(p)
		l.pending += n
		l.mu.Unlock()
		l.dropped.Add(n)
		return len(p), nil
	}
	l.buf = append(l.buf, p...)
	full := len(l.buf) >= logFlushAt
	l.mu.Unlock()
	if full {
		select {
		case l.kick <- struct{}{}:
		default: // a write is due already
		}
	}
	return len(p), nil
}

// writeThrough writes p after Close, unless the sink is still stuck on
// an earlier write: then p is dropped.
func (l *LogWriter) writeThrough(p []byte) {
	if l.stuck.Load() {
		if !l.wmu.TryLock() {
			l.dropped.Add(lines(p))
			return
		}
	} else {
		l.wmu.Lock()
	}
	defer l.wmu.Unlock()
	_, _ = l.w.Write(p)
}

// lines counts the lines in p, at least one.
func lines(p []byte) uint64 {
	return uint64(max(1, bytes.Count(p, []byte{'\n'})))
}

// write writes the notice of dropped lines, if any, and the batch.
func (l *LogWriter) write() error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	b, dropped := l.buf, l.pending
	l.buf, l.pending = l.spare[:0], 0
	l.mu.Unlock()
	var err error
	if dropped > 0 {
		_, err = l.w.Write(l.noticeFor(dropped))
	}
	if len(b) > 0 {
		if _, werr := l.w.Write(b); err == nil {
			err = werr
		}
	}
	if cap(b) <= 4*logFlushAt {
		l.spare = b[:0]
	} else {
		l.spare = nil
	}
	return err
}

func (l *LogWriter) noticeFor(dropped uint64) []byte {
	if f := l.notice.Load(); f != nil {
		return (*f)(dropped)
	}
	return []byte("time=" + time.Now().Format(time.RFC3339Nano) +
		` level=WARN msg="log output too slow: lines dropped" dropped=` + strconv.FormatUint(dropped, 10) + "\n")
}

// Flush writes what the batch holds and waits until the sink has taken it.
// Unlike Write it does wait for a slow sink.
func (l *LogWriter) Flush() error {
	c := make(chan error, 1)
	select {
	case l.flush <- c:
		return <-c
	case <-l.done: // closed: Write writes through
		return nil
	}
}

// errLogStuck is Close's error when the sink did not take the last lines.
var errLogStuck = errors.New("httpapi: the log output did not take the last lines in time")

// Close writes what the batch holds and stops the periodic writes; later
// writes go straight through. It waits at most a few seconds for a sink
// that does not take writes, so that a stuck log cannot stop a shutdown.
// Close is idempotent.
func (l *LogWriter) Close() error {
	l.once.Do(func() { l.closeErr = l.close() })
	return l.closeErr
}

func (l *LogWriter) close() error {
	close(l.stop)
	select {
	case <-l.done:
	case <-time.After(logCloseWait):
		l.stuck.Store(true)
		l.mu.Lock()
		l.closed = true
		l.mu.Unlock()
		return errLogStuck
	}
	// Lines written after the goroutine's last write go out now, before
	// any written through: wmu is held from before closed is set.
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	l.closed = true
	rest := l.buf
	l.buf = nil
	l.mu.Unlock()
	if len(rest) > 0 {
		_, err := l.w.Write(rest)
		return err
	}
	return nil
}
