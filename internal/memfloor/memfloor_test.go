package memfloor

import (
	"fmt"
	"math/rand/v2"
	"runtime"
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

// BenchmarkIndependentReads is the other bound beside the floor: random
// 8-byte reads over the same kind of buffer that do not depend on each
// other, so that the CPU keeps as many in flight as it can. Its ns/op per
// read is what a batch that overlaps every miss could at best reach.
func BenchmarkIndependentReads(b *testing.B) {
	for _, size := range []int64{64 << 20, 1 << 30} {
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			// The chain's buffer without the chain: reads that do not
			// follow it need no permutation, which at 1 GiB takes longer
			// to draw than the benchmark runs and as much memory again.
			buf := newBuffer(size / 8)
			words := buf.words
			for i := range words {
				words[i] = uint64(i) // written, so that no page is the shared zero page
			}
			idx := make([]uint64, 1<<20)
			r := rand.New(rand.NewPCG(2, 3))
			for i := range idx {
				idx[i] = r.Uint64N(uint64(len(words)))
			}
			var s uint64
			i := 0
			for b.Loop() {
				s += words[idx[i]]
				i = (i + 1) & (len(idx) - 1)
			}
			sink = s
			runtime.KeepAlive(buf) // its cleanup unmaps words
		})
	}
}

// TestStep: a step moves on by 1 to 8, by every amount for some answers,
// and the same answer at another step count can move it by another.
func TestStep(t *testing.T) {
	skips := map[int]bool{}
	byK := map[int]bool{}
	for x := range uint64(64) {
		for k := 1; k <= 64; k++ {
			s := Step(100, k, x) - 100
			assert.True(t, s >= 1 && s <= 8, "skip %d", s)
			skips[s] = true
			if x == 0 {
				byK[s] = true
			}
		}
	}
	assert.Len(t, skips, 8, "every skip 1-8")
	assert.Greater(t, len(byK), 1, "the step count alone moves the walk")
}
