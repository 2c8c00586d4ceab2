package format

import (
	"encoding/binary"
	"fmt"

	"github.com/lnpdb/lnpdb/internal/mphf"
	"golang.org/x/exp/mmap"
)

// A per-number section (PORTED, MESSAGING, CNAM, TRUST) holds fixed-width
// bit-packed records keyed by a minimal perfect hash, one hash per NPA. Each
// record starts with the number's 24-bit remainder within its NPA
// (NXX*10000+line), so that a number absent from the set, which the hash maps
// to some slot anyway, is recognised as absent: answers are exact.

const maxFields = 8

// numLayout is the record layout of a per-number section.
type numLayout struct {
	widths [maxFields]uint8 // payload field widths in bits, after the key
	pos    [maxFields]uint  // bit position of each payload field
	width  uint             // record width in bits, key included
}

func newLayout(widths ...uint) (numLayout, error) {
	var l numLayout
	if len(widths) > maxFields {
		return l, fmt.Errorf("%d fields, at most %d", len(widths), maxFields)
	}
	l.width = keyBits
	for i, w := range widths {
		if w > 64 {
			return l, fmt.Errorf("field %d is %d bits wide, at most 64", i, w)
		}
		l.widths[i] = uint8(w)
		l.pos[i] = l.width
		l.width += w
	}
	if l.width > 128 {
		return l, fmt.Errorf("record is %d bits wide, at most 128", l.width)
	}
	return l, nil
}

func (l *numLayout) recordBytes(n uint64) uint64 { return (n*uint64(l.width)+7)/8 + recordSlack }

// part is one NPA's partition, with absolute file offsets.
type part struct {
	p      mphf.Params
	pilots int64
	remap  int64
	recs   int64
}

type numSection struct {
	id     string
	keys   uint64
	layout numLayout
	parts  [partitions]part
}

// loadNumSection parses and bounds-checks a per-number section's header and
// partition table; after it succeeds every read a lookup makes is inside the
// section.
func loadNumSection(m *mmap.ReaderAt, e dirEntry, s *numSection) error {
	s.id = e.id
	if e.encoding != encRaw {
		return corrupt(e.id, "encoding %d, want raw", e.encoding)
	}
	tableEnd := uint64(numHeaderSize + partitions*partEntrySize)
	if e.length < tableEnd {
		return corrupt(e.id, "%d bytes, shorter than its partition table", e.length)
	}
	hdr := make([]byte, tableEnd)
	if _, err := m.ReadAt(hdr, int64(e.offset)); err != nil {
		return corrupt(e.id, "reading header: %v", err)
	}
	s.keys = binary.LittleEndian.Uint64(hdr)
	var widths []uint
	for i := range maxFields {
		if w := hdr[8+i]; w != 0 {
			if len(widths) != i {
				return corrupt(e.id, "field widths have a gap")
			}
			widths = append(widths, uint(w))
		}
	}
	l, err := newLayout(widths...)
	if err != nil {
		return corrupt(e.id, "%v", err)
	}
	s.layout = l
	var total uint64
	for npa := range partitions {
		pe := hdr[numHeaderSize+npa*partEntrySize:]
		hashOff := binary.LittleEndian.Uint64(pe)
		recOff := binary.LittleEndian.Uint64(pe[8:])
		n := uint64(binary.LittleEndian.Uint32(pe[16:]))
		if n == 0 {
			if hashOff != 0 || recOff != 0 {
				return corrupt(e.id, "NPA %03d: empty partition with offsets", npa)
			}
			continue
		}
		if npa < 200 {
			return corrupt(e.id, "NPA %03d: keys under an invalid NPA", npa)
		}
		if hashOff < tableEnd || hashOff > e.length-mphf.HeaderSize {
			return corrupt(e.id, "NPA %03d: hash offset %d out of range", npa, hashOff)
		}
		var mh [mphf.HeaderSize]byte
		if _, err := m.ReadAt(mh[:], int64(e.offset+hashOff)); err != nil {
			return corrupt(e.id, "NPA %03d: %v", npa, err)
		}
		p, err := mphf.ParseHeader(mh[:])
		if err != nil {
			return corrupt(e.id, "NPA %03d: %v", npa, err)
		}
		if p.N != n {
			return corrupt(e.id, "NPA %03d: hash holds %d keys, partition %d", npa, p.N, n)
		}
		if hashOff+uint64(p.Size()) > recOff {
			return corrupt(e.id, "NPA %03d: hash overlaps records", npa)
		}
		if recOff > e.length || l.recordBytes(n) > e.length-recOff {
			return corrupt(e.id, "NPA %03d: records run past the section", npa)
		}
		base := int64(e.offset + hashOff)
		s.parts[npa] = part{p: p, pilots: base + int64(p.PilotsOffset()), remap: base + int64(p.RemapOffset()), recs: int64(e.offset + recOff)}
		total += n
	}
	if total != s.keys {
		return corrupt(e.id, "partitions hold %d keys, header says %d", total, s.keys)
	}
	return nil
}

// find returns the record window for the number npa-rem and whether the
// section holds it. It allocates nothing.
func (s *numSection) find(m *mmap.ReaderAt, npa, rem uint64) (window, bool, error) {
	pt := &s.parts[npa]
	if pt.p.N == 0 {
		return window{}, false, nil
	}
	h := pt.p.Hash(rem)
	pilot := m.At(int(pt.pilots + int64(pt.p.Bucket(h))))
	return s.record(m, pt, rem, pt.p.Slot(h, pilot))
}

// record reads the record at slot (remapping slots past N) and checks its key.
func (s *numSection) record(m *mmap.ReaderAt, pt *part, rem, slot uint64) (window, bool, error) {
	if slot >= pt.p.N {
		var rb [4]byte
		if _, err := m.ReadAt(rb[:], pt.remap+int64(slot-pt.p.N)*4); err != nil {
			return window{}, false, errCorruptRecord
		}
		slot = uint64(binary.LittleEndian.Uint32(rb[:]))
		if slot >= pt.p.N {
			return window{}, false, errCorruptRecord
		}
	}
	bit := slot * uint64(s.layout.width)
	var buf [17]byte
	if _, err := m.ReadAt(buf[:], pt.recs+int64(bit/8)); err != nil {
		return window{}, false, errCorruptRecord
	}
	w := loadWindow(&buf, uint(bit%8))
	if w.field(0, keyBits) != rem {
		return window{}, false, nil
	}
	return w, true, nil
}

// field returns payload field i of a record window.
func (s *numSection) field(w window, i int) uint64 {
	return w.field(s.layout.pos[i], uint(s.layout.widths[i]))
}
