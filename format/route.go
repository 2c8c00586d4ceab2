package format

import "fmt"

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
func (db *DB) GetRoute(tn uint64, blockUnlessPorted bool, r *Route) error {
	s, c, ok := db.enter(tn) // acquire, inlined
	if !ok {
		if s, c = db.reenter(s, c, tn); s == nil {
			*r = Route{}
			return ErrClosed
		}
	}
	err := s.getRoute(tn, blockUnlessPorted, r)
	if c.drop() {
		s.mp.lastReleased()
	}
	return err
}

// getRoute is get for the PORTED section alone, in one frame: the bucket
// is aimed and touched, the number's raw block row is read while that
// miss is in flight (BLOCKS' own misses overlap it), the bucket is
// searched, and only then is the block row resolved against the
// dictionaries, and not at all for a ported number when
// blockUnlessPorted leaves its block out. It overwrites r whole, each
// part once: r is the caller's (a front end's reused Route, or one it has
// just zeroed), and clearing it first would write every pointer twice,
// each with its write-barrier check.
func (s *snapshot) getRoute(tn uint64, blockUnlessPorted bool, r *Route) error {
	if !inNANP(tn) {
		*r = Route{}
		return nil
	}
	npa, rem := tn/10000000, tn%10000000
	sec := &s.num[numPorted]
	var q probe
	sec.aim(npa, rem, &q)
	keep(touch(s.b, &q))
	row, thousands, assigned, err := s.blockRow(npa, rem)
	if err != nil {
		return failRoute(r, err)
	}
	if err := sec.find(s.b, &q); err != nil {
		return failRoute(r, err)
	}
	switch {
	case s.ov != nil && s.portedFromOverlay(tn, &r.Ported):
	case q.hit:
		if err := s.portedFrom(sec.field(q.w, 0), sec.field(q.w, 1), &r.Ported); err != nil {
			return failRoute(r, err)
		}
	default:
		r.Ported = Ported{}
	}
	if !assigned || blockUnlessPorted && r.Ported.OK {
		r.Block = Block{}
		return nil
	}
	if err := s.resolveBlock(row, thousands, &r.Block); err != nil {
		return failRoute(r, err)
	}
	if row.lrn == 0 {
		r.Block.LRN = "" // resolveBlock writes it only for a row with one
	}
	return nil
}

// failRoute clears r, which a failed getRoute may have filled in part,
// and returns err.
func failRoute(r *Route, err error) error {
	*r = Route{}
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
