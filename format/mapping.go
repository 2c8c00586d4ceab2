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
	m       *region
	refs    [refShards]refShard
	retired atomic.Bool
	closed  atomic.Bool
}

const refShards = 8

type refShard struct {
	n atomic.Int64
	_ [56]byte
}

// refIndex spreads numbers over the shards.
func refIndex(tn uint64) int { return int((tn * 0x9e3779b97f4a7c15) >> 61) }

// acquire takes a reference on shard i unless the mapping is retired.
func (mp *mapping) acquire(i int) bool {
	mp.refs[i].n.Add(1)
	if mp.retired.Load() {
		mp.release(i)
		return false
	}
	return true
}

// release drops a reference taken on shard i.
func (mp *mapping) release(i int) {
	if mp.refs[i].n.Add(-1) == 0 && mp.retired.Load() {
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
// (shard index returned), or nil after Close. The caller releases it.
func (db *DB) acquire(tn uint64) (*snapshot, int) {
	i := refIndex(tn)
	for {
		s := db.snap.Load()
		if s == nil {
			return nil, 0
		}
		if s.mp.acquire(i) {
			return s, i
		}
		// Retired between the load and the acquire: the DB holds a
		// newer snapshot by now (swaps store the new one first).
	}
}
