package format

import (
	"encoding/binary"
	"fmt"
)

// batchSize is how many numbers GetMany moves through each stage together:
// enough independent loads to keep every miss handler of the core busy, few
// enough that the stage state stays in L1.
const batchSize = 64

// GetMany is Get for many numbers at once: out[i] receives tns[i]'s record,
// all from one snapshot. It hides memory latency by issuing the independent
// memory accesses of a batch of numbers together instead of one number's
// dependent accesses at a time, so on tables larger than the CPU caches it
// answers about twice as many numbers per second as a loop over Get (with
// FieldPorted: 2.08x at 10M ported numbers, 2.28x at 100M, the "batch
// lookups" rows of benchmarks/results/10M.md and 100M.md).
// out must be at least as long as tns; GetMany allocates nothing unless f
// includes FieldCNAM.
func (db *DB) GetMany(tns []uint64, f Fields, out []Record) error {
	if len(out) < len(tns) {
		return fmt.Errorf("format: GetMany: out holds %d records, need %d", len(out), len(tns))
	}
	s, ref := db.acquire(0)
	if s == nil {
		return ErrClosed
	}
	defer s.mp.release(ref)
	for base := 0; base < len(tns); base += batchSize {
		end := min(base+batchSize, len(tns))
		if err := s.getBatch(tns[base:end], f, out[base:end]); err != nil {
			return err
		}
	}
	return nil
}

// inNANP reports whether tn is a 10-digit national number a table can
// hold; any other reads as unassigned.
func inNANP(tn uint64) bool { return tn >= 2000000000 && tn <= 9999999999 }

// batchSection is one per-number section's probes for a batch; on is false
// when the Fields do not select the section, and its probes stay zero (not
// started).
type batchSection struct {
	sec *numSection
	on  bool
	q   [batchSize]probe
}

// batch is getBatch's working state for up to batchSize numbers.
type batch struct {
	s    *snapshot
	tns  []uint64
	lazy bool // BlockUnlessPorted with FieldPorted: a ported hit skips the block

	ported, messaging, cnam, trust batchSection
	// code is each number's offset in BLOCKS: its index word after stage
	// 1, its code entry after stage 2; 0 when it has none.
	code [batchSize]int64
	// sink collects loads issued only to start a cache miss early
	// ("touches"), so that the compiler keeps them.
	sink byte
}

// getBatch is get for up to batchSize numbers, stage by stage across the
// whole batch. Each stage issues one independent load per number (and
// section) in a short loop, so that the loads of all the numbers are in
// flight together, and leaves what it loaded in cache for the next stage:
//
//  1. hash, and load every section's pilot byte and the block index word;
//  2. locate every record and load its first byte; load the code entry;
//  3. read the PORTED and MESSAGING records and load the dictionary entries
//     they point at; load the thousands-block entry;
//  4. decode, from cache.
func (s *snapshot) getBatch(tns []uint64, f Fields, out []Record) error {
	tns = tns[:min(len(tns), batchSize)]
	var b batch // field by field below: a composite literal would copy the probes
	b.s, b.tns = s, tns
	b.lazy = f&(FieldPorted|BlockUnlessPorted) == FieldPorted|BlockUnlessPorted
	b.ported.sec, b.ported.on = &s.ported, f&FieldPorted != 0
	b.messaging.sec, b.messaging.on = &s.messaging, f&FieldMessaging != 0
	b.cnam.sec, b.cnam.on = &s.cnam, f&FieldCNAM != 0
	b.trust.sec, b.trust.on = &s.trustSec, f&FieldTrust != 0
	sections := [...]*batchSection{&b.ported, &b.messaging, &b.cnam, &b.trust}

	for _, bs := range sections {
		b.loadPilots(bs)
	}
	b.loadIndexWords()

	for _, bs := range sections {
		if err := b.loadRecords(bs); err != nil {
			return err
		}
	}
	if err := b.loadCodeEntries(); err != nil {
		return err
	}

	if err := b.readRecords(&b.ported); err != nil {
		return err
	}
	if err := b.readRecords(&b.messaging); err != nil {
		return err
	}
	b.touchDictionaries()
	if err := b.loadThousands(); err != nil {
		return err
	}
	keep(b.sink)

	return b.decode(out[:len(tns)])
}

