package format

import (
	"encoding/binary"
	"fmt"

	"github.com/lnpdb/lnpdb/internal/mphf"
	"golang.org/x/exp/mmap"
)

// A per-number section (PORTED, MESSAGING, CNAM, TRUST) holds fixed-width
// bit-packed records keyed by a minimal perfect hash, one hash per NPA. Each
// record starts with the number's remainder within its NPA (NXX*10000+line,
// less 2,000,000, in 23 bits), so that a number absent from the set, which
// the hash maps to some slot anyway, is recognised as absent: answers are
// exact.

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

// probe is one number's lookup in a per-number section, taken in stages so
// that a caller can start the memory accesses of several sections (or
// several numbers) before it waits for any of them: aim hashes the number,
// start also loads the pilot byte, fetch finds the record and starts loading it, read finishes it.
type probe struct {
	pt    *part // nil: the number's NPA holds no keys, so the number is absent
	h     uint64
	rem   uint64
	off   int64 // the pilot byte's offset once aimed, the record's once fetched
	shift uint  // the record's first bit within that byte
	pilot byte
	first byte // the record's first byte, loaded by fetch
	hit   bool // a batch's read found the number; its record is w
	w     window
}

// aim hashes the number npa-rem and sets q.off to its pilot byte's offset,
// which loadNumSection bounds-checked; q.pt is nil when the NPA holds no
// keys.
func (s *numSection) aim(npa, rem uint64, q *probe) {
	pt := &s.parts[npa]
	if pt.p.N == 0 {
		q.pt = nil
		return
	}
	h := pt.p.Hash(rem)
	q.pt, q.h, q.rem = pt, h, rem
	q.off = pt.pilots + int64(pt.p.Bucket(h))
}

// start aims q at the number npa-rem and loads its pilot byte.
func (s *numSection) start(m *mmap.ReaderAt, npa, rem uint64, q *probe) {
	s.aim(npa, rem, q)
	if q.pt != nil {
		q.pilot = m.At(int(q.off))
	}
}

// fetch locates the record a started probe points at and loads its first
// byte, which starts the record's cache miss; read finishes the record. A
// probe that was not started (pt nil) is left alone.
func (s *numSection) fetch(m *mmap.ReaderAt, q *probe) error {
	if q.pt == nil {
		return nil
	}
	if err := s.locate(m, q); err != nil {
		return err
	}
	q.first = m.At(int(q.off))
	return nil
}

// locate sets a started probe's off and shift to its record's place,
// remapping slots past N.
func (s *numSection) locate(m *mmap.ReaderAt, q *probe) error {
	pt := q.pt
	slot := pt.p.Slot(q.h, q.pilot)
	if slot >= pt.p.N {
		var rb [4]byte
		if _, err := m.ReadAt(rb[:], pt.remap+int64(slot-pt.p.N)*4); err != nil {
			return errCorruptRecord
		}
		slot = uint64(binary.LittleEndian.Uint32(rb[:]))
		if slot >= pt.p.N {
			return errCorruptRecord
		}
	}
	bit := slot * uint64(s.layout.width)
	q.off, q.shift = pt.recs+int64(bit/8), uint(bit%8)
	return nil
}

// read returns a fetched probe's record and whether it is the number's (its
// key matches).
func (s *numSection) read(m *mmap.ReaderAt, q *probe) (window, bool, error) {
	var buf [17]byte
	buf[0] = q.first
	if _, err := m.ReadAt(buf[1:], q.off+1); err != nil {
		return window{}, false, errCorruptRecord
	}
	w := loadWindow(&buf, q.shift)
	if w.lo&(1<<keyBits-1)+keyBase != q.rem {
		return window{}, false, nil
	}
	return w, true, nil
}

// field returns payload field i of a record window.
func (s *numSection) field(w window, i int) uint64 {
	return w.field(s.layout.pos[i], uint(s.layout.widths[i]))
}
