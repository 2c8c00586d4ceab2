package format

import (
	"encoding/binary"
	"fmt"
	"math/bits"

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
	var b batch // zeroed once: a section f does not select keeps zero probes
	b.s, b.f = s, f
	b.lazy = f&(FieldPorted|BlockUnlessPorted) == FieldPorted|BlockUnlessPorted
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

// inNANP reports whether tn is a 10-digit national number a table can
// hold; any other reads as unassigned.
func inNANP(tn uint64) bool { return tn >= 2000000000 && tn <= 9999999999 }

// batch is getBatch's working state for up to batchSize numbers.
type batch struct {
	s    *snapshot
	tns  []uint64
	f    Fields
	lazy bool // BlockUnlessPorted with FieldPorted: a ported hit skips the block

	// q holds each selected section's probes; a section f does not select
	// keeps zero probes (pt nil), which find and decode pass over.
	q [numSectionCount][batchSize]probe
	// code is each number's offset in BLOCKS: its index word after stage
	// 1, its code entry after stage 2; 0 when it has none, -1 when its
	// index word names an entry the section does not have.
	code [batchSize]int64
	// thou is, after stage 3, the offset of each number's thousands entry
	// when its code is split; 0 when it is not (or the stage passed over
	// the number), -1 when the code entry names a group the section does
	// not have. With code, it is where decode finds the block row without
	// walking BLOCKS again.
	thou [batchSize]int64
	// order is the batch's numbers by kind (package kindorder), after
	// stage 3: those the ported section holds, then those with a code
	// entry, then the rest, each kind in batch order. The stages after
	// the search go through the numbers in this order.
	order [batchSize]int
	kinds [batchSize]uint8 // sortByKind's working memory
	// sink collects loads issued only to start a cache miss early
	// ("touches"), so that the compiler keeps them.
	sink byte
}

// load takes up to batchSize numbers through the stages of snapshot.get,
// each stage across the whole batch, up to the decoding (decode or
// decodeRoutes). Each stage issues one independent load per number (and
// section) in a short loop, so that the loads of all the numbers are in
// flight together, and leaves what it loaded in cache for the next stage:
//
//  1. compute every selected section's home bucket and touch it and the
//     bucket after it, and touch the block index word: the only misses
//     that go to memory, all independent;
//  2. load the code entries (BLOCKS is small and mostly cached) while the
//     buckets arrive;
//  3. search the buckets, touch the dictionary entries the hits point at
//     and the thousands-block entries;
//  4. (decode, decodeRoutes) decode, from cache, reading each block row at the offsets stages 2
//     and 3 found.
func (b *batch) load(tns []uint64) error {
	f := b.f
	b.tns = tns[:min(len(tns), batchSize)]
	b.code = [batchSize]int64{}

	for i := range numSpecs {
		if f&numSpecs[i].field != 0 {
			b.touchBuckets(i)
		}
	}
	b.loadIndexWords()
	if err := b.loadCodeEntries(); err != nil {
		return err
	}
	for i := range numSpecs {
		if f&numSpecs[i].field != 0 {
			if err := b.findAll(i); err != nil {
				return err
			}
		}
	}
	b.sortByKind()
	b.touchDictionaries()
	if err := b.loadThousands(); err != nil {
		return err
	}
	keep(b.sink)
	return nil
}

// touchBuckets, stage 1, computes every number's home bucket in section i
// and touches it and the bucket after it. Computing is a loop of its own so
// that the touching loop is a few instructions per load and many loads fit
// in the CPU's window.
func (b *batch) touchBuckets(i int) {
	sec, q := &b.s.num[i], &b.q[i]
	for j, tn := range b.tns {
		if inNANP(tn) {
			sec.aim(tn/10000000, tn%10000000, &q[j])
		} else {
			q[j].pt = nil
		}
	}
	m, sink := b.s.b, b.sink
	for j := range b.tns {
		sink ^= touch(m, &q[j])
	}
	b.sink = sink
}

// loadIndexWords, stage 1, touches every number's BLOCKS index word.
func (b *batch) loadIndexWords() {
	m, bi, sink := b.s.m, &b.s.blocks, b.sink
	for i, tn := range b.tns {
		if !inNANP(tn) {
			continue
		}
		if t := bi.npa[tn/10000000]; t != noCodeTable {
			b.code[i] = bi.word(t, tn%10000000/10000)
			sink ^= m.At(int(b.code[i]))
		}
	}
	b.sink = sink
}

// loadCodeEntries, stage 2, turns every index word into its code entry's
// offset and touches the entry's thousands-group field.
func (b *batch) loadCodeEntries() error {
	s, bi, sink := b.s, &b.s.blocks, b.sink
	for i, tn := range b.tns {
		off := b.code[i]
		if off == 0 {
			continue
		}
		b.code[i] = 0
		wb, ok := s.at(off, indexWordSize)
		if !ok {
			return errCorruptRecord
		}
		switch idx, ok := entryIndex(wb, tn%10000000/10000); {
		case !ok: // the code is not assigned
		case idx >= bi.nentry:
			b.code[i] = -1
		default:
			b.code[i] = bi.entry(idx)
			sink ^= s.m.At(int(b.code[i]) + 16)
		}
	}
	b.sink = sink
	return nil
}

// findAll, stage 3, searches every number's bucket in section i.
func (b *batch) findAll(i int) error {
	sec, q, m := &b.s.num[i], &b.q[i], b.s.b
	for j := range b.tns {
		if err := sec.find(m, &q[j]); err != nil {
			return err
		}
	}
	return nil
}

// sortByKind, stage 3, sets order: the numbers the ported section holds,
// then those with a code entry (or a damaged one), then the rest.
func (b *batch) sortByKind() {
	kinds := b.kinds[:len(b.tns)]
	for j := range kinds {
		notHit := 1 - kindorder.Bit(b.q[numPorted][j].hit)
		noCode := 1 - kindorder.Bit(b.code[j] != 0)
		kinds[j] = notHit * (1 + noCode) // 0 hit, 1 code entry, 2 neither
	}
	kindorder.Sort(kinds, b.order[:])
}

// touchDictionaries, stage 3, touches the PAIRS and MSGTUPLE entries the
// hits point at.
func (b *batch) touchDictionaries() {
	s, sink := b.s, b.sink
	for _, j := range b.order[:len(b.tns)] {
		if p := &b.q[numPorted][j]; p.hit {
			if pi := s.num[numPorted].field(p.w, 0); pi < uint64(len(s.pairs)) {
				sink ^= byte(s.pairs[pi].ActivatedAt)
			}
		}
		if p := &b.q[numMessaging][j]; p.hit {
			if ti := s.num[numMessaging].field(p.w, 0); ti < uint64(len(s.msgTuples)) {
				sink ^= byte(len(s.msgTuples[ti].Provider))
			}
		}
	}
	b.sink = sink
}

// loadThousands, stage 3, finds the thousands entry of every number whose
// code is split and touches it, unless the number's block is not to be
// read.
func (b *batch) loadThousands() error {
	s, bi, sink := b.s, &b.s.blocks, b.sink
	for _, i := range b.order[:len(b.tns)] {
		tn := b.tns[i]
		b.thou[i] = 0
		if b.code[i] <= 0 || b.lazy && b.q[numPorted][i].hit {
			continue // no code entry, or a ported number whose block is not read
		}
		e, ok := s.at(b.code[i], codeEntrySize)
		if !ok {
			return errCorruptRecord
		}
		switch g := binary.LittleEndian.Uint32(e[16:]); {
		case g == 0: // the code is not split
		case g > bi.nthou:
			b.thou[i] = -1
		default:
			b.thou[i] = bi.thousands(g, tn/1000%10)
			sink ^= s.m.At(int(b.thou[i]))
		}
	}
	b.sink = sink
	return nil
}

// block fills blk, which must be zero, with number j's most specific block
// row, from the offsets the stages found: what readBlock does, without
// walking BLOCKS again.
func (b *batch) block(j int, blk *Block) error {
	switch c, t := b.code[j], b.thou[j]; {
	case c == 0:
		return nil
	case c < 0 || t < 0:
		return errCorruptRecord
	default:
		return b.s.blockAt(c, t, blk)
	}
}

// decode, stage 4, fills out from what the stages loaded, now in cache.
func (b *batch) decode(out []Record) error {
	s := b.s
	for _, j := range b.order[:len(b.tns)] {
		tn := b.tns[j]
		r := &out[j]
		*r = Record{Number: tn}
		if !inNANP(tn) {
			continue
		}
		for m := b.f & FieldAll; m != 0; m &= m - 1 {
			i := bits.TrailingZeros8(uint8(m))
			if err := s.decodeProbe(tn, i, &b.q[i][j], r); err != nil {
				return err
			}
		}
		if err := b.blockOf(j, r.Ported.OK, &r.Block); err != nil {
			return err
		}
	}
	return nil
}

// decodeRoutes is decode for GetRoutes: the ported record and the block
// row alone, into out.
func (b *batch) decodeRoutes(out []Route) error {
	s := b.s
	for _, j := range b.order[:len(b.tns)] {
		tn := b.tns[j]
		r := &out[j]
		*r = Route{}
		if !inNANP(tn) {
			continue
		}
		if err := s.portedOf(tn, &b.q[numPorted][j], &r.Ported); err != nil {
			return err
		}
		if err := b.blockOf(j, r.Ported.OK, &r.Block); err != nil {
			return err
		}
	}
	return nil
}

// blockOf fills blk, which must be zero, with number j's block row unless
// the batch reads the block only of numbers that are not ported and the
// number is (ported says whether it is).
func (b *batch) blockOf(j int, ported bool, blk *Block) error {
	switch {
	case b.lazy && ported: // the block is not to be read
	case b.lazy && b.q[numPorted][j].hit:
		// A pending update took the file's port away: stage 3 passed
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
