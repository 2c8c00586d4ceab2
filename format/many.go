package format

import "fmt"

// batchSize is how many numbers GetMany moves through each stage together:
// enough independent loads to keep every miss handler of the core busy, few
// enough that the stage state stays in L1.
const batchSize = 32

// GetMany is Get for many numbers at once: out[i] receives tns[i]'s record,
// all from one snapshot. It hides memory latency by issuing the independent
// memory accesses of a batch of numbers together instead of one number's
// dependent accesses at a time, so on tables larger than the CPU caches it
// answers several times as many numbers per second as a loop over Get.
// out must be at least as long as tns; GetMany allocates nothing unless f
// includes FieldCNAM.
func (db *DB) GetMany(tns []uint64, f Fields, out []Record) error {
	if len(out) < len(tns) {
		return fmt.Errorf("format: GetMany: out holds %d records, need %d", len(out), len(tns))
	}
	s := db.snap.Load()
	if s == nil {
		return ErrClosed
	}
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
// whole batch: each stage issues one independent load per number and section
// in a short loop, so that the loads of all the numbers are in flight
// together, and the next stage finds them in cache.
func (s *snapshot) getBatch(tns []uint64, f Fields, out []Record) error {
	var qs [4]batchProbes // PORTED, MESSAGING, CNAM, TRUST; zero: not started
	secs := [4]*numSection{&s.ported, &s.messaging, &s.cnam, &s.trustSec}
	sel := [4]bool{f&FieldPorted != 0, f&FieldMessaging != 0, f&FieldCNAM != 0, f&FieldTrust != 0}
	tns = tns[:min(len(tns), batchSize)]
	out = out[:len(tns)]

	// Stage 1: hash every number and load its pilot bytes. The hashing is
	// done in a loop of its own so that the loading loop is a few
	// instructions per load and many fit in the CPU's window at once.
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
				p.pilot = s.m.At(int(p.off))
			}
		}
	}

	// Stage 2: the block data, while the pilots are on their way. It is
	// small and mostly in cache. With BlockUnlessPorted it waits for the
	// ported records.
	lazy := f&(FieldPorted|BlockUnlessPorted) == FieldPorted|BlockUnlessPorted
	for i, tn := range tns {
		r := &out[i]
		*r = Record{Number: tn}
		if !lazy && tn >= 2000000000 && tn <= 9999999999 {
			if err := s.readBlock(tn/10000000, tn%10000000, &r.Block); err != nil {
				return err
			}
		}
	}

	// Stage 3: locate every record and load its first byte.
	for k, sec := range secs {
		if !sel[k] {
			continue
		}
		q := &qs[k]
		for i := range tns {
			if err := sec.fetch(s.m, &q[i]); err != nil {
				return err
			}
		}
	}

	// Stage 4: decode, from cache.
	for i, tn := range tns {
		if tn < 2000000000 || tn > 9999999999 {
			continue
		}
		r := &out[i]
		if sel[0] && !s.portedFromOverlay(tn, &r.Ported) && qs[0][i].pt != nil {
			if err := s.decodePorted(&qs[0][i], &r.Ported); err != nil {
				return err
			}
		}
		if err := s.decodeRest(&qs[1][i], &qs[2][i], &qs[3][i], r); err != nil {
			return err
		}
	}
	if lazy {
		for i, tn := range tns {
			if r := &out[i]; !r.Ported.OK && tn >= 2000000000 && tn <= 9999999999 {
				if err := s.readBlock(tn/10000000, tn%10000000, &r.Block); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
