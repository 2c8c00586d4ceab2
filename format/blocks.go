package format

import (
	"encoding/binary"
	"math/bits"

	"golang.org/x/exp/mmap"
)

// The BLOCKS section indexes block data directly by number prefix, storing
// entries only for assigned codes:
//
//	[0,4000)    1000 × u32: NPA → index of its code index, 0xFFFFFFFF if none
//	[4000,4016) u32 code indexes N, u32 code entries C, u32 thousands
//	            groups G, u32 zero
//	then N code indexes of 16 words (NXX/64), 16 bytes each: u64 bitmap
//	            (bit NXX%64 set: the code has an entry), u32 index of the
//	            word's first entry, u32 zero. A code's entry index is the
//	            word's first index plus the set bits below its own.
//	then C code entries, 20 bytes each: u32 carrier+1 (0: no code row),
//	            u32 rate center, u32 LRN+1 (0: none), u32 activated (unix
//	            seconds, 0: unknown), u32 thousands group+1 (0: none)
//	then G thousands groups of 10 entries (X = 0..9), 16 bytes each: the
//	            first four fields of a code entry (carrier 0: no row)
const (
	blocksHeader  = partitions*4 + 16
	indexWordSize = 16
	codeIndexSize = 16 * indexWordSize
	codeEntrySize = 20
	thouEntrySize = 16
	thouGroupSize = 10 * thouEntrySize
	noCodeTable   = 0xFFFFFFFF
)

type blockIndex struct {
	npa     [partitions]uint32 // code index, noCodeTable if none
	indexes int64              // absolute offset of the first code index
	entries int64              // absolute offset of the first code entry
	thou    int64              // absolute offset of the first thousands group
	nentry  uint32
	nthou   uint32
}

func loadBlocks(m *mmap.ReaderAt, e dirEntry, bi *blockIndex) error {
	if e.encoding != encRaw {
		return corrupt(e.id, "encoding %d, want raw", e.encoding)
	}
	if e.length < blocksHeader {
		return corrupt(e.id, "%d bytes, shorter than its header", e.length)
	}
	hdr := make([]byte, blocksHeader)
	if _, err := m.ReadAt(hdr, int64(e.offset)); err != nil {
		return corrupt(e.id, "%v", err)
	}
	n := binary.LittleEndian.Uint32(hdr[partitions*4:])
	c := binary.LittleEndian.Uint32(hdr[partitions*4+4:])
	g := binary.LittleEndian.Uint32(hdr[partitions*4+8:])
	want := uint64(blocksHeader) + uint64(n)*codeIndexSize + uint64(c)*codeEntrySize + uint64(g)*thouGroupSize
	if want != e.length {
		return corrupt(e.id, "%d code indexes, %d entries and %d thousands groups need %d bytes, section has %d", n, c, g, want, e.length)
	}
	for i := range partitions {
		v := binary.LittleEndian.Uint32(hdr[i*4:])
		if v != noCodeTable && (v >= n || i < 200) {
			return corrupt(e.id, "NPA %03d: code index %d out of range", i, v)
		}
		bi.npa[i] = v
	}
	bi.indexes = int64(e.offset) + blocksHeader
	bi.entries = bi.indexes + int64(n)*codeIndexSize
	bi.thou = bi.entries + int64(c)*codeEntrySize
	bi.nentry, bi.nthou = c, g
	return nil
}

// blockRow is a raw code or thousands entry.
type blockRow struct {
	carrier, rc, lrn, activated uint32
}

// block resolves the number npa-rem to its most specific block row.
func (s *snapshot) block(npa, rem uint64) (Block, error) {
	var b Block
	err := s.readBlock(npa, rem, &b)
	return b, err
}

// readBlock sets *b to the number npa-rem's most specific block row (zero
// when its code is vacant). On error *b is unspecified.
func (s *snapshot) readBlock(npa, rem uint64, b *Block) error {
	*b = Block{}
	t := s.blocks.npa[npa]
	if t == noCodeTable {
		return nil
	}
	nxx := rem / 10000
	var wb [indexWordSize]byte
	if _, err := s.m.ReadAt(wb[:], s.blocks.indexes+int64(t)*codeIndexSize+int64(nxx/64)*indexWordSize); err != nil {
		return errCorruptRecord
	}
	bitmap := binary.LittleEndian.Uint64(wb[:])
	bit := uint64(1) << (nxx % 64)
	if bitmap&bit == 0 {
		return nil
	}
	idx := binary.LittleEndian.Uint32(wb[8:]) + uint32(bits.OnesCount64(bitmap&(bit-1)))
	if idx >= s.blocks.nentry {
		return errCorruptRecord
	}
	var e [codeEntrySize]byte
	if _, err := s.m.ReadAt(e[:], s.blocks.entries+int64(idx)*codeEntrySize); err != nil {
		return errCorruptRecord
	}
	row := e[:16]
	thousands := false
	if g := binary.LittleEndian.Uint32(e[16:]); g != 0 {
		if g > s.blocks.nthou {
			return errCorruptRecord
		}
		x := rem / 1000 % 10
		var tb [thouEntrySize]byte
		if _, err := s.m.ReadAt(tb[:], s.blocks.thou+int64(g-1)*thouGroupSize+int64(x)*thouEntrySize); err != nil {
			return errCorruptRecord
		}
		if binary.LittleEndian.Uint32(tb[0:]) != 0 {
			row, thousands = tb[:], true
		}
	}
	carrier := binary.LittleEndian.Uint32(row[0:])
	if carrier == 0 {
		return nil
	}
	return s.resolveBlock(blockRow{
		carrier:   carrier,
		rc:        binary.LittleEndian.Uint32(row[4:]),
		lrn:       binary.LittleEndian.Uint32(row[8:]),
		activated: binary.LittleEndian.Uint32(row[12:]),
	}, thousands, b)
}

func (s *snapshot) resolveBlock(row blockRow, thousands bool, b *Block) error {
	if int(row.carrier) > len(s.carriers) || int(row.rc) >= len(s.rateCenters) || int(row.lrn) > len(s.lrns) {
		return errCorruptRecord
	}
	b.Assigned = true
	b.Thousands = thousands
	b.Carrier = &s.carriers[row.carrier-1]
	b.RateCenter = &s.rateCenters[row.rc]
	b.ActivatedAt = int64(row.activated)
	if row.lrn != 0 {
		b.LRN = s.lrns[row.lrn-1]
	}
	return nil
}
