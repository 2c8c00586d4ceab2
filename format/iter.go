package format

import (
	"cmp"
	"encoding/binary"
	"errors"
	"iter"
	"slices"
)

// BlockRange names the numbers one block row covers: an NPA-NXX code
// (Size 10000, First its NXX's first number, e.g. 2025550000) or one
// thousands block of it (Size 1000, e.g. 2025551000 for NPA-NXX-X
// 202-555-1).
type BlockRange struct {
	First uint64
	Size  uint64
}

// PortedNumbers iterates over the table's ported numbers in ascending
// order: each number with the ported record Get's FieldPorted reads for it.
// The pending live updates are merged in, as Get merges them: the updates
// applied before the iteration starts are seen (a deleted number is left
// out, an added or changed one has its update's record), and those applied
// while it runs are not.
//
// The iteration holds a reference on the table's mapping from its start to
// its end, as a lookup does, so Close, Reload and Compact may run during
// it: it goes on over the table it started with. It allocates per
// iteration, not per number: a copy of the pending updates, sorted, and
// one scratch slice, as long as the NPA with the most ported numbers, into
// which each NPA's records are gathered and sorted by number (the file
// keeps them in hash order).
//
// When err is not nil, the iteration sets *err to nil when it starts and,
// when it stops early on a closed DB (ErrClosed) or a damaged table
// (*CorruptError), to why; a caller that stops by breaking out of the loop
// sees nil.
func (db *DB) PortedNumbers(err *error) iter.Seq2[uint64, Ported] {
	return walk(db, err, (*snapshot).eachPorted)
}

// Blocks iterates over the table's assigned block rows in ascending order
// of their first number: each NPA-NXX code with a whole-code row, then the
// assigned thousands blocks of that code, X = 0 to 9. The Block is what
// Get would answer for a number the row covers that has no more specific
// row: a code's Block has Thousands false, a thousands block's true. A
// code that is vacant as a whole but has assigned thousands blocks yields
// only those. Block rows are not changed by live updates.
//
// The iteration holds a reference on the table's mapping as PortedNumbers
// does, and allocates nothing. err is as PortedNumbers'.
func (db *DB) Blocks(err *error) iter.Seq2[BlockRange, Block] {
	return walk(db, err, (*snapshot).eachBlock)
}

// walk is an iteration over one snapshot of db, which it holds while each
// walks it: the iterators' rules of lifetime and errors, written once.
func walk[K, V any](db *DB, err *error, each func(*snapshot, func(K, V) bool) error) iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		setErr(err, nil)
		s, ref := db.acquire(0)
		if s == nil {
			setErr(err, ErrClosed)
			return
		}
		defer s.mp.release(ref)
		setErr(err, each(s, yield))
	}
}

func setErr(p *error, err error) {
	if p != nil {
		*p = err
	}
}

// portedItem is a ported record of the file gathered for sorting: the
// number's remainder within its NPA and its PORTED fields.
type portedItem struct {
	rem, pair, at uint64
}

// errStop ends a walk whose consumer stopped; it is never returned.
var errStop = errors.New("format: iteration stopped")

