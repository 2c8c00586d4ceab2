package format

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"time"

	"github.com/lnpdb/lnpdb/format/internal/atomicfile"
	"github.com/lnpdb/lnpdb/format/internal/vfs"

	"github.com/lnpdb/lnpdb/internal/nanp"
)

// builderFromSnapshot loads a mapped table back into builder state, with
// the given updates in place of the ported records they change, so that the
// builder can write the table anew.
func builderFromSnapshot(ctx context.Context, s *snapshot, updates map[uint64]*overlayEntry) (*builder, error) {
	b := &builder{ctx: ctx, report: &BuildReport{Rows: map[string]int{}}, portedFile: "journal"}
	b.carriers = s.carriers
	b.carrierIdx = s.carrierIdx
	b.rcs = s.rateCenters
	b.lrns = append([]uint64(nil), s.lrnNums...)
	b.lrnIdx = make(map[uint64]uint32, len(b.lrns))
	for i, v := range b.lrns {
		b.lrnIdx[v] = uint32(i)
	}
	b.msgStrs = s.msgStrings
	b.pairs = append([]lrnPair(nil), s.pairRaw...)
	b.pairIdx = make(map[lrnPair]uint32, len(b.pairs))
	for i, p := range b.pairs {
		b.pairIdx[p] = uint32(i)
	}
	b.msgTuples = s.msgTupleRaw
	if err := b.loadNames(s); err != nil {
		return nil, err
	}
	if err := b.loadBlocks(s); err != nil {
		return nil, err
	}
	err := eachRecord(s, &s.ported, func(tn uint64, w window) {
		if _, updated := updates[tn]; !updated {
			b.ported.add(nanp.Number(tn), 0, portedRow{pair: uint32(s.ported.field(w, 0)), act: uint32(s.ported.field(w, 1))})
		}
	})
	if err != nil {
		return nil, err
	}
	for tn, e := range updates {
		if e.u.Action == Delete {
			continue
		}
		ci, ok := b.carrierIdx[e.u.SPID]
		if !ok {
			return nil, fmt.Errorf("%w: pending update for %d names SPID %q, which the table does not have", ErrInvalidUpdate, tn, e.u.SPID)
		}
		b.ported.add(nanp.Number(tn), 0, portedRow{pair: b.pair(b.lrn(nanp.Number(e.u.LRN)), ci), act: uint32(e.u.ActivatedAt)})
	}
	err = eachRecord(s, &s.messaging, func(tn uint64, w window) {
		b.messaging.add(nanp.Number(tn), 0, messagingRow{tuple: uint32(s.messaging.field(w, 0))})
	})
	if err != nil {
		return nil, err
	}
	err = eachRecord(s, &s.cnam, func(tn uint64, w window) {
		b.cnam.add(nanp.Number(tn), 0, cnamRow{name: uint32(s.cnam.field(w, 0))})
	})
	if err != nil {
		return nil, err
	}
	err = eachRecord(s, &s.trustSec, func(tn uint64, w window) {
		f := func(i int) uint32 { return uint32(s.trustSec.field(w, i)) }
		b.maxComplaints = max(b.maxComplaints, f(1))
		b.trust.add(nanp.Number(tn), 0, trustRow{spam: uint8(f(0)), complaints: f(1), first: f(2), last: f(3)})
	})
	return b, err
}

// eachRecord calls fn with every record of a per-number section.
func eachRecord(s *snapshot, sec *numSection, fn func(tn uint64, w window)) error {
	for npa := range partitions {
		pt := &sec.parts[npa]
		for slot := range pt.p.N {
			bit := slot * uint64(sec.layout.width)
			var buf [17]byte
			if _, err := s.m.ReadAt(buf[:], pt.recs+int64(bit/8)); err != nil {
				return corrupt(sec.id, "NPA %03d record %d: %v", npa, slot, err)
			}
			w := loadWindow(&buf, uint(bit%8))
			fn(uint64(npa)*10000000+keyBase+w.field(0, keyBits), w)
		}
	}
	return nil
}

func (b *builder) loadNames(s *snapshot) error {
	h := &s.names
	b.names = make([]string, 0, h.names)
	for c := range h.chunks {
		raw, err := h.frame(s.m, c)
		if err != nil {
			return corrupt(secCNAMNames, "chunk %d: unreadable", c)
		}
		for len(raw) > 0 {
			n := int(raw[0])
			if n == 0 || n >= len(raw) {
				return corrupt(secCNAMNames, "chunk %d: malformed", c)
			}
			b.names = append(b.names, string(raw[1:1+n]))
			raw = raw[1+n:]
		}
	}
	return nil
}

func (b *builder) loadBlocks(s *snapshot) error {
	e := s.dir[secBlocks]
	raw := make([]byte, e.length)
	if _, err := s.m.ReadAt(raw, int64(e.offset)); err != nil {
		return corrupt(secBlocks, "%v", err)
	}
	row := func(p []byte) blockRow {
		return blockRow{carrier: binary.LittleEndian.Uint32(p), rc: binary.LittleEndian.Uint32(p[4:]), lrn: binary.LittleEndian.Uint32(p[8:]), activated: binary.LittleEndian.Uint32(p[12:])}
	}
	b.codes = map[uint32]*codeRows{}
	base := int64(e.offset)
	for npa := range partitions {
		t := s.blocks.npa[npa]
		if t == noCodeTable {
			continue
		}
		for nxx := range 1000 {
			word := raw[s.blocks.indexes-base+int64(t)*codeIndexSize+int64(nxx/64)*indexWordSize:]
			bitmap := binary.LittleEndian.Uint64(word)
			bit := uint64(1) << (nxx % 64)
			if bitmap&bit == 0 {
				continue
			}
			idx := int64(binary.LittleEndian.Uint32(word[8:])) + int64(bits.OnesCount64(bitmap&(bit-1)))
			p := raw[s.blocks.entries-base+idx*codeEntrySize:]
			code := row(p)
			cr := &codeRows{code: code, hasCode: code.carrier != 0}
			if g := binary.LittleEndian.Uint32(p[16:]); g != 0 {
				cr.split = true
				for x := range 10 {
					cr.thousands[x] = row(raw[s.blocks.thou-base+int64(g-1)*thouGroupSize+int64(x)*thouEntrySize:])
				}
			}
			b.codes[uint32(npa*1000+nxx)] = cr
		}
	}
	return nil
}

// writeTable writes the builder's table to a temporary file beside out,
// verifies it and renames it over out (atomicfile); beforeRename, if set,
// may still refuse the rename.
func (b *builder) writeTable(fs vfs.FS, out string, builtAt time.Time, beforeRename func() error) (Counts, error) {
	var counts Counts
	err := atomicfile.Write(fs, out, func(f vfs.File) error {
		_, err := b.write(f, builtAt.Unix())
		return err
	}, atomicfile.Options{
		Check: func(tmp string) error {
			db, err := Open(tmp, WithVerify(), ReadOnly())
			if err != nil {
				return fmt.Errorf("format: the table just written fails verification: %w", err)
			}
			counts = db.Info().Counts
			return db.Close()
		},
		BeforeRename: beforeRename,
	})
	return counts, err
}
