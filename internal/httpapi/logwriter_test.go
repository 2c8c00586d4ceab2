package httpapi

import (
	"bytes"
	"fmt"
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
	_, writes = out.state()
	assert.Equal(t, 2, writes)

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
