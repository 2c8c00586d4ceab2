package format

import (
	"fmt"
	"maps"
	"slices"
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
	for i := range numSpecs {
		dst := numSpecs[i].rows(w)
		err := s.eachRecord(&s.num[i], func(tn uint64, v *fieldValues) {
			if _, updated := updates[tn]; i != numPorted || !updated {
				dst.addValues(tn, v)
			}
		})
		if err != nil {
			return nil, err
		}
		if i != numPorted {
			continue
		}
		// In the order the updates were applied, not the map's: a route
		// or LRN an update adds takes the next dictionary index, and the
		// file's bytes must not depend on the order of a map.
		es := slices.Collect(maps.Values(updates))
		sortEntries(es)
		for _, e := range es {
			tn := e.u.TN
			if e.u.Action == Delete {
				continue
			}
			ci, ok := w.carrierIdx[e.u.SPID]
			if !ok {
				return nil, fmt.Errorf("%w: pending update for %d names SPID %q, which the table does not have", ErrInvalidUpdate, tn, e.u.SPID)
			}
			if err := w.AddPorted(tn, 0, e.u.LRN, ci, e.u.ActivatedAt, e.u.SVType); err != nil {
				return nil, err
			}
		}
	}
	return w, nil
}

// eachRecord calls fn with every record of a per-number section: its
// number and its fields.
func (s *snapshot) eachRecord(sec *numSection, fn func(tn uint64, v *fieldValues)) error {
	var buf []byte
	for npa := range partitions {
		if sec.parts[npa].n == 0 {
			continue
		}
		var err error
		if buf, err = s.partBytes(sec, npa, buf); err != nil {
			return err
		}
		err = sec.eachEntry(npa, buf, func(_, rem, _ uint64, w window) error {
			var v fieldValues
			sec.fields(w, &v)
			fn(uint64(npa)*10000000+rem, &v)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
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
	return s.eachCodeEntry(func(npa, nxx uint64, code *codeEntry, group []thouEntry) error {
		row := decodeBlockRow(code[:])
		cr := &codeRows{code: row, hasCode: row.carrier != 0, split: group != nil}
		for x := range group {
			cr.thousands[x] = decodeBlockRow(group[x][:])
		}
		fn(uint32(npa*1000+nxx), cr)
		return nil
	})
}
