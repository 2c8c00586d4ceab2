package format

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// The per-number sections, described once. Each row of numSpecs says
// everything the writer, the reader, the batch path, Verify and compaction
// need to know of one section: its id, its Fields bit (1 << its index),
// its record's fields, how a record becomes part of a Record, what its
// fields must point at, and which of the Writer's collections holds its
// rows. A further section is a row here, its Record field and its Writer
// collection.

const maxFields = 8

// fieldValues are a record's field values, decoded.
type fieldValues [maxFields]uint64

// fieldSpec describes one field of a per-number record.
type fieldSpec struct {
	name string
	// time marks unix seconds with 0 for unknown: stored as the offset
	// from the section's earliest known time plus one, so that a table of
	// recent activations spends fewer than 32 bits on each.
	time bool
}

type numSpec struct {
	id     string
	field  Fields
	fields []fieldSpec
	// How a record becomes part of a Record is decodeSection.s case.
	// check reports whether a record's fields point inside the table's
	// dictionaries.
	check func(s *snapshot, v *fieldValues) bool
	// rows is the Writer's collection of the section's rows.
	rows func(w *Writer) rowSource
}

const (
	numPorted = iota
	numMessaging
	numCNAM
	numTrust
	numSectionCount
)

var numSpecs = [numSectionCount]numSpec{
	numPorted: {
		id: secPorted, field: FieldPorted,
		fields: []fieldSpec{{name: "pair"}, {name: "activated", time: true}},
		check:  func(s *snapshot, v *fieldValues) bool { return v[0] < uint64(len(s.pairs)) && v[1] <= 1<<32-1 },
		rows:   func(w *Writer) rowSource { return &w.ported },
	},
	numMessaging: {
		id: secMessaging, field: FieldMessaging,
		fields: []fieldSpec{{name: "tuple"}},
		check:  func(s *snapshot, v *fieldValues) bool { return v[0] < uint64(len(s.msgTuples)) },
		rows:   func(w *Writer) rowSource { return &w.messaging },
	},
	numCNAM: {
		id: secCNAM, field: FieldCNAM,
		fields: []fieldSpec{{name: "name"}},
		check:  func(s *snapshot, v *fieldValues) bool { return v[0] < s.names.names },
		rows:   func(w *Writer) rowSource { return &w.cnam },
	},
	numTrust: {
		id: secTrust, field: FieldTrust,
		fields: []fieldSpec{{name: "spam type"}, {name: "complaints"}, {name: "first reported", time: true}, {name: "last reported", time: true}},
		check: func(s *snapshot, v *fieldValues) bool {
			return v[0] < uint64(len(spamTypes)) && v[1] <= 1<<32-1 && v[2] <= 1<<32-1 && v[3] <= 1<<32-1
		},
		rows: func(w *Writer) rowSource { return &w.trust },
	},
}

// rowSource is a Writer's collection of one section's rows, whatever the
// row type (partitioned[T] is the one implementation).
type rowSource interface {
	finishSpill() error
	has(npa int) bool
	// ranges are the smallest nonzero and the largest value of each
	// field over the rows added.
	ranges() (lo, hi fieldValues)
	// build takes partition npa's rows and packs its table.
	build(npa int, l *numLayout) builtPart
	// addValues adds a row given by its field values (compaction).
	addValues(tn uint64, v *fieldValues)
}

// numLayout is the layout of a per-number section's record fields, which
// follow an entry's key bits.
type numLayout struct {
	count   int
	widths  [maxFields]uint8
	pos     [maxFields]uint   // bit position of each field from the first
	bases   [maxFields]uint64 // 0, or a time field's earliest value
	payload uint              // bits of all fields
	// What a lookup's field reads use, worked out once: each field's
	// mask, all ones for a field that runs from the window's low word
	// into its high word (else 0), and what a value other than 0 has
	// added (a time field's base less one).
	masks [maxFields]uint64
	spans [maxFields]uint64
	adds  [maxFields]uint64
}

// newLayout checks field widths and bases and computes positions.
func newLayout(widths []uint, bases []uint64) (numLayout, error) {
	var l numLayout
	if len(widths) > maxFields {
		return l, fmt.Errorf("%d fields, at most %d", len(widths), maxFields)
	}
	for i, w := range widths {
		if w == 0 || w > 64 {
			return l, fmt.Errorf("field %d is %d bits wide, want 1 to 64", i, w)
		}
		l.widths[i] = uint8(w)
		l.pos[i] = l.payload
		l.masks[i] = ^uint64(0) >> (64 - w)
		if l.payload < 64 && l.payload+w > 64 {
			l.spans[i] = ^uint64(0)
		}
		if bases[i] != 0 {
			l.adds[i] = bases[i] - 1
		}
		l.bases[i] = bases[i]
		l.payload += w
	}
	l.count = len(widths)
	if l.payload > 128-7 {
		return l, fmt.Errorf("record fields are %d bits wide, at most %d", l.payload, 128-7)
	}
	return l, nil
}

