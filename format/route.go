package format

import (
	"fmt"
)

// Route is the part of a number's record that resolving its LRN reads
// (CONTRACT §2): its ported record and its most specific block row. It is
// a Record without the per-number sections an LRN lookup does not need,
// so that a lookup that asks for no more than these copies and clears a
// third of what a Record costs.
type Route struct {
	Block  Block
	Ported Ported
}

// CurrentCarrier is as Record.CurrentCarrier.
func (r *Route) CurrentCarrier() *Carrier {
	if r.Ported.OK {
		return r.Ported.Carrier
	}
	return r.Block.Carrier
}

// GetRoute is GetInto for the ported record alone (f is FieldPorted, with
// BlockUnlessPorted or without), into the smaller Route, which it
// overwrites whole.
//
// It is the path of every plain LRN lookup, in one frame: the bucket is
// aimed and touched, the number's BLOCKS entries are located while that
// miss is in flight (their own misses overlap it), the bucket is searched,
// and only then is the block row decoded and resolved against the
// dictionaries, and not at all for a ported number when blockUnlessPorted
// leaves its block out. Each part of r is written once: r is the caller's
// (a front end's reused Route, or one it has just zeroed), and clearing it
// first would write every pointer twice, each with its write-barrier
// check.
func (db *DB) GetRoute(tn uint64, blockUnlessPorted bool, r *Route) error {
	s, c, ok := db.enter(tn) // acquire, inlined
	if !ok {
		if s, c = db.reenter(s, c, tn); s == nil {
			*r = Route{}
			return ErrClosed
		}
	}
	if !inNANP(tn) {
		return s.failRoute(c, r, nil)
	}
	npa, rem := tn/10000000, tn%10000000
	sec := &s.num[numPorted]
	var q probe
	sec.aimKey(npa, lineKey(rem), &q)
	sink := touch(s.b, &q)
	// The number's BLOCKS entries, located but not yet read: its code
	// entry, nil when its code has none (it is vacant), and its
	// thousands-block's entry, nil when the code has no thousands group.
	// The code indexes are in memory; an entry or group index read from
	// the file is checked against its part's length.
	var (
		code *codeEntry
		thou *thouEntry
	)
	bl := &s.blocks
	nxx := rem / 10000
	if i, ok := bl.codeIndex(npa, nxx); ok {
		if i >= uint64(len(bl.codeEntries)) {
			return s.failRoute(c, r, errCorruptRecord)
		}
		code = &bl.codeEntries[i]
		if i, ok := thouIndex(code, rem, nxx); ok {
			if i >= uint64(len(bl.thouEntries)) {
				return s.failRoute(c, r, errCorruptRecord)
			}
			thou = &bl.thouEntries[i]
		}
	}
	// The touches' byte goes into r, which every path writes again after
	// find: a store the compiler must keep, as find might read r for all
	// it knows, and with it the loads, for less than keep's call.
	r.Block.Thousands = sink != 0
	if err := sec.find(s.b, &q); err != nil {
		return s.failRoute(c, r, err)
	}
	// The pending updates' ported record when they have one, else the
	// file's. The overlay's case apart: as one condition, its call's
	// result was made a value and tested again on every lookup.
	switch {
	case s.ov != nil:
		if s.portedFromOverlay(tn, &r.Ported) {
			break
		}
		if !q.hit {
			r.Ported = Ported{}
		} else if err := s.portedFrom(sec.field(q.w, 0), sec.field(q.w, 1), &r.Ported); err != nil {
			return s.failRoute(c, r, err)
		}
	case q.hit:
		if err := s.portedFrom(sec.field(q.w, 0), sec.field(q.w, 1), &r.Ported); err != nil {
			return s.failRoute(c, r, err)
		}
	default:
		r.Ported = Ported{}
	}
	// The thousands entry's row when it has one, else the code entry's.
	if code == nil || blockUnlessPorted && r.Ported.OK {
		r.Block = Block{}
	} else if err := s.blockFrom(code, thou, &r.Block); err != nil {
		return s.failRoute(c, r, err)
	}
	if c.drop() {
		s.mp.lastReleased()
	}
	return nil
}

// failRoute is GetRoute's return on an error, or for a number outside
// the NANP: it clears r, which may be filled in part, releases the
// reference on shard c, and returns err. Not inlined, as it is rare.
//
//go:noinline
func (s *snapshot) failRoute(c *refShard, r *Route, err error) error {
	*r = Route{}
	s.mp.release(c)
	return err
}

// portedOf fills p, which must be zero, with tn's ported record: the
// pending updates' when they have one, else the file's that the found
// probe q holds.
func (s *snapshot) portedOf(tn uint64, q *probe, p *Ported) error {
	if s.ov != nil && s.portedFromOverlay(tn, p) || !q.hit {
		return nil
	}
	sec := &s.num[numPorted]
	return s.portedFrom(sec.field(q.w, 0), sec.field(q.w, 1), p)
}

// GetRoutes is GetRoute for many numbers at once, as GetMany is Get:
// out[i] receives tns[i]'s route, all from one snapshot, with GetMany's
// overlapped memory accesses. out must be at least as long as tns.
func (db *DB) GetRoutes(tns []uint64, blockUnlessPorted bool, out []Route) error {
	if len(out) < len(tns) {
		return fmt.Errorf("format: GetRoutes: out holds %d routes, need %d", len(out), len(tns))
	}
	f := FieldPorted
	if blockUnlessPorted {
		f |= BlockUnlessPorted
	}
	return db.getMany(tns, f, nil, out)
}
