package format

import (
	"sync"
)

// The overlay holds updates applied since the mapped snapshot was written.
// Lookups consult it before the mapped PORTED section; a snapshot without
// updates has a nil overlay, so lookups then pay one nil check.

const overlayShards = 64

// overlayEntry is a number's state after its latest update: a ported record,
// or deleted (the number is no longer ported and routes by its block).
type overlayEntry struct {
	seq    uint64
	u      Update // kept to re-resolve against a new snapshot and to re-journal
	ported Ported
}

type overlayShard struct {
	mu sync.RWMutex
	m  map[uint64]*overlayEntry
}

type overlay struct {
	shards [overlayShards]overlayShard
}

func newOverlay() *overlay {
	o := &overlay{}
	for i := range o.shards {
		o.shards[i].m = map[uint64]*overlayEntry{}
	}
	return o
}

func (o *overlay) shard(tn uint64) *overlayShard {
	// Numbers are dense; mixing spreads neighbouring numbers over shards.
	return &o.shards[(tn*0x9e3779b97f4a7c15)>>58]
}

// get returns the entry for tn. Entries are never modified once stored, so
// the pointer may be read without the lock.
func (o *overlay) get(tn uint64) (*overlayEntry, bool) {
	sh := o.shard(tn)
	sh.mu.RLock()
	e, ok := sh.m[tn]
	sh.mu.RUnlock()
	return e, ok
}

func (o *overlay) put(tn uint64, e *overlayEntry) {
	sh := o.shard(tn)
	sh.mu.Lock()
	sh.m[tn] = e
	sh.mu.Unlock()
}

// entries returns a copy of every entry, for compaction.
func (o *overlay) entries() map[uint64]*overlayEntry {
	out := map[uint64]*overlayEntry{}
	for i := range o.shards {
		sh := &o.shards[i]
		sh.mu.RLock()
		for k, v := range sh.m {
			out[k] = v
		}
		sh.mu.RUnlock()
	}
	return out
}

func (o *overlay) len() int {
	n := 0
	for i := range o.shards {
		sh := &o.shards[i]
		sh.mu.RLock()
		n += len(sh.m)
		sh.mu.RUnlock()
	}
	return n
}

// portedFromOverlay applies the overlay to a PORTED read: it reports whether
// the overlay decided the answer.
func (s *snapshot) portedFromOverlay(tn uint64, p *Ported) bool {
	if s.ov == nil {
		return false
	}
	e, ok := s.ov.get(tn)
	if !ok {
		return false
	}
	if e.u.Action == Delete {
		*p = Ported{}
	} else {
		*p = e.ported
	}
	return true
}
