package format

import (
	"encoding/binary"
	"fmt"
	"github.com/lnpdb/lnpdb/internal/nanp"
)

// writerFromSnapshot loads a mapped table back into a Writer, with the
// given updates in place of the ported records they change, so that the
// table can be written anew.
func writerFromSnapshot(s *snapshot, updates map[uint64]*overlayEntry) (*Writer, error) {
	w := NewWriter()
	w.carriers = s.carriers
	w.carrierIdx = s.carrierIdx
	w.rcs = s.rateCenters
	w.lrns.reset(append([]uint64(nil), s.lrnNums...))
	w.msgStrs.reset(s.msgStrings)
	w.pairs.reset(append([]lrnPair(nil), s.pairRaw...))
	w.msgTuples.reset(s.msgTupleRaw)
	names, err := s.allNames()
	if err != nil {
		return nil, err
	}
	w.names.list = names // records refer to names by index; none is added
	if err := s.eachCode(func(key uint32, cr *codeRows) { w.codes[key] = cr }); err != nil {
		return nil, err
	}
	err = s.eachRecord(&s.ported, func(tn uint64, r window) {
		if _, updated := updates[tn]; !updated {
			w.ported.add(nanp.Number(tn), 0, portedRow{pair: uint32(s.ported.field(r, 0)), act: uint32(s.ported.field(r, 1))})
		}
	})
	if err != nil {
		return nil, err
	}
	for tn, e := range updates {
		if e.u.Action == Delete {
			continue
		}
		ci, ok := w.carrierIdx[e.u.SPID]
		if !ok {
			return nil, fmt.Errorf("%w: pending update for %d names SPID %q, which the table does not have", ErrInvalidUpdate, tn, e.u.SPID)
		}
		if err := w.AddPorted(tn, 0, e.u.LRN, ci, e.u.ActivatedAt); err != nil {
			return nil, err
		}
	}
	err = s.eachRecord(&s.messaging, func(tn uint64, r window) {
		w.messaging.add(nanp.Number(tn), 0, messagingRow{tuple: uint32(s.messaging.field(r, 0))})
	})
	if err != nil {
		return nil, err
	}
	err = s.eachRecord(&s.cnam, func(tn uint64, r window) {
		w.cnam.add(nanp.Number(tn), 0, cnamRow{name: uint32(s.cnam.field(r, 0))})
	})
	if err != nil {
		return nil, err
	}
	err = s.eachRecord(&s.trustSec, func(tn uint64, r window) {
		f := func(i int) uint32 { return uint32(s.trustSec.field(r, i)) }
		w.maxComplaints = max(w.maxComplaints, f(1))
		w.trust.add(nanp.Number(tn), 0, trustRow{spam: uint8(f(0)), complaints: f(1), first: f(2), last: f(3)})
	})
	return w, err
}

// eachRecord calls fn with every record of a per-number section and its
// number.
func (s *snapshot) eachRecord(sec *numSection, fn func(tn uint64, w window)) error {
	var buf []byte
	for npa := range partitions {
		if sec.parts[npa].p.N == 0 {
			continue
		}
		var err error
		buf, err = s.partitionRecords(sec, npa, buf, func(_, rem uint64, w window) error {
			fn(uint64(npa)*10000000+rem, w)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// partitionRecords reads partition npa's records in one piece into buf
// (grown as needed, and returned for reuse) and calls fn with each record's
// slot, stored key (the number's remainder within the NPA) and window, in
// slot order, until fn fails. It is the one loop over a section's records.
func (s *snapshot) partitionRecords(sec *numSection, npa int, buf []byte, fn func(slot, rem uint64, w window) error) ([]byte, error) {
	pt := &sec.parts[npa]
	width := uint64(sec.layout.width)
	n := int((pt.p.N*width+7)/8) + recordSlack
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := s.m.ReadAt(buf, pt.recs); err != nil {
		return buf, corrupt(sec.id, "NPA %03d records: %v", npa, err)
	}
	for slot := range pt.p.N {
		bit := slot * width
		w := loadWindow((*[17]byte)(buf[bit/8:]), uint(bit%8))
		if err := fn(slot, w.field(0, keyBits)+keyBase, w); err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// allNames decodes every caller name of the CNAMNAME section, in order.
func (s *snapshot) allNames() ([]string, error) {
	h := &s.names
	names := make([]string, 0, h.names)
	for c := range h.chunks {
		raw, err := h.frame(s.m, c)
		if err != nil {
			return nil, corrupt(secCNAMNames, "chunk %d: unreadable", c)
		}
		for len(raw) > 0 {
			n := int(raw[0])
			if n == 0 || n >= len(raw) {
				return nil, corrupt(secCNAMNames, "chunk %d: malformed", c)
			}
			names = append(names, string(raw[1:1+n]))
			raw = raw[1+n:]
		}
	}
	return names, nil
}

// eachCode calls fn with every code that has an entry in BLOCKS, keyed
// npa*1000+nxx, with its rows.
func (s *snapshot) eachCode(fn func(key uint32, cr *codeRows)) error {
	e := s.dir[secBlocks]
	raw := make([]byte, e.length)
	if _, err := s.m.ReadAt(raw, int64(e.offset)); err != nil {
		return corrupt(secBlocks, "%v", err)
	}
	base := int64(e.offset)
	for npa := range partitions {
		t := s.blocks.npa[npa]
		if t == noCodeTable {
			continue
		}
		for nxx := range uint64(1000) {
			idx, ok := entryIndex(raw[s.blocks.word(t, nxx)-base:], nxx)
			if !ok {
				continue
			}
			p := raw[s.blocks.entry(idx)-base:]
			code := decodeBlockRow(p)
			cr := &codeRows{code: code, hasCode: code.carrier != 0}
			if g := binary.LittleEndian.Uint32(p[16:]); g != 0 {
				cr.split = true
				for x := range uint64(10) {
					cr.thousands[x] = decodeBlockRow(raw[s.blocks.thousands(g, x)-base:])
				}
			}
			fn(uint32(npa*1000)+uint32(nxx), cr)
		}
	}
	return nil
}
