package httpapi

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingWriter records what it is given and how many writes it took.
type countingWriter struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	return c.b.Write(p)
}

func (c *countingWriter) state() (string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String(), c.writes
}

func TestLogWriterBatches(t *testing.T) {
	var out countingWriter
	l := NewLogWriter(&out, time.Hour) // no periodic write during the test
	for i := range 100 {
		_, err := fmt.Fprintf(l, "line %d\n", i)
		require.NoError(t, err)
	}
	got, writes := out.state()
	assert.Empty(t, got, "nothing written before the batch is due")
	assert.Zero(t, writes)
	require.NoError(t, l.Flush())
	got, writes = out.state()
	assert.Equal(t, 1, writes, "one write for the batch")
	assert.Equal(t, 100, strings.Count(got, "\n"))

	// A full batch is written at once.
	line := strings.Repeat("x", 1023) + "\n"
	for range logFlushAt / len(line) {
		_, _ = l.Write([]byte(line))
	}
	require.Eventually(t, func() bool { _, writes = out.state(); return writes == 2 }, 10*time.Second, time.Millisecond,
		"a full batch is written without waiting for the interval")

	require.NoError(t, l.Close())
	require.NoError(t, l.Close(), "Close is idempotent")
	_, _ = l.Write([]byte("after close\n"))
	got, _ = out.state()
	assert.True(t, strings.HasSuffix(got, "after close\n"), "written through after Close")
}

func TestLogWriterWritesPeriodically(t *testing.T) {
	var out countingWriter
	l := NewLogWriter(&out, time.Millisecond)
	defer l.Close()
	_, _ = l.Write([]byte("soon\n"))
	require.Eventually(t, func() bool { got, _ := out.state(); return got == "soon\n" }, 10*time.Second, time.Millisecond)
}

func TestLogWriterConcurrentKeepsLines(t *testing.T) {
	var out countingWriter
	l := NewLogWriter(&out, time.Millisecond)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				_, _ = fmt.Fprintf(l, "g%d %05d %s\n", g, i, strings.Repeat("y", 40))
			}
		})
	}
	wg.Wait()
	require.NoError(t, l.Close())
	got, _ := out.state()
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	require.Len(t, lines, 8000, "no line lost")
	next := map[string]int{}
	for _, ln := range lines {
		var g string
		var i int
		_, err := fmt.Sscanf(ln, "%s %d", &g, &i)
		require.NoError(t, err, "a line is whole: %q", ln)
		require.Equal(t, next[g], i, "each writer's lines in order")
		next[g]++
	}
}

// stuckWriter is a log sink that stops reading: every Write blocks until
// release is closed, as a write to a full pipe nobody drains does.
type stuckWriter struct {
	countingWriter
	release chan struct{}
	entered chan struct{} // closed at the first Write
	once    sync.Once
}

func newStuckWriter(t *testing.T) *stuckWriter {
	s := &stuckWriter{release: make(chan struct{}), entered: make(chan struct{})}
	t.Cleanup(s.unstick)
	return s
}

func (s *stuckWriter) Write(p []byte) (int, error) {
	s.once.Do(func() { close(s.entered) })
	<-s.release
	return s.countingWriter.Write(p)
}

func (s *stuckWriter) unstick() {
	select {
	case <-s.release:
	default:
		close(s.release)
	}
}

// TestLogWriterNeverBlocks writes far more than the buffer holds to a sink
// that takes nothing: every Write returns, the overflow is dropped and
// counted, and once the sink reads again every line is either delivered or
// counted as dropped, with a notice saying how many.
func TestLogWriterNeverBlocks(t *testing.T) {
	out := newStuckWriter(t)
	l := NewLogWriter(out, time.Millisecond)
	_, _ = l.Write([]byte("first\n"))
	<-out.entered // the goroutine is now stuck in the sink

	line := strings.Repeat("z", 99) + "\n"
	const total = 4 * logMaxBuffered / 100 // four buffers' worth
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for range total {
			_, _ = l.Write([]byte(line))
		}
	}()
	select {
	case <-wrote:
	case <-time.After(30 * time.Second):
		t.Fatal("Write blocked on a sink that stopped reading")
	}
	dropped := l.Dropped()
	assert.GreaterOrEqual(t, dropped, uint64(total-logMaxBuffered/100), "what does not fit is dropped")
	assert.Less(t, dropped, uint64(total), "what fits is kept")

	out.unstick()
	require.NoError(t, l.Close())
	got, _ := out.state()
	assert.Equal(t, total+1, strings.Count(got, line)+int(dropped)+strings.Count(got, "first\n"),
		"every line is delivered or counted as dropped")
	assert.True(t, strings.Contains(got, `msg="log output too slow: lines dropped" dropped=`+strconv.FormatUint(dropped, 10)+"\n"),
		"a notice says how many lines were dropped")
	assert.Equal(t, dropped, l.Dropped(), "nothing dropped once the sink reads")
}

