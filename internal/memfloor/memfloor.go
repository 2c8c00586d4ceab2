// Package memfloor measures the memory floor: the cost of one dependent
// random 8-byte read over a buffer as large as a table. No lookup that must
// touch a random part of the table can beat it, so benchmarks report their
// times as multiples of it, measured in the same run on the same machine.
//
// The buffer is on huge pages where the kernel grants them (Linux with
// transparent huge pages), as a table is by default: a floor on 4 KiB pages
// would add a page walk to nearly every read that a table's lookups do not
// pay, and flatter every ratio taken against it.
package memfloor

import "math/rand/v2"

// Chain is a random cyclic permutation of 8-byte slots: following it visits
// every slot once, each read depending on the one before, so neither the
// prefetcher nor out-of-order execution can hide the miss.
type Chain struct {
	next []uint64
	pos  uint64
	buf  *buffer // keeps next's memory mapped for as long as a copy of the chain is in use
}

// New returns a chain over a buffer of about size bytes (at least 16).
func New(size int64, seed uint64) *Chain {
	n := max(size/8, 2)
	buf := newBuffer(n)
	next := buf.words
	// Sattolo's algorithm: a uniformly random single cycle.
	perm := make([]uint64, n)
	for i := range perm {
		perm[i] = uint64(i)
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := n - 1; i > 0; i-- {
		j := r.Int64N(i)
		perm[i], perm[j] = perm[j], perm[i]
	}
	for i := range n {
		next[perm[i]] = perm[(i+1)%n]
	}
	return &Chain{next: next, buf: buf}
}

// Step makes k dependent reads and returns the last position (return it to a
// sink so the compiler keeps the loop).
func (c *Chain) Step(k int) uint64 {
	p := c.pos
	next := c.next
	for range k {
		p = next[p]
	}
	c.pos = p
	return p
}

// Len is the number of slots.
func (c *Chain) Len() int { return len(c.next) }

// HugePages reports whether the chain's buffer was advised onto huge pages
// (the kernel may still have given it small ones where it had no huge page
// free).
func (c *Chain) HugePages() bool { return c.buf.huge }