// eachPorted calls yield with every ported number, in ascending order, and
// its record, the pending updates' in place of the file's, until yield
// returns false.
func (s *snapshot) eachPorted(yield func(uint64, Ported) bool) error {
	sec := &s.num[numPorted]
	var pending []uint64 // numbers with an update, ascending
	var updates map[uint64]*overlayEntry
	if s.ov != nil {
		updates = s.ov.entries()
		pending = make([]uint64, 0, len(updates))
		for tn := range updates {
			pending = append(pending, tn)
		}
		slices.Sort(pending)
	}
	var most uint64
	for npa := range partitions {
		most = max(most, sec.parts[npa].n)
	}
	items := make([]portedItem, 0, most)
	// fromUpdate yields tn's pending update, unless it deletes the number.
	fromUpdate := func(tn uint64) bool {
		e := updates[tn]
		return e.u.Action == Delete || yield(tn, e.ported)
	}
	for npa := range partitions {
		base := uint64(npa) * 10000000
		end := base + 10000000
		items = items[:0]
		if pt := &sec.parts[npa]; pt.n != 0 {
			last := pt.base + int64(pt.nphys*bucketBytes) + bucketSlack
			if pt.base < 0 || last > int64(len(s.b)) {
				return corrupt(sec.id, "NPA %03d buckets: past the end of the file", npa)
			}
			err := sec.eachEntry(npa, s.b[pt.base:last], func(_, rem, _ uint64, w window) error {
				items = append(items, portedItem{rem, sec.field(w, 0), sec.field(w, 1)})
				return nil
			})
			if err != nil {
				return err
			}
			slices.SortFunc(items, func(a, b portedItem) int { return cmp.Compare(a.rem, b.rem) })
		}
		for _, it := range items {
			tn := base + it.rem
			for len(pending) > 0 && pending[0] < tn {
				if !fromUpdate(pending[0]) {
					return nil
				}
				pending = pending[1:]
			}
			if len(pending) > 0 && pending[0] == tn {
				if !fromUpdate(tn) {
					return nil
				}
				pending = pending[1:]
				continue
			}
			var p Ported
			if err := s.portedFrom(it.pair, it.at, &p); err != nil {
				return err
			}
			if !yield(tn, p) {
				return nil
			}
		}
		for len(pending) > 0 && pending[0] < end {
			if !fromUpdate(pending[0]) {
				return nil
			}
			pending = pending[1:]
		}
	}
	return nil
}

// eachCodeEntry calls fn with every code that has an entry in BLOCKS, in
// ascending order, with its entry and its thousands group (nil when the
// code is not split). It is the one walk over the section's entries;
// fn's error ends it and is returned.
func (s *snapshot) eachCodeEntry(fn func(npa, nxx uint64, code *codeEntry, group []thouEntry) error) error {
	bl := &s.blocks
	for npa := range uint64(partitions) {
		if bl.npa[npa] == noCodeTable {
			continue
		}
		for nxx := range uint64(1000) {
			idx, ok := bl.codeIndex(npa, nxx)
			if !ok {
				continue
			}
			if idx >= uint64(len(bl.codeEntries)) {
				return corrupt(secBlocks, "NPA %03d NXX %03d: code entry %d of %d", npa, nxx, idx, len(bl.codeEntries))
			}
			code := &bl.codeEntries[idx]
			var group []thouEntry
			if t, ok := thouIndex(code, nxx*10000, nxx); ok {
				if t+10 > uint64(len(bl.thouEntries)) {
					return corrupt(secBlocks, "NPA %03d NXX %03d: thousands group past the last", npa, nxx)
				}
				group = bl.thouEntries[t : t+10]
			}
			if err := fn(npa, nxx, code, group); err != nil {
				return err
			}
		}
	}
	return nil
}

// eachBlock calls yield with every assigned block row, as Blocks
// describes, until yield returns false.
func (s *snapshot) eachBlock(yield func(BlockRange, Block) bool) error {
	err := s.eachCodeEntry(func(npa, nxx uint64, code *codeEntry, group []thouEntry) error {
		first := npa*10000000 + nxx*10000
		var b Block
		if binary.LittleEndian.Uint32(code[:]) != 0 {
			if err := s.blockFrom(code, nil, &b); err != nil {
				return err
			}
			if !yield(BlockRange{first, 10000}, b) {
				return errStop
			}
		}
		for x := range group {
			if binary.LittleEndian.Uint32(group[x][:]) == 0 {
				continue
			}
			if err := s.blockFrom(code, &group[x], &b); err != nil {
				return err
			}
			if !yield(BlockRange{first + uint64(x)*1000, 1000}, b) {
				return errStop
			}
		}
		return nil
	})
	if err == errStop {
		return nil
	}
	return err
}
