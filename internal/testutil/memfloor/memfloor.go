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

// Words is the chain's buffer, for reads that do not follow it (the
// independent-read bound over the same memory). It stays mapped while c is
// referenced: keep c alive (runtime.KeepAlive) as long as the reads go on.
func (c *Chain) Words() []uint64 { return c.next }

// Len is the number of slots.
func (c *Chain) Len() int { return len(c.next) }

// HugePages reports whether the chain's buffer was advised onto huge pages
// (the kernel may still have given it small ones where it had no huge page
// free).
func (c *Chain) HugePages() bool { return c.buf.huge }

// Step is the index after i at step k (k = 1, 2, ...) of a dependent walk
// over a lookup benchmark's queries, x being a value computed from the
// answer to query i: i plus 1 plus 0 to 7, the low bits of x mixed with 3
// pseudo-random bits of k; the caller reduces it modulo the number of
// queries. The next query is not known before the answer is, as the
// floor's next slot is not known before its read. Each index is the one
// before plus a skip, so no lookup can start before every answer before it
// is in (a walk from the step count alone, k + x&7, would let the CPU run
// on past an answer that a predicted branch decides). Without k, each index
// would be a function of the index before alone: walks from different
// places meet and settle on a cycle of about a fifth of the queries, whose
// lines a last-level cache can hold; with k the walk sweeps on, a different
// fifth each time round.
func Step(i, k int, x uint64) int {
	return i + 1 + int((x^uint64(k)*0x9e3779b97f4a7c15>>61)&7)
}
