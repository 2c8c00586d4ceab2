package format

import "fmt"

// batchSize is how many numbers GetMany moves through each stage together:
// enough independent loads to keep the memory system busy, few enough that
// the stage state stays in registers and L1.
const batchSize = 16

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

func (s *snapshot) getBatch(tns []uint64, f Fields, out []Record) error {
	var slots [batchSize]uint64
	var parts [batchSize]*part
	if f&FieldPorted != 0 {
		// Stage 1: every number's pilot. The loads are independent of each
		// other, so their cache misses overlap.
		for i, tn := range tns {
			parts[i] = nil
			if tn < 2000000000 || tn > 9999999999 {
				continue
			}
			pt := &s.ported.parts[tn/10000000]
			if pt.p.N == 0 {
				continue
			}
			h := pt.p.Hash(tn % 10000000)
			slots[i] = pt.p.Slot(h, s.m.At(int(pt.pilots+int64(pt.p.Bucket(h)))))
			parts[i] = pt
		}
		// Stage 2: every number's record, again independent loads.
		for i, tn := range tns {
			out[i] = Record{Number: tn}
			if s.ov != nil && tn >= 2000000000 && tn <= 9999999999 && s.portedFromOverlay(tn, &out[i].Ported) {
				continue
			}
			if parts[i] == nil {
				continue
			}
			w, ok, err := s.ported.record(s.m, parts[i], tn%10000000, slots[i])
			if err != nil {
				return err
			}
			if ok {
				if err := s.decodePorted(w, &out[i].Ported); err != nil {
					return err
				}
			}
		}
	} else {
		for i, tn := range tns {
			out[i] = Record{Number: tn}
		}
	}
	// Stage 3: block data and the other sections.
	for i, tn := range tns {
		if err := s.getRest(tn, f, &out[i]); err != nil {
			return err
		}
	}
	return nil
}
