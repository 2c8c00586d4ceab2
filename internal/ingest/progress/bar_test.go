package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestBarDraws drives a Bar as if its writer were a terminal: concurrent
// Adds are all counted, redraws are rate-limited, and Done ends the line.
func TestBarDraws(t *testing.T) {
	var buf bytes.Buffer
	b := &Bar{w: &buf, label: "rows", total: 100_000, start: time.Now()}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 25_000 {
				b.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(b.start)
	b.Done()
	out := buf.String()
	assert.EqualValues(t, 100_000, b.n.Load())
	assert.True(t, strings.HasSuffix(out, "\n"), "Done ends the line")
	draws := strings.Count(out, "\r")
	assert.LessOrEqual(t, draws, int(elapsed/redrawEvery)+2, "at most ~10 redraws a second")
	last := out[strings.LastIndex(out, "\r\x1b[K")+4:]
	assert.True(t, strings.HasPrefix(last, "rows  100.0k / 100.0k  100.0%"), last)
}
