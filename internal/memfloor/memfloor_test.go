package memfloor

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestChainIsOneCycle(t *testing.T) {
	c := New(8*1000, 1)
	seen := make([]bool, c.Len())
	for range c.Len() {
		p := c.Step(1)
		assert.False(t, seen[p], "slot %d visited twice before the cycle closed", p)
		seen[p] = true
	}
	assert.Equal(t, uint64(0), c.pos, "the cycle returns to its start after Len steps")
}

var sink uint64

func BenchmarkFloor64MiB(b *testing.B) {
	c := New(64<<20, 1)
	b.ResetTimer()
	sink = c.Step(b.N)
}
