package format

import (
	"sync/atomic"
)

// mapping is one mapped table file, shared by the snapshots made from it (an
// Apply makes a new snapshot over the same mapping). A reader holds a
// reference while it reads; once the DB has moved on to another file (a
// reload, a compaction, Close) the mapping is retired, and whoever drops the
// last reference — the swap itself when no reader is left — unmaps it.
//
// The count is spread over refShards cache lines, chosen per lookup by the
// number looked up, so that lookups on different cores seldom write the same
// line. The order of the atomic operations makes it safe: a reader
// increments, then checks retired; the retirer sets retired, then sums. A
// reader that saw "not retired" incremented before the sum was taken, and a
// reader that increments after it sees "retired" and backs out without
// touching the mapping.
type mapping struct {
	// First, so that a shard's address is the mapping's plus the shard's
	// offset, one instruction: behind a field, each time a lookup forms it
	// took one more.
	refs    [refShards]refShard
	m       *region
	retired atomic.Bool
	closed  atomic.Bool
}

const refShards = 8

// refShard is one shard's counter, padded to 64 bytes: as the shards are
// 64 bytes apart, no two counters share a cache line wherever the heap
// places the mapping (it puts an 8-byte header before an object of this
// size, so the lines are not the shards'), and the fields after the last
// shard, which every lookup reads, share no line with a counter
// (TestMappingShardsOwnTheirLines).
type refShard struct {
	n atomic.Int64
	_ [56]byte
}

// refIndex spreads numbers over the shards: tn modulo refShards, which
// is the last three digits' (1000 is a multiple of 8), so that the
// numbers of a random mix, and consecutive numbers, fall on every shard.
func refIndex(tn uint64) int { return int(tn % refShards) }

// drop drops a reference taken on shard c and reports whether it was the
// shard's last: the caller then calls lastReleased, which unmaps a retired
// mapping that no reader holds. It is release in two parts so that a
// lookup's own frame can hold the add (drop is inlined) and only the rare
// last release is a call.
func (c *refShard) drop() bool { return c.n.Add(-1) == 0 }

// release drops a reference taken on shard c.
func (mp *mapping) release(c *refShard) {
	if c.drop() {
		mp.lastReleased()
	}
}

// lastReleased is release when its shard's count reached zero: the
// mapping is unmapped if it is retired and the other shards are at zero.
func (mp *mapping) lastReleased() {
	if mp.retired.Load() {
		mp.unmapIfUnused()
	}
}

// retire marks the mapping as no longer current; it is unmapped as soon as
// no reader holds it.
func (mp *mapping) retire() {
	mp.retired.Store(true)
	mp.unmapIfUnused()
}

func (mp *mapping) unmapIfUnused() {
	for i := range mp.refs {
		if mp.refs[i].n.Load() != 0 {
			return
		}
	}
	if mp.closed.CompareAndSwap(false, true) {
		mp.m.Close()
	}
}

// unmapped reports whether the mapping is gone (for tests).
func (mp *mapping) unmapped() bool { return mp.closed.Load() }

// acquire returns the current snapshot with a reference on its mapping
// (the shard to release), or nil after Close. The caller releases it.
func (db *DB) acquire(tn uint64) (*snapshot, *refShard) {
	s, c, ok := db.enter(tn)
	if !ok {
		s, c = db.reenter(s, c, tn)
	}
	return s, c
}

// enter is acquire's common case, small enough to be inlined into a
// lookup: the snapshot's load, the add and the check of retired. ok is
// false when the DB is closed (s is nil) or a swap retired the mapping
// between the load and the add; the caller then calls reenter.
func (db *DB) enter(tn uint64) (s *snapshot, c *refShard, ok bool) {
	if s = db.snap.Load(); s == nil {
		return nil, nil, false
	}
	// A reference on the shard of the mapping that a lookup of tn uses,
	// then the check of retired (after the add). The mapping is loaded
	// once: after the add, s.mp would be loaded again.
	mp := s.mp
	c = &mp.refs[refIndex(tn)]
	c.n.Add(1)
	return s, c, !mp.retired.Load()
}

// reenter is acquire after enter failed: it drops enter's reference on a
// retired mapping and takes one on the current snapshot, which a swap
// stores before it retires the old one; nil after Close.
func (db *DB) reenter(s *snapshot, c *refShard, tn uint64) (*snapshot, *refShard) {
	for s != nil {
		s.mp.release(c)
		var ok bool
		if s, c, ok = db.enter(tn); ok {
			return s, c
		}
	}
	return nil, nil
}
