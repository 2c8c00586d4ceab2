package format

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"

	"github.com/lnpdb/lnpdb/internal/core/kindorder"
)

// batchSize is how many numbers GetMany moves through each stage together:
// enough independent loads to keep every miss handler of the core busy, few
// enough that the stage state stays in L1.
const batchSize = 64

// GetMany is Get for many numbers at once: out[i] receives tns[i]'s record,
// all from one snapshot. It hides memory latency by computing the bucket
// of every number of a batch and touching them all before it searches
// any, so that their cache misses are in flight together; on tables larger
// than the CPU caches it answers 2.7 to 2.9 times as many numbers per
// second as a loop over Get (the "batch lookups" rows of
// benchmarks/results/10M.md and 100M.md).
// out must be at least as long as tns; GetMany allocates nothing unless f
// includes FieldCNAM.
func (db *DB) GetMany(tns []uint64, f Fields, out []Record) error {
	if len(out) < len(tns) {
		return fmt.Errorf("format: GetMany: out holds %d records, need %d", len(out), len(tns))
	}
	return db.getMany(tns, f, out, nil)
}

// getMany is GetMany into recs, or, when recs is nil, GetRoutes into
// routes (f is then FieldPorted, with or without BlockUnlessPorted).
func (db *DB) getMany(tns []uint64, f Fields, recs []Record, routes []Route) error {
	s, ref := db.acquire(0)
	if s == nil {
		return ErrClosed
	}
	defer s.mp.release(ref)
	b := batchPool.Get().(*batch)
	defer b.release()
	b.begin(s, f)
	for base := 0; base < len(tns); base += batchSize {
		end := min(base+batchSize, len(tns))
		if err := b.load(tns[base:end]); err != nil {
			return err
		}
		var err error
		if recs != nil {
			err = b.decode(recs[base:end])
		} else {
			err = b.decodeRoutes(routes[base:end])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// batchPool keeps batches between calls: a batch is some 16 KB, and
// zeroing a new one for each call cost more than a stage.
var batchPool = sync.Pool{New: func() any { return new(batch) }}

// inNANP reports whether tn is a 10-digit national number a table can
// hold; any other reads as unassigned.
func inNANP(tn uint64) bool { return tn >= 2000000000 && tn <= 9999999999 }

// The kinds of number the stages after the search tell apart, and list
// the numbers by (batch.kinds), so that each stage goes through one kind
// after another: its branches on the kind then go the same way from one
// number to the next (package kindorder says why), and the decoding of
// the most common kinds has no such branches at all.
const (
	kindHit  = iota // the ported section holds the number
	kindCode        // not held; it has a code entry (or a damaged one)
	kindNone        // neither
	numKinds
)

// batch is getMany's working state for up to batchSize numbers.
type batch struct {
	s    *snapshot
	tns  []uint64
	f    Fields
	lazy bool // BlockUnlessPorted with FieldPorted: a ported hit skips the block
	// used is the sections whose probes the last call set; begin clears
	// those the next call does not select.
	used Fields

	// q holds each selected section's probes; a section f does not select
	// keeps zero probes (pt nil), which find and decode pass over.
	q [numSectionCount][batchSize]probe
	// code is, after stage 1, the offset of each number's code entry; 0
	// when it has none, -1 when its index word names an entry the section
	// does not have.
	code [batchSize]int64
	// thou is, after stage 2, the offset of each number's thousands entry
	// when its code is split; 0 when it is not, -1 when the code entry
	// names a group the section does not have. Only set for a number with
	// a code entry whose block is to be read. With code, it is where
	// decode finds the block row without walking BLOCKS again.
	thou [batchSize]int64
	// pair is, after stage 2, each hit's PAIRS index.
	pair [batchSize]uint64
	// kinds[k][:nkinds[k]] is, after stage 2, the batch's numbers of kind
	// k, in batch order.
	kinds  [numKinds][batchSize]uint8
	nkinds [numKinds]int
	// sink collects loads issued only to start a cache miss early
	// ("touches"), so that the compiler keeps them.
	sink byte
}

// begin readies a batch from the pool for a call on s selecting f.
func (b *batch) begin(s *snapshot, f Fields) {
	for i := range numSpecs {
		if fl := numSpecs[i].field; b.used&fl != 0 && f&fl == 0 {
			clear(b.q[i][:])
		}
	}
	b.s, b.f, b.used = s, f, f&FieldAll
	b.lazy = f&(FieldPorted|BlockUnlessPorted) == FieldPorted|BlockUnlessPorted
}

// release returns b to the pool, without the snapshot.
func (b *batch) release() {
	b.s, b.tns = nil, nil
	batchPool.Put(b)
}

// load takes up to batchSize numbers through the stages of snapshot.get,
// each stage across the whole batch, up to the decoding (decode or
// decodeRoutes). Each stage issues one independent load per number (and
// section) in a short loop, so that the loads of all the numbers are in
// flight together, and leaves what it loaded in cache for the next stage:
//
//  1. compute every selected section's home bucket and, from the code
//     indexes in memory, the code entry, then touch the bucket, the bucket
//     after it and the entry: the only misses that go to memory, all
//     independent (BLOCKS is small and mostly cached);
//  2. search the buckets, list the numbers by kind, touch the dictionary
//     entries the hits point at and the thousands-block entries;
//  3. (decode, decodeRoutes) decode, from cache, reading each block row
//     at the offsets stages 1 and 2 found.
func (b *batch) load(tns []uint64) error {
	f := b.f
	tns = tns[:min(len(tns), batchSize)]
	b.tns = tns

	// The first selected section is aimed, and touched, in the loops
	// that find and touch the code entries. A batch that selects none
	// aims the ported section's buckets there all the same, and does not
	// search them (its probes keep hit false).
	first := -1
	for i := range numSpecs {
		if f&numSpecs[i].field == 0 {
			continue
		}
		if first < 0 {
			first = i
		} else {
			b.aim(i)
		}
	}
	if first < 0 {
		first = numPorted
	}
	b.aimWords(first)
	b.touch(first)
	for i := range numSpecs {
		if f&numSpecs[i].field != 0 {
			if err := b.findAll(i); err != nil {
				return err
			}
		}
	}
	b.byKind()
	if f&FieldMessaging != 0 {
		b.touchTuples()
	}
	if err := b.loadThousands(); err != nil {
		return err
	}
	keep(b.sink)
	return nil
}

// aimWords, stage 1, computes every number's home bucket in section i and,
// from the code indexes' words (in memory), its code entry.
func (b *batch) aimWords(i int) {
	tns := b.tns
	code := b.code[:len(tns)]
	bl := &b.s.blocks
	sec, q := &b.s.num[i], b.q[i][:len(tns)]
	for j, tn := range tns {
		if !inNANP(tn) {
			code[j], q[j].pt, q[j].off = 0, nil, 0
			continue
		}
		npa, rem := tn/10000000, tn%10000000
		c := int64(0)
		if e, ok := bl.codeIndex(npa, rem/10000); ok {
			c = -1
			if e < uint64(bl.nentry) {
				c = bl.entry(uint32(e))
			}
		}
		code[j] = c
		sec.aimKey(npa, lineKey(rem), &q[j])
	}
}

// aim, stage 1, computes every number's home bucket in section i.
func (b *batch) aim(i int) {
	tns := b.tns
	sec, q := &b.s.num[i], b.q[i][:len(tns)]
	for j, tn := range tns {
		if inNANP(tn) {
			sec.aimKey(tn/10000000, lineKey(tn%10000000), &q[j])
		} else {
			q[j].pt, q[j].off = nil, 0
		}
	}
}

// touch, stage 1, touches every number's home bucket and the bucket after
// it in section first and each selected section after it, and its code
// entry's thousands-group field (the file's start when it has none) with
// the first section's. Computing is a loop of its own (aim, aimWords) so
// that the touching loops are a few instructions per load and many loads
// fit in the CPU's window.
func (b *batch) touch(first int) {
	m, sink := b.s.b, b.sink
	code := b.code[:len(b.tns)]
	q := b.q[first][:len(code)]
	for j := range q {
		sink ^= touch(m, &q[j]) ^ m[code[j]+16]
	}
	for i := first + 1; i < numSectionCount; i++ {
		if b.f&numSpecs[i].field != 0 {
			q := b.q[i][:len(code)]
			for j := range q {
				sink ^= touch(m, &q[j])
			}
		}
	}
	b.sink = sink
}

// findAll, stage 2, searches every number's bucket in section i.
func (b *batch) findAll(i int) error {
	sec, q, m := &b.s.num[i], b.q[i][:len(b.tns)], b.s.b
	for j := range q {
		if err := sec.find(m, &q[j]); err != nil {
			return err
		}
	}
	return nil
}

// byKind, stage 2, lists the numbers by kind. It writes every number
// into each list at the list's end and moves on only the end of its own
// kind's: no branch, no count to load and store.
func (b *batch) byKind() {
	q := b.q[numPorted][:len(b.tns)]
	code := b.code[:len(q)]
	hits, codes, nones := &b.kinds[kindHit], &b.kinds[kindCode], &b.kinds[kindNone]
	var nh, nc uint8
	for j := range q {
		hit := kindorder.Bit(q[j].hit)
		withCode := kindorder.Bit(code[j] != 0) &^ hit
		// The numbers so far of neither kind are the others so far.
		hits[nh%batchSize], codes[nc%batchSize], nones[(uint8(j)-nh-nc)%batchSize] = uint8(j), uint8(j), uint8(j)
		nh += hit
		nc += withCode
	}
	b.nkinds = [numKinds]int{int(nh), int(nc), len(q) - int(nh) - int(nc)}
}

// touchTuples, stage 2, touches the MSGTUPLE entries the messaging hits
// point at.
func (b *batch) touchTuples() {
	s, sink := b.s, b.sink
	sec := &s.num[numMessaging]
	for _, p := range b.q[numMessaging][:len(b.tns)] {
		if p.hit {
			if ti := sec.field(p.w, 0); ti < uint64(len(s.msgTuples)) {
				sink ^= byte(len(s.msgTuples[ti].Provider))
			}
		}
	}
	b.sink = sink
}

// loadThousands, stage 2, touches the PAIRS entries the ported hits point
// at, and finds the thousands entry of every number whose block is to be
// read and whose code is split, and touches it.
func (b *batch) loadThousands() error {
	s, sink := b.s, b.sink
	sec, q := &s.num[numPorted], &b.q[numPorted]
	hits := b.kinds[kindHit][:b.nkinds[kindHit]]
	for _, j := range hits {
		pi := sec.field(q[j%batchSize].w, 0)
		if pi < uint64(len(s.pairs)) {
			sink ^= byte(s.pairs[pi].ActivatedAt)
		}
		b.pair[j%batchSize] = pi
	}
	b.sink = sink
	if !b.lazy {
		if err := b.thousandsOf(hits); err != nil {
			return err
		}
	}
	return b.thousandsOf(b.kinds[kindCode][:b.nkinds[kindCode]])
}

// thousandsOf sets thou for the numbers js.
func (b *batch) thousandsOf(js []uint8) error {
	s, bi, sink := b.s, &b.s.blocks, b.sink
	for _, j := range js {
		c := b.code[j%batchSize]
		if c <= 0 {
			continue // no code entry, or a damaged one, which decoding reports
		}
		e, ok := s.at(c, codeEntrySize)
		if !ok {
			return errCorruptRecord
		}
		t := int64(0)
		switch g := binary.LittleEndian.Uint32(e[16:]); {
		case g == 0: // the code is not split
		case g > bi.nthou:
			t = -1
		default:
			t = bi.thousands(g, b.tns[j]/1000%10)
			sink ^= s.b[t]
		}
		b.thou[j%batchSize] = t
	}
	b.sink = sink
	return nil
}

// block fills blk, which must be zero, with number j's most specific block
// row, from the offsets the stages found: what readBlock does, without
// walking BLOCKS again.
func (b *batch) block(j uint8, blk *Block) error {
	if b.code[j%batchSize] == 0 {
		return nil
	}
	return b.blockAt(j, blk)
}

// blockAt is block for a number with a code entry (or a damaged one).
func (b *batch) blockAt(j uint8, blk *Block) error {
	c, t := b.code[j%batchSize], b.thou[j%batchSize]
	if c < 0 || t < 0 {
		return errCorruptRecord
	}
	return b.s.blockAt(c, t, blk)
}

// decode, stage 3, fills out from what the stages loaded, now in cache.
func (b *batch) decode(out []Record) error {
	s := b.s
	out = out[:len(b.tns)]
	for k := range numKinds {
		for _, j := range b.kinds[k][:b.nkinds[k]] {
			tn := b.tns[j]
			r := &out[j]
			*r = Record{Number: tn}
			if !inNANP(tn) {
				continue
			}
			for m := b.f & FieldAll; m != 0; m &= m - 1 {
				i := bits.TrailingZeros8(uint8(m))
				if err := s.decodeProbe(tn, i, &b.q[i][j%batchSize], r); err != nil {
					return err
				}
			}
			if err := b.blockOf(j, r.Ported.OK, &r.Block); err != nil {
				return err
			}
		}
	}
	return nil
}

// decodeRoutes is decode for GetRoutes: the ported record and the block
// row alone, into out, each written once. Without pending updates a
// number's kind says what it has: a hit its file record, any other none.
func (b *batch) decodeRoutes(out []Route) error {
	s := b.s
	if s.ov != nil {
		return b.decodeRoutesOverlay(out)
	}
	out = out[:len(b.tns)]
	sec, q := &s.num[numPorted], &b.q[numPorted]
	for _, j := range b.kinds[kindHit][:b.nkinds[kindHit]] {
		r := &out[j]
		if err := s.portedFrom(b.pair[j%batchSize], sec.field(q[j%batchSize].w, 1), &r.Ported); err != nil {
			return err
		}
		r.Block = Block{}
		if !b.lazy {
			if err := b.block(j, &r.Block); err != nil {
				return err
			}
		}
	}
	for _, j := range b.kinds[kindCode][:b.nkinds[kindCode]] {
		r := &out[j]
		r.Ported = Ported{}
		r.Block = Block{}
		if err := b.blockAt(j, &r.Block); err != nil {
			return err
		}
	}
	for _, j := range b.kinds[kindNone][:b.nkinds[kindNone]] {
		out[j] = Route{}
	}
	return nil
}

// decodeRoutesOverlay is decodeRoutes when pending updates may override a
// number's ported record, and with it whether its block is read.
func (b *batch) decodeRoutesOverlay(out []Route) error {
	s := b.s
	out = out[:len(b.tns)]
	for k := range numKinds {
		for _, j := range b.kinds[k][:b.nkinds[k]] {
			tn := b.tns[j]
			r := &out[j]
			*r = Route{}
			if !inNANP(tn) {
				continue
			}
			if err := s.portedOf(tn, &b.q[numPorted][j%batchSize], &r.Ported); err != nil {
				return err
			}
			if err := b.blockOf(j, r.Ported.OK, &r.Block); err != nil {
				return err
			}
		}
	}
	return nil
}

// blockOf fills blk, which must be zero, with number j's block row unless
// the batch reads the block only of numbers that are not ported and the
// number is (ported says whether it is).
func (b *batch) blockOf(j uint8, ported bool, blk *Block) error {
	switch {
	case b.lazy && ported: // the block is not to be read
	case b.lazy && b.q[numPorted][j%batchSize].hit:
		// A pending update took the file's port away: stage 2 passed
		// over the number.
		tn := b.tns[j]
		return b.s.readBlock(tn/10000000, tn%10000000, blk)
	default:
		return b.block(j, blk)
	}
	return nil
}

// keep is where a batch's touches end up; not inlined, it makes the
// compiler keep the loads.
//
//go:noinline
func keep(byte) {}
