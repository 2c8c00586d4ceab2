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
			buf, idx := randomReads(size)
			words := buf.words
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

// BenchmarkReadsThenWork is BenchmarkIndependentReads over 1 GiB with k
// steps of work after each read that wait for the value read: a chain of
// multiply-adds (serial-k, three operations a step), or adds of the value
// to a sum of the read's own (wide-k, two a step, one cycle apart). The
// reads are independent, as a loop's lookups are; what changes is how many
// operations wait on each miss. They wait in the CPU's schedulers, which
// hold a fixed number, so the reads in flight are about that number over
// the operations waiting on each, and once one read's operations fill
// them the next read cannot issue before the miss is in: the time per read
// climbs from the independent-read bound to the floor. It is the budget
// of work a lookup has after its miss if a loop of lookups is to overlap
// them.
func BenchmarkReadsThenWork(b *testing.B) {
	buf, idx := randomReads(1 << 30)
	words := buf.words
	mask := len(idx) - 1
	// b.N rather than b.Loop: the loop's variables stay in registers
	// (b.Loop's slow path, a call, makes the compiler keep them on the
	// stack), so the work is the operations counted and no more.
	for _, k := range []int{0, 8, 16, 24, 32, 48, 64, 128} {
		b.Run(fmt.Sprintf("serial-%d", k), func(b *testing.B) {
			var s uint64
			i := 0
			for range b.N {
				x := words[idx[i]]
				for j := range k {
					x = x*31 + uint64(j)
				}
				s += x
				i = (i + 1) & mask
			}
			sink = s
		})
	}
	for _, k := range []int{0, 8, 16, 24, 32, 48, 64, 128} {
		b.Run(fmt.Sprintf("wide-%d", k), func(b *testing.B) {
			var s uint64
			i := 0
			for range b.N {
				x := words[idx[i]]
				var a uint64
				for j := range k {
					a += x ^ uint64(j)
				}
				s += a
				i = (i + 1) & mask
			}
			sink = s
		})
	}
	runtime.KeepAlive(buf) // its cleanup unmaps words
}

// randomReads returns a buffer of size bytes, every word written (so that
// no page is the shared zero page), and 2^20 random word indexes into it.
// The buffer is the chain's kind without the chain: reads that do not
// follow it need no permutation, which at 1 GiB takes longer to draw than
// the benchmarks run and as much memory again.
func randomReads(size int64) (*buffer, []uint64) {
	buf := newBuffer(size / 8)
	words := buf.words
	for i := range words {
		words[i] = uint64(i)
	}
	idx := make([]uint64, 1<<20)
	r := rand.New(rand.NewPCG(2, 3))
	for i := range idx {
		idx[i] = r.Uint64N(uint64(len(words)))
	}
	return buf, idx
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
