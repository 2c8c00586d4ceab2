package format

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
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

// blockLayout places the parts of a BLOCKS section: every offset into the
// section is computed here. Offsets are from base, which is the section's
// first byte in the file for a reader and 0 for the encoder's buffer.
type blockLayout struct {
	indexes int64 // the first code index
	entries int64 // the first code entry
	thou    int64 // the first thousands group
	end     int64
}

func newBlockLayout(base int64, indexes, entries, groups uint32) blockLayout {
	var l blockLayout
	l.indexes = base + blocksHeader
	l.entries = l.indexes + int64(indexes)*codeIndexSize
	l.thou = l.entries + int64(entries)*codeEntrySize
	l.end = l.thou + int64(groups)*thouGroupSize
	return l
}

// word is the offset of the index word of code index t that covers nxx.
func (l *blockLayout) word(t uint32, nxx uint64) int64 {
	return l.indexes + int64(t)*codeIndexSize + int64(nxx/64)*indexWordSize
}

// entry is the offset of code entry i.
func (l *blockLayout) entry(i uint32) int64 { return l.entries + int64(i)*codeEntrySize }

// thousands is the offset of the entry for X = x of thousands group g,
// which counts from 1 as a code entry stores it.
func (l *blockLayout) thousands(g uint32, x uint64) int64 {
	return l.thou + int64(g-1)*thouGroupSize + int64(x)*thouEntrySize
}

type blockIndex struct {
	npa         [partitions]uint32 // code index, noCodeTable if none
	blockLayout                    // absolute offsets
	nentry      uint32
	nthou       uint32
	// The code indexes' words, decoded at load: a lookup indexes them by
	// a code index below the count (loadBlocks checks each) and an NXX,
	// with one bounds check and no decoding.
	words []codeWord
	// The code entries and the thousands groups' entries, in the mapped
	// file, as arrays of their bytes: a lookup checks an index it read
	// from the file against the length, one compare, and Go's own bounds
	// check, then proven, adds nothing.
	codeEntries []codeEntry
	thouEntries []thouEntry
}

// codeEntry and thouEntry are the bytes of a code entry and of a thousands
// group's entry.
type (
	codeEntry = [codeEntrySize]byte
	thouEntry = [thouEntrySize]byte
)

// entriesOf views b, whose length is a multiple of the size of E, a byte
// array, as a slice of E without copying it: its elements are b's bytes,
// and its length is what b holds.
func entriesOf[E codeEntry | thouEntry](b []byte) []E {
	var e E
	return unsafe.Slice((*E)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/len(e))
}

// codeWord is an index word: bit NXX%64 of bits is set when the code has
// an entry, whose index is first plus the set bits below its own.
type codeWord struct {
	bits  uint64
	first uint32
}

func loadBlocks(m *region, e dirEntry, bi *blockIndex) error {
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
	bi.blockLayout = newBlockLayout(int64(e.offset), n, c, g)
	bi.nentry, bi.nthou = c, g
	b := m.Bytes()
	bi.words = make([]codeWord, n*codeIndexSize/indexWordSize)
	for i, p := 0, b[bi.indexes:bi.entries]; i < len(bi.words); i, p = i+1, p[indexWordSize:] {
		bi.words[i] = codeWord{binary.LittleEndian.Uint64(p), binary.LittleEndian.Uint32(p[8:])}
	}
	bi.codeEntries = entriesOf[codeEntry](b[bi.entries:bi.thou])
	bi.thouEntries = entriesOf[thouEntry](b[bi.thou:bi.end])
	return nil
}

// codeIndex is the index of the code entry of npa-nxx, and false when its
// code has none (it is vacant). The index is the file's: a caller checks
// it against the entries' count. It and thouIndex are the one rule for
// finding a number's BLOCKS entries, small enough to inline into a
// lookup.
func (bl *blockIndex) codeIndex(npa, nxx uint64) (uint64, bool) {
	if t := bl.npa[npa]; t != noCodeTable {
		w := &bl.words[uint(t)*(codeIndexSize/indexWordSize)+uint(nxx/64)]
		if bit := uint64(1) << (nxx % 64); w.bits&bit != 0 {
			// In 64 bits, where no index the file holds overflows.
			return uint64(w.first) + uint64(bits.OnesCount64(w.bits&(bit-1))), true
		}
	}
	return 0, false
}

// thouIndex is the index of the thousands entry of the number whose
// remainder within its NPA is rem (NXX nxx) in code entry e's thousands
// group, and false when the code has no group. The index is the file's: a
// caller checks it against the entries' count.
func thouIndex(e *codeEntry, rem, nxx uint64) (uint64, bool) {
	if g := binary.LittleEndian.Uint32(e[16:]); g != 0 {
		return uint64(g-1)*10 + rem/1000 - nxx*10, true
	}
	return 0, false
}