// store is the stored form of value v of field f.
func (l *numLayout) store(f int, v uint64) uint64 {
	if b := l.bases[f]; b != 0 && v != 0 {
		return v - b + 1
	}
	return v
}

// layoutFor sizes each field of spec to the values the rows hold.
func layoutFor(spec *numSpec, lo, hi fieldValues) (numLayout, error) {
	widths := make([]uint, len(spec.fields))
	bases := make([]uint64, len(spec.fields))
	for i, f := range spec.fields {
		top := hi[i]
		if f.time && lo[i] != 0 {
			bases[i] = lo[i]
			top = hi[i] - lo[i] + 1
		}
		widths[i] = uint(max(1, bits.Len64(top)))
	}
	return newLayout(widths, bases)
}

// numSection is a per-number section as a reader sees it.
type numSection struct {
	id     string
	keys   uint64
	layout numLayout
	parts  [partitions]part
	// area and buckets locate the bucket array, which holds every
	// partition's buckets in NPA order, from the section's start.
	area, buckets uint64
}

// Section header and partition table sizes.
const (
	numHeaderSize = 64
	partEntrySize = 24
	numTableEnd   = numHeaderSize + partitions*partEntrySize
)

// loadNumSection parses and bounds-checks a per-number section's header and
// partition table; after it succeeds every read a lookup makes is inside the
// section.
func loadNumSection(m *region, e dirEntry, spec *numSpec, s *numSection) error {
	s.id = e.id
	if e.encoding != encRaw {
		return corrupt(e.id, "encoding %d, want raw", e.encoding)
	}
	if e.length < numTableEnd+bucketSlack {
		return corrupt(e.id, "%d bytes, shorter than its partition table", e.length)
	}
	hdr := make([]byte, numTableEnd)
	if _, err := m.ReadAt(hdr, int64(e.offset)); err != nil {
		return corrupt(e.id, "reading header: %v", err)
	}
	s.keys = binary.LittleEndian.Uint64(hdr)
	var widths []uint
	var bases []uint64
	for i := range maxFields {
		w := hdr[8+i]
		if w == 0 {
			for _, z := range hdr[8+i : 16] {
				if z != 0 {
					return corrupt(e.id, "field widths have a gap")
				}
			}
			break
		}
		widths = append(widths, uint(w))
		bases = append(bases, uint64(binary.LittleEndian.Uint32(hdr[32+4*i:])))
	}
	if len(widths) != len(spec.fields) {
		return corrupt(e.id, "%d record fields, want %d", len(widths), len(spec.fields))
	}
	for i := len(widths); i < maxFields; i++ {
		if binary.LittleEndian.Uint32(hdr[32+4*i:]) != 0 {
			return corrupt(e.id, "a base for a field that does not exist")
		}
	}
	for i, f := range spec.fields {
		if bases[i] != 0 && !f.time {
			return corrupt(e.id, "field %d has a base but is not a time", i)
		}
	}
	l, err := newLayout(widths, bases)
	if err != nil {
		return corrupt(e.id, "%v", err)
	}
	s.layout = l
	s.area = binary.LittleEndian.Uint64(hdr[16:])
	s.buckets = binary.LittleEndian.Uint64(hdr[24:])
	if s.area < numTableEnd || s.area-numTableEnd >= bucketBytes || (e.offset+s.area)%bucketBytes != 0 ||
		s.buckets > (e.length-s.area)/bucketBytes || s.area+s.buckets*bucketBytes+bucketSlack != e.length {
		return corrupt(e.id, "bucket array [%d, +%d buckets) does not fill the section's %d bytes", s.area, s.buckets, e.length)
	}
	next := s.area // partitions' buckets follow each other in NPA order
	var total uint64
	for npa := range partitions {
		pe := hdr[numHeaderSize+npa*partEntrySize:]
		off := binary.LittleEndian.Uint64(pe)
		n := uint64(binary.LittleEndian.Uint32(pe[8:]))
		nb := uint64(binary.LittleEndian.Uint32(pe[12:]))
		nphys := uint64(binary.LittleEndian.Uint32(pe[16:]))
		dbits := uint(pe[20])
		if pe[21]|pe[22]|pe[23] != 0 {
			return corrupt(e.id, "NPA %03d: reserved bytes are not zero", npa)
		}
		if n == 0 {
			if off != 0 || nb != 0 || nphys != 0 || dbits != 0 {
				return corrupt(e.id, "NPA %03d: empty partition with a table", npa)
			}
			continue
		}
		if npa < 200 {
			return corrupt(e.id, "NPA %03d: keys under an invalid NPA", npa)
		}
		if off != next || nb == 0 || nphys < nb || dbits > maxDispBits || nphys > s.buckets-(off-s.area)/bucketBytes {
			return corrupt(e.id, "NPA %03d: table of %d/%d buckets at %d does not fit", npa, nb, nphys, off)
		}
		pt, ok := partLayout(nb, dbits, l.payload)
		if !ok || n > nphys*pt.slots {
			return corrupt(e.id, "NPA %03d: %d keys do not fit %d buckets", npa, n, nphys)
		}
		pt.n, pt.nphys = n, nphys
		pt.place(int64(e.offset + off))
		s.parts[npa] = pt
		next = off + nphys*bucketBytes
		total += n
	}
	if total != s.keys {
		return corrupt(e.id, "partitions hold %d keys, header says %d", total, s.keys)
	}
	if next != s.area+s.buckets*bucketBytes {
		return corrupt(e.id, "partitions hold %d bytes of buckets, header says %d", next-s.area, s.buckets*bucketBytes)
	}
	return nil
}

