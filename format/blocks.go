package format

import (
	"encoding/binary"

	"golang.org/x/exp/mmap"
)

// The BLOCKS section indexes block data directly by number prefix:
//
//	[0, 4000)   1000 × u32: NPA → index of its code table, 0xFFFFFFFF if none
//	[4000,4008) u32 code tables T, u32 thousands groups M
//	then T code tables of 1000 code entries (NXX 000..999), 20 bytes each:
//	            u32 carrier+1 (0: no code row), u32 rate center, u32 LRN+1
//	            (0: none), u32 activated (unix seconds, 0: unknown),
//	            u32 thousands group+1 (0: the code has no thousands-blocks)
//	then M thousands groups of 10 entries (X = 0..9), 16 bytes each:
//	            u32 carrier+1 (0: no row for this block), u32 rate center,
//	            u32 LRN+1, u32 activated
const (
	blocksHeader   = partitions*4 + 8
	codeEntrySize  = 20
	codeTableSize  = 1000 * codeEntrySize
	thouEntrySize  = 16
	thouGroupSize  = 10 * thouEntrySize
	noCodeTable    = 0xFFFFFFFF
	codeTableBytes = int64(codeTableSize)
)

type blockIndex struct {
	npa    [partitions]uint32 // code table index, noCodeTable if none
	tables int64              // absolute offset of the first code table
	thou   int64              // absolute offset of the first thousands group
	nthou  uint32
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
	t := binary.LittleEndian.Uint32(hdr[partitions*4:])
	mth := binary.LittleEndian.Uint32(hdr[partitions*4+4:])
	want := uint64(blocksHeader) + uint64(t)*codeTableSize + uint64(mth)*thouGroupSize
	if want != e.length {
		return corrupt(e.id, "%d code tables and %d thousands groups need %d bytes, section has %d", t, mth, want, e.length)
	}
	for i := range partitions {
		v := binary.LittleEndian.Uint32(hdr[i*4:])
		if v != noCodeTable && (v >= t || i < 200) {
			return corrupt(e.id, "NPA %03d: code table %d out of range", i, v)
		}
		bi.npa[i] = v
	}
	bi.tables = int64(e.offset) + blocksHeader
	bi.thou = bi.tables + int64(t)*codeTableBytes
	bi.nthou = mth
	return nil
}

// blockRow is a raw code or thousands entry.
type blockRow struct {
	carrier, rc, lrn, activated uint32
}

// block resolves the number npa-rem to its most specific block row.
func (s *snapshot) block(npa, rem uint64) (Block, error) {
	t := s.blocks.npa[npa]
	if t == noCodeTable {
		return Block{}, nil
	}
	nxx := rem / 10000
	var b [codeEntrySize]byte
	if _, err := s.m.ReadAt(b[:], s.blocks.tables+int64(t)*codeTableBytes+int64(nxx)*codeEntrySize); err != nil {
		return Block{}, errCorruptRecord
	}
	row := blockRow{
		carrier:   binary.LittleEndian.Uint32(b[0:]),
		rc:        binary.LittleEndian.Uint32(b[4:]),
		lrn:       binary.LittleEndian.Uint32(b[8:]),
		activated: binary.LittleEndian.Uint32(b[12:]),
	}
	thousands := false
	if g := binary.LittleEndian.Uint32(b[16:]); g != 0 {
		if g > s.blocks.nthou {
			return Block{}, errCorruptRecord
		}
		x := rem / 1000 % 10
		var tb [thouEntrySize]byte
		if _, err := s.m.ReadAt(tb[:], s.blocks.thou+int64(g-1)*thouGroupSize+int64(x)*thouEntrySize); err != nil {
			return Block{}, errCorruptRecord
		}
		if c := binary.LittleEndian.Uint32(tb[0:]); c != 0 {
			row = blockRow{
				carrier:   c,
				rc:        binary.LittleEndian.Uint32(tb[4:]),
				lrn:       binary.LittleEndian.Uint32(tb[8:]),
				activated: binary.LittleEndian.Uint32(tb[12:]),
			}
			thousands = true
		}
	}
	if row.carrier == 0 {
		return Block{}, nil
	}
	return s.resolveBlock(row, thousands)
}

func (s *snapshot) resolveBlock(row blockRow, thousands bool) (Block, error) {
	if int(row.carrier) > len(s.carriers) || int(row.rc) >= len(s.rateCenters) || int(row.lrn) > len(s.lrns) {
		return Block{}, errCorruptRecord
	}
	blk := Block{
		Assigned:    true,
		Thousands:   thousands,
		Carrier:     &s.carriers[row.carrier-1],
		RateCenter:  &s.rateCenters[row.rc],
		ActivatedAt: int64(row.activated),
	}
	if row.lrn != 0 {
		blk.LRN = s.lrns[row.lrn-1]
	}
	return blk, nil
}