// blockFrom sets *b from a number's located BLOCKS entries (codeIndex,
// thouIndex): the row of its thousands entry (thou, nil when the code has
// no thousands group) when that is assigned, else its code entry's, and
// zero when neither is. It is the one rule for the row, written once for
// the lookups that locate the entries before they search a bucket.
func (s *snapshot) blockFrom(code *codeEntry, thou *thouEntry, b *Block) error {
	e, thousands := (*thouEntry)(code[:thouEntrySize]), false
	if thou != nil && binary.LittleEndian.Uint32(thou[:]) != 0 {
		e, thousands = thou, true
	}
	if binary.LittleEndian.Uint32(e[:]) == 0 {
		*b = Block{}
		return nil
	}
	row := decodeBlockRow(e[:])
	if err := s.resolveBlock(row, thousands, b); err != nil {
		return err
	}
	if row.lrn == 0 {
		b.LRN = "" // resolveBlock writes it only for a row with one
	}
	return nil
}

// blockRow is a raw code or thousands entry.
type blockRow struct {
	carrier, rc, lrn, activated uint32
}

// decodeBlockRow reads the first four fields of a code or thousands entry.
func decodeBlockRow(p []byte) blockRow {
	return blockRow{
		carrier:   binary.LittleEndian.Uint32(p[0:]),
		rc:        binary.LittleEndian.Uint32(p[4:]),
		lrn:       binary.LittleEndian.Uint32(p[8:]),
		activated: binary.LittleEndian.Uint32(p[12:]),
	}
}

// put writes the row as the first four fields of an entry.
func (r blockRow) put(p []byte) {
	binary.LittleEndian.PutUint32(p[0:], r.carrier)
	binary.LittleEndian.PutUint32(p[4:], r.rc)
	binary.LittleEndian.PutUint32(p[8:], r.lrn)
	binary.LittleEndian.PutUint32(p[12:], r.activated)
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
	row, thousands, assigned, err := s.blockRow(npa, rem)
	if err != nil || !assigned {
		return err
	}
	return s.resolveBlock(row, thousands, b)
}

// blockRow reads the number npa-rem's most specific raw block row, its
// thousands entry's when that is assigned, else its code entry's, without
// resolving it against the dictionaries; assigned is false when the code
// (or the code and its thousands-block) is vacant.
func (s *snapshot) blockRow(npa, rem uint64) (row blockRow, thousands, assigned bool, err error) {
	nxx := rem / 10000
	idx, ok := s.blocks.codeIndex(npa, nxx)
	if !ok {
		return blockRow{}, false, false, nil
	}
	if idx >= uint64(len(s.blocks.codeEntries)) {
		return blockRow{}, false, false, errCorruptRecord
	}
	var thou int64
	if t, ok := thouIndex(&s.blocks.codeEntries[idx], rem, nxx); ok {
		if t >= uint64(len(s.blocks.thouEntries)) {
			return blockRow{}, false, false, errCorruptRecord
		}
		thou = s.blocks.thou + int64(t)*thouEntrySize
	}
	return s.rowAt(s.blocks.entry(uint32(idx)), thou)
}

// blockAt fills b, which must be zero, from the code entry at off and,
// when t is not 0 (the code is split), the thousands entry at t: its row
// when that is assigned, else the code's.
func (s *snapshot) blockAt(off, t int64, b *Block) error {
	row, thousands, assigned, err := s.rowAt(off, t)
	if err != nil || !assigned {
		return err
	}
	return s.resolveBlock(row, thousands, b)
}

// rowAt reads the raw row blockAt resolves.
func (s *snapshot) rowAt(off, t int64) (row blockRow, thousands, assigned bool, err error) {
	e, ok := s.at(off, thouEntrySize)
	if !ok {
		return blockRow{}, false, false, errCorruptRecord
	}
	if t != 0 {
		tb, ok := s.at(t, thouEntrySize)
		if !ok {
			return blockRow{}, false, false, errCorruptRecord
		}
		if binary.LittleEndian.Uint32(tb) != 0 {
			e, thousands = tb, true
		}
	}
	if binary.LittleEndian.Uint32(e) == 0 {
		return blockRow{}, false, false, nil
	}
	return decodeBlockRow(e), thousands, true, nil
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

// at returns the n mapped bytes at off, without copying them; ok is false
// when they are not all inside the file.
func (s *snapshot) at(off int64, n int) (b []byte, ok bool) {
	if off < 0 || off > int64(len(s.b)-n) {
		return nil, false
	}
	return s.b[off : off+int64(n) : off+int64(n)], true
}