// eachEntry calls fn with every entry of partition npa of sec, in slot
// order: its bucket, its key's remainder within the NPA, its home bucket
// and its fields' window. b is the partition's buckets and the slack after
// them. It is the one loop over a section's stored entries.
func (sec *numSection) eachEntry(npa int, b []byte, fn func(bucket, rem, home uint64, w window) error) error {
	pt := &sec.parts[npa]
	for bk := range pt.nphys {
		bb := b[bk*bucketBytes:]
		cnt := uint64(bb[0] & slotMask)
		if cnt > pt.slots {
			return corrupt(sec.id, "NPA %03d bucket %d: %d entries, room for %d", npa, bk, cnt, pt.slots)
		}
		for i := range cnt {
			bit := pt.entryBit(i)
			kp := uint64(bb[1+i])
			if pt.hbits > 0 {
				kp |= loadWindow((*[17]byte)(bb[bit/8:]), bit%8).field(0, pt.hbits) << tagBits
			}
			if kp>>pt.kbits != 0 {
				// A tag wider than the key part: no lookup computes it.
				return corrupt(sec.id, "NPA %03d bucket %d: slot %d's tag has bits past the key", npa, bk, i)
			}
			f, disp := kp&(1<<pt.rbits-1), kp>>pt.rbits
			if disp > bk {
				return corrupt(sec.id, "NPA %03d bucket %d: an entry from before the first bucket", npa, bk)
			}
			home := bk - disp
			px, ok := pt.keyOf(home, f)
			if home >= pt.nb || !ok {
				return corrupt(sec.id, "NPA %03d bucket %d: an entry whose key is outside its home bucket", npa, bk)
			}
			x := unpermute(px)
			if x >= 10000000-keyBase {
				return corrupt(sec.id, "NPA %03d bucket %d: key %d is no line number", npa, bk, x)
			}
			bit += pt.hbits
			if err := fn(bk, x+keyBase, home, loadWindow((*[17]byte)(bb[bit/8:]), bit%8)); err != nil {
				return err
			}
		}
	}
	return nil
}

// partBytes reads partition npa's buckets and the slack after them into buf
// (grown as needed and returned for reuse).
func (s *snapshot) partBytes(sec *numSection, npa int, buf []byte) ([]byte, error) {
	pt := &sec.parts[npa]
	n := int(pt.nphys*bucketBytes) + bucketSlack
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := s.m.ReadAt(buf, pt.base); err != nil {
		return buf, corrupt(sec.id, "NPA %03d buckets: %v", npa, err)
	}
	return buf, nil
}

// decodeSection fills r's part of section i from a record's fields. It is
// a switch rather than a function in numSpecs because a call through a
// function value would make v and r escape to the heap: lookups allocate
// nothing.
func (s *snapshot) decodeSection(i int, v *fieldValues, r *Record) error {
	switch i {
	case numPorted:
		return s.portedFrom(v[0], v[1], &r.Ported)
	case numMessaging:
		if v[0] >= uint64(len(s.msgTuples)) {
			return errCorruptRecord
		}
		r.Messaging = s.msgTuples[v[0]]
	case numCNAM:
		name, err := s.names.name(s.m, v[0])
		if err != nil {
			return err
		}
		r.CNAM = CNAM{OK: true, Name: name}
	case numTrust:
		if v[0] >= uint64(len(spamTypes)) {
			return errCorruptRecord
		}
		r.Trust = Trust{OK: true, SpamType: spamTypes[v[0]], Complaints: uint32(v[1]), FirstReported: int64(v[2]), LastReported: int64(v[3])}
	}
	return nil
}