// loadPilots, stage 1, hashes every number and loads its pilot byte in
// bs's section. The hashing is a loop of its own so that the loading loop
// is a few instructions per load and many loads fit in the CPU's window.
func (b *batch) loadPilots(bs *batchSection) {
	if !bs.on {
		return
	}
	for i, tn := range b.tns {
		if inNANP(tn) {
			bs.sec.aim(tn/10000000, tn%10000000, &bs.q[i])
		}
	}
	m := b.s.m
	for i := range b.tns {
		if p := &bs.q[i]; p.pt != nil {
			p.pilot = m.At(int(p.off))
		}
	}
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

// loadRecords, stage 2, locates every started probe's record in bs's
// section and loads its first byte.
func (b *batch) loadRecords(bs *batchSection) error {
	if !bs.on {
		return nil
	}
	m := b.s.m
	for i := range b.tns {
		if p := &bs.q[i]; p.pt != nil {
			if err := bs.sec.locate(m, p); err != nil {
				return err
			}
		}
	}
	for i := range b.tns {
		if p := &bs.q[i]; p.pt != nil {
			p.first = m.At(int(p.off))
		}
	}
	return nil
}

// loadCodeEntries, stage 2, turns every index word into its code entry's
// offset and touches the entry's thousands-group field.
func (b *batch) loadCodeEntries() error {
	m, bi, sink := b.s.m, &b.s.blocks, b.sink
	for i, tn := range b.tns {
		if b.code[i] == 0 {
			continue
		}
		var wb [indexWordSize]byte
		if _, err := m.ReadAt(wb[:], b.code[i]); err != nil {
			return errCorruptRecord
		}
		idx, ok := entryIndex(wb[:], tn%10000000/10000)
		b.code[i] = 0
		if ok && idx < bi.nentry {
			b.code[i] = bi.entry(idx)
			sink ^= m.At(int(b.code[i]) + 16)
		}
	}
	b.sink = sink
	return nil
}

// readRecords, stage 3, reads every located record of bs's section and
// notes whether it is the number's.
func (b *batch) readRecords(bs *batchSection) error {
	if !bs.on {
		return nil
	}
	for i := range b.tns {
		p := &bs.q[i]
		if p.pt == nil {
			continue
		}
		w, ok, err := bs.sec.read(b.s.m, p)
		if err != nil {
			return err
		}
		p.w, p.hit = w, ok
	}
	return nil
}

// touchDictionaries, stage 3, touches the PAIRS and MSGTUPLE entries the
// hits point at.
func (b *batch) touchDictionaries() {
	s, sink := b.s, b.sink
	for i := range b.tns {
		if p := &b.ported.q[i]; p.hit {
			if pi := s.ported.field(p.w, 0); pi < uint64(len(s.pairs)) {
				sink ^= byte(s.pairs[pi].ActivatedAt)
			}
		}
		if p := &b.messaging.q[i]; p.hit {
			if ti := s.messaging.field(p.w, 0); ti < uint64(len(s.msgTuples)) {
				sink ^= byte(len(s.msgTuples[ti].Provider))
			}
		}
	}
	b.sink = sink
}

// loadThousands, stage 3, touches the thousands entry of every number
// whose code is split, unless its block is not to be read.
func (b *batch) loadThousands() error {
	m, bi, sink := b.s.m, &b.s.blocks, b.sink
	for i, tn := range b.tns {
		if b.code[i] == 0 || b.lazy && b.ported.q[i].hit {
			continue // no code entry, or a ported number whose block is not read
		}
		var gb [4]byte
		if _, err := m.ReadAt(gb[:], b.code[i]+16); err != nil {
			return errCorruptRecord
		}
		if g := binary.LittleEndian.Uint32(gb[:]); g != 0 && g <= bi.nthou {
			sink ^= m.At(int(bi.thousands(g, tn/1000%10)))
		}
	}
	b.sink = sink
	return nil
}

// decode, stage 4, fills out from what the stages loaded, now in cache.
func (b *batch) decode(out []Record) error {
	s := b.s
	for i, tn := range b.tns {
		r := &out[i]
		*r = Record{Number: tn}
		if !inNANP(tn) {
			continue
		}
		if b.ported.on && !s.portedFromOverlay(tn, &r.Ported) && b.ported.q[i].hit {
			if err := s.portedFrom(b.ported.q[i].w, &r.Ported); err != nil {
				return err
			}
		}
		if !b.lazy || !r.Ported.OK {
			if err := s.readBlock(tn/10000000, tn%10000000, &r.Block); err != nil {
				return err
			}
		}
		if q := &b.messaging.q[i]; q.hit {
			if err := s.messagingFrom(q.w, &r.Messaging); err != nil {
				return err
			}
		}
		if err := s.decodeRest(nil, &b.cnam.q[i], &b.trust.q[i], r); err != nil {
			return err
		}
	}
	return nil
}

// keep is where a batch's touches end up; not inlined, it makes the
// compiler keep the loads.
//
//go:noinline
func keep(byte) {}
