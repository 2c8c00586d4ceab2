// Package progress draws a one-line progress report for long commands
// (build, gen) on a terminal, and stays silent when output is not a
// terminal, so logs and pipes get no control characters.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Bar reports progress towards a total (bytes or rows). A nil *Bar is valid
// and does nothing, which is what New returns for a non-terminal.
type Bar struct {
	w     io.Writer
	label string
	total int64
	start time.Time
	n     atomic.Int64
	last  atomic.Int64 // unix nanos of the last redraw
	mu    sync.Mutex
}

// redrawEvery limits redraws: a terminal does not need more.
const redrawEvery = 100 * time.Millisecond

// New returns a Bar drawing on w when w is a terminal, else nil. total may be
// 0 when unknown.
func New(w io.Writer, label string, total int64) *Bar {
	f, ok := w.(*os.File)
	if !ok || f == nil || !isTerminal(f) {
		return nil
	}
	return &Bar{w: w, label: label, total: total, start: time.Now()}
}

// Add records n more units done. It is cheap and safe for concurrent use.
func (b *Bar) Add(n int64) {
	if b == nil {
		return
	}
	b.n.Add(n)
	now := time.Now().UnixNano()
	last := b.last.Load()
	if now-last < int64(redrawEvery) || !b.last.CompareAndSwap(last, now) {
		return
	}
	b.draw(false)
}

// Done draws the final state and ends the line.
func (b *Bar) Done() {
	if b == nil {
		return
	}
	b.draw(true)
}

func (b *Bar) draw(final bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	line := Render(b.label, b.n.Load(), b.total, time.Since(b.start))
	end := ""
	if final {
		end = "\n"
	}
	fmt.Fprintf(b.w, "\r\x1b[K%s%s", line, end)
}

// Render formats one progress line: label, count, total and percent when
// the total is known, rate and elapsed time.
func Render(label string, n, total int64, elapsed time.Duration) string {
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(n) / s
	}
	el := elapsed.Truncate(time.Second)
	if total > 0 {
		pct := float64(n) * 100 / float64(total)
		return fmt.Sprintf("%s  %s / %s  %5.1f%%  %s/s  %s", label, human(float64(n)), human(float64(total)), pct, human(rate), el)
	}
	return fmt.Sprintf("%s  %s  %s/s  %s", label, human(float64(n)), human(rate), el)
}

// human shortens a count: 1234567 → 1.2M.
func human(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.1fG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// isTerminal reports whether f is a character device: a terminal, not a
// file, pipe or socket. /dev/null is one too, but nothing is read from it.
// It keeps the library module free of golang.org/x/term.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