func TestLogWriterDropNoticeFormat(t *testing.T) {
	out := newStuckWriter(t)
	l := NewLogWriter(out, time.Millisecond)
	l.SetDropNotice(func(n uint64) []byte { return []byte(`{"msg":"dropped","n":` + strconv.FormatUint(n, 10) + "}\n") })
	_, _ = l.Write([]byte("first\n"))
	<-out.entered
	big := bytes.Repeat([]byte("x"), logMaxBuffered) // fills the buffer exactly
	big[len(big)-1] = '\n'
	_, _ = l.Write(big)
	_, _ = l.Write([]byte("a\nb\n")) // two lines, dropped
	_, _ = l.Write([]byte("c\n"))
	assert.Equal(t, uint64(3), l.Dropped())
	out.unstick()
	require.NoError(t, l.Close())
	got, _ := out.state()
	assert.True(t, strings.HasPrefix(got, "first\n{\"msg\":\"dropped\",\"n\":3}\nxxx"), "%.40q", got)
	assert.Len(t, got, len("first\n{\"msg\":\"dropped\",\"n\":3}\n")+logMaxBuffered)
}

// TestLogWriterCloseStuck: a sink that never reads again does not hold up
// Close for ever, and writes after Close do not block either.
func TestLogWriterCloseStuck(t *testing.T) {
	out := newStuckWriter(t)
	l := NewLogWriter(out, time.Millisecond)
	_, _ = l.Write([]byte("first\n"))
	<-out.entered
	_, _ = l.Write([]byte("second\n"))
	assert.ErrorIs(t, l.Close(), errLogStuck)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = l.Write([]byte("after close\n"))
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Write after Close blocked on a stuck sink")
	}
	assert.Equal(t, uint64(1), l.Dropped())
}

// TestAccessLogToStuckSinkDoesNotStallLookups serves lookups with the
// access log going to a sink that never reads: every request is answered,
// and /metrics counts the lines dropped.
func TestAccessLogToStuckSinkDoesNotStallLookups(t *testing.T) {
	out := newStuckWriter(t)
	l := NewLogWriter(out, time.Millisecond)
	l.max = 16 << 10 // a few dozen lines, so that a few hundred requests overflow it
	t.Cleanup(func() { out.unstick(); _ = l.Close() })
	var m *Metrics
	s := newServer(t, unlimited, func(c *Config) {
		c.Logger = slog.New(slog.NewJSONHandler(l, nil))
		c.AccessLogTo = l // as lnpdb serve --log-format json
		m = c.Metrics
	})
	require.NoError(t, m.RegisterLogWriter(l))

	const requests = 400
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range requests {
			r := s.post(t, "/api/v1/lrn", `{"phone_number":"12025550123"}`)
			if r.StatusCode != http.StatusOK {
				t.Errorf("status %d: %s", r.StatusCode, r.body)
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("lookups stalled behind a log sink that stopped reading")
	}
	dropped := l.Dropped()
	assert.Positive(t, dropped, "the access log lines that did not fit were dropped")

	body := s.do(t, http.MethodGet, "/metrics", "").body
	var got float64
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "lnpdb_log_lines_dropped_total "); ok {
			var err error
			got, err = strconv.ParseFloat(v, 64)
			require.NoError(t, err)
		}
	}
	assert.GreaterOrEqual(t, got, float64(dropped), "the metric counts the dropped lines")
}
