package format

import (
	"encoding/binary"
	"fmt"
	"math/bits"
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

// batchProbes is one section's probes for a batch.
type batchProbes [batchSize]probe

// getBatch is get for up to batchSize numbers, stage by stage across the
// whole batch. Each stage issues one independent load per number (and
// section) in a short loop, so that the loads of all the numbers are in
// flight together, and leaves what it loaded in cache for the next stage:
//
//  1. hash, and load every section's pilot byte and the block index word;
//  2. locate every record and load its first byte; load the code entry;
//  3. read the records and load the dictionary entries they point at; load
//     the thousands-block entry;
//  4. decode, from cache.
//
// Loads issued only to start a cache miss early ("touches") feed sink, so
// that the compiler keeps them.
func (s *snapshot) getBatch(tns []uint64, f Fields, out []Record) error {
	var qs [4]batchProbes     // PORTED, MESSAGING, CNAM, TRUST; zero: not started
	var code [batchSize]int64 // the number's code entry offset; 0: none
	secs := [4]*numSection{&s.ported, &s.messaging, &s.cnam, &s.trustSec}
	sel := [4]bool{f&FieldPorted != 0, f&FieldMessaging != 0, f&FieldCNAM != 0, f&FieldTrust != 0}
	tns = tns[:min(len(tns), batchSize)]
	out = out[:len(tns)]
	m, bi := s.m, &s.blocks
	var sink byte

	// Stage 1. The hashing is a loop of its own so that the loading loop is
	// a few instructions per load and many loads fit in the CPU's window.
	for k, sec := range secs {
		if !sel[k] {
			continue
		}
		q := &qs[k]
		for i, tn := range tns {
			if tn >= 2000000000 && tn <= 9999999999 {
				sec.aim(tn/10000000, tn%10000000, &q[i])
			}
		}
		for i := range tns {
			if p := &q[i]; p.pt != nil {
				p.pilot = m.At(int(p.off))
			}
		}
	}
	for i, tn := range tns {
		if tn < 2000000000 || tn > 9999999999 {
			continue
		}
		if t := bi.npa[tn/10000000]; t != noCodeTable {
			code[i] = bi.indexes + int64(t)*codeIndexSize + int64(tn%10000000/10000/64)*indexWordSize
			sink ^= m.At(int(code[i]))
		}
	}

	// Stage 2.
	for k, sec := range secs {
		if !sel[k] {
			continue
		}
		q := &qs[k]
		for i := range tns {
			if p := &q[i]; p.pt != nil {
				if err := sec.locate(m, p); err != nil {
					return err
				}
			}
		}
		for i := range tns {
			if p := &q[i]; p.pt != nil {
				p.first = m.At(int(p.off))
			}
		}
	}
	for i, tn := range tns {
		if code[i] == 0 {
			continue
		}
		var wb [indexWordSize]byte
		if _, err := m.ReadAt(wb[:], code[i]); err != nil {
			return errCorruptRecord
		}
		bitmap := binary.LittleEndian.Uint64(wb[:])
		bit := uint64(1) << (tn % 10000000 / 10000 % 64)
		idx := binary.LittleEndian.Uint32(wb[8:]) + uint32(bits.OnesCount64(bitmap&(bit-1)))
		code[i] = 0
		if bitmap&bit != 0 && idx < bi.nentry {
			code[i] = bi.entries + int64(idx)*codeEntrySize
			sink ^= m.At(int(code[i]) + 16)
		}
	}

	// Stage 3.
	for k, sec := range secs[:2] {
		if !sel[k] {
			continue
		}
		q := &qs[k]
		for i := range tns {
			p := &q[i]
			if p.pt == nil {
				continue
			}
			w, ok, err := sec.read(m, p)
			if err != nil {
				return err
			}
			p.w, p.hit = w, ok
			if !ok {
				continue
			}
			if k == 0 {
				if pi := sec.field(w, 0); pi < uint64(len(s.pairs)) {
					sink ^= byte(s.pairs[pi].ActivatedAt)
				}
			} else if ti := sec.field(w, 0); ti < uint64(len(s.msgTuples)) {
				sink ^= byte(len(s.msgTuples[ti].Provider))
			}
		}
	}
	lazy := f&(FieldPorted|BlockUnlessPorted) == FieldPorted|BlockUnlessPorted
	for i, tn := range tns {
		if code[i] == 0 || lazy && qs[0][i].hit {
			continue // no code row, or a ported number whose block is not read
		}
		var gb [4]byte
		if _, err := m.ReadAt(gb[:], code[i]+16); err != nil {
			return errCorruptRecord
		}
		if g := binary.LittleEndian.Uint32(gb[:]); g != 0 && g <= bi.nthou {
			sink ^= m.At(int(bi.thou + int64(g-1)*thouGroupSize + int64(tn/1000%10)*thouEntrySize))
		}
	}
	keep(sink)

	// Stage 4.
	for i, tn := range tns {
		r := &out[i]
		*r = Record{Number: tn}
		if tn < 2000000000 || tn > 9999999999 {
			continue
		}
		npa, rem := tn/10000000, tn%10000000
		if sel[0] && !s.portedFromOverlay(tn, &r.Ported) && qs[0][i].hit {
			if err := s.portedFrom(qs[0][i].w, &r.Ported); err != nil {
				return err
			}
		}
		if !lazy || !r.Ported.OK {
			if err := s.readBlock(npa, rem, &r.Block); err != nil {
				return err
			}
		}
		if q := &qs[1][i]; q.hit {
			if err := s.messagingFrom(q.w, &r.Messaging); err != nil {
				return err
			}
		}
		if err := s.decodeRest(nil, &qs[2][i], &qs[3][i], r); err != nil {
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
