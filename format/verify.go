package format

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"runtime"
	"sync"

	"github.com/cespare/xxhash/v2"
)

// Verify reads the whole file and checks every section's checksum and every
// record's structure: each bucket table holds its keys where a lookup looks
// for them (see verifyPartition), and each record points inside its
// dictionaries. It returns a *CorruptError naming the first damaged
// section, or ErrClosed.
func (db *DB) Verify() error {
	s, ref := db.acquire(0)
	if s == nil {
		return ErrClosed
	}
	defer s.mp.release(ref)
	return s.verify()
}

func (s *snapshot) verify() error {
	if err := s.verifyTiling(); err != nil {
		return err
	}
	for _, id := range sectionOrder {
		e := s.dir[id]
		h := xxhash.New()
		if _, err := io.Copy(h, io.NewSectionReader(s.m, int64(e.offset), int64(e.length))); err != nil {
			return corrupt(id, "reading: %v", err)
		}
		if got := h.Sum64(); got != e.checksum {
			return corrupt(id, "checksum mismatch (stored %016x, computed %016x)", e.checksum, got)
		}
	}
	if err := s.verifyBlocks(); err != nil {
		return err
	}
	for i := range numSpecs {
		if err := s.verifyNumSection(&s.num[i], &numSpecs[i]); err != nil {
			return err
		}
	}
	return s.verifyNames()
}

// verifyTiling checks that the sections follow the directory in order and
// that the only bytes outside them are alignment padding of zeros, so that
// every byte of the file is covered by some check.
func (s *snapshot) verifyTiling() error {
	pos := uint64(headerSize + dirSize(len(sectionOrder)))
	if int(s.hdr.sections) != len(sectionOrder) {
		return corrupt("directory", "%d sections, want %d", s.hdr.sections, len(sectionOrder))
	}
	for _, id := range sectionOrder {
		e := s.dir[id]
		if e.offset < pos || e.offset-pos >= 8 {
			return corrupt(id, "starts at %d, want the first 8-byte boundary after %d", e.offset, pos)
		}
		if err := s.zeros(pos, e.offset); err != nil {
			return corrupt(id, "padding before the section is not zero")
		}
		pos = e.offset + e.length
	}
	if pos != s.hdr.fileSize {
		return corrupt("directory", "sections end at %d, file at %d", pos, s.hdr.fileSize)
	}
	return nil
}

func (s *snapshot) zeros(from, to uint64) error {
	var b [8]byte
	if _, err := s.m.ReadAt(b[:to-from], int64(from)); err != nil {
		return err
	}
	for _, c := range b[:to-from] {
		if c != 0 {
			return errors.New("nonzero")
		}
	}
	return nil
}

// verifyNumSection checks every bucket and entry of a per-number section
// (see verifyPartition) and the slack after its last bucket. Partitions
// are checked in parallel; the error reported is that of the first
// damaged partition, so the answer does not depend on scheduling.
func (s *snapshot) verifyNumSection(sec *numSection, spec *numSpec) error {
	slack := make([]byte, bucketSlack)
	e := s.dir[sec.id]
	if _, err := s.m.ReadAt(slack, int64(e.offset+e.length)-bucketSlack); err != nil {
		return corrupt(sec.id, "%v", err)
	}
	if !allZero(s.b[e.offset+numTableEnd:e.offset+sec.area]) || !allZero(slack) {
		return corrupt(sec.id, "padding or slack is not zero")
	}
	errs := make([]error, partitions)
	next := make(chan int, partitions)
	for npa := range partitions {
		if sec.parts[npa].n > 0 {
			next <- npa
		}
	}
	close(next)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			var buf []byte
			for npa := range next {
				buf, errs[npa] = s.verifyPartition(sec, spec, npa, buf)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func allZero(b []byte) bool { return len(bytes.TrimLeft(b, "\x00")) == 0 }

// verifyPartition checks one NPA's table against everything a lookup
// relies on: each bucket holds at most its slots, with no stray bits;
// entries are in strictly ascending permuted order, so no key is stored
// twice; an entry sits in its home bucket or after it; a bucket with room
// left is never passed over by a later home's entry; a home bucket's
// overflow flag is set exactly when some of its entries sit further on;
// the table holds the partition's count; and every entry's fields point
// inside their dictionaries.
func (s *snapshot) verifyPartition(sec *numSection, spec *numSpec, npa int, buf []byte) ([]byte, error) {
	pt := &sec.parts[npa]
	buf, err := s.partBytes(sec, npa, buf)
	if err != nil {
		return buf, err
	}
	bad := func(bk uint64, format string, args ...any) error {
		return corrupt(sec.id, "NPA %03d bucket %d: %s", npa, bk, fmt.Sprintf(format, args...))
	}
	var total uint64
	for bk := range pt.nphys {
		b := buf[bk*bucketBytes : (bk+1)*bucketBytes]
		cnt := uint64(b[0] & slotMask)
		if cnt > pt.slots || b[0]&^(slotMask|overflowFlag) != 0 || b[0]&overflowFlag != 0 && bk >= pt.nb {
			return buf, bad(bk, "header %#x is not a count of at most %d and a flag", b[0], pt.slots)
		}
		used := pt.entryBit(cnt)
		if !allZero(b[1+cnt:1+pt.slots]) || used%8 != 0 && b[used/8]>>(used%8) != 0 || !allZero(b[(used+7)/8:]) {
			return buf, bad(bk, "bits past its %d entries are not zero", cnt)
		}
		if bk == pt.nphys-1 && bk >= pt.nb && cnt == 0 {
			return buf, bad(bk, "an overflow bucket holds nothing")
		}
		total += cnt
	}
	if total != pt.n {
		return buf, corrupt(sec.id, "NPA %03d: %d entries, partition says %d", npa, total, pt.n)
	}
	var (
		first             = true
		lastX, lastBucket uint64
		open              = int64(-1)           // the last bucket before this one with room left
		continued         = make([]bool, pt.nb) // entries of this home sit further on
	)
	err = sec.eachEntry(npa, buf, func(bk, rem, home uint64, w window) error {
		x := permute(rem - keyBase)
		if !first && x <= lastX {
			return bad(bk, "key %07d is out of order", rem)
		}
		if bk != lastBucket || first {
			for b := lastBucket; b < bk; b++ {
				if uint64(buf[b*bucketBytes]&slotMask) < pt.slots {
					open = int64(b)
				}
			}
		}
		if int64(home) <= open {
			return bad(bk, "key %07d passed over bucket %d, which has room", rem, open)
		}
		if bk > home {
			continued[home] = true
		}
		first, lastX, lastBucket = false, x, bk
		var v fieldValues
		sec.fields(w, &v)
		if !spec.check(s, &v) {
			return bad(bk, "key %07d: a field points outside its dictionary", rem)
		}
		return nil
	})
	if err != nil {
		return buf, err
	}
	for h := range pt.nb {
		if flagged := buf[h*bucketBytes]&overflowFlag != 0; flagged != continued[h] {
			return buf, bad(h, "overflow flag %v, but entries continue: %v", flagged, continued[h])
		}
	}
	return buf, nil
}

func (s *snapshot) verifyBlocks() error {
	e := s.dir[secBlocks]
	b := make([]byte, e.length)
	if _, err := s.m.ReadAt(b, int64(e.offset)); err != nil {
		return corrupt(secBlocks, "%v", err)
	}
	row := func(p []byte) error {
		r := decodeBlockRow(p)
		if r.carrier == 0 {
			if r != (blockRow{}) {
				return fmt.Errorf("an empty row has data")
			}
			return nil
		}
		if int(r.carrier) > len(s.carriers) || int(r.rc) >= len(s.rateCenters) || int(r.lrn) > len(s.lrns) {
			return fmt.Errorf("a field points outside its dictionary")
		}
		return nil
	}
	base := int64(e.offset)
	indexes := b[s.blocks.indexes-base : s.blocks.entries-base]
	var want uint32
	for w := 0; w < len(indexes); w += indexWordSize {
		bitmap := binary.LittleEndian.Uint64(indexes[w:])
		first := binary.LittleEndian.Uint32(indexes[w+8:])
		if binary.LittleEndian.Uint32(indexes[w+12:]) != 0 || (bitmap != 0 && first != want) || (w/indexWordSize%16 == 15 && bitmap>>40 != 0) {
			return corrupt(secBlocks, "code index word %d is inconsistent", w/indexWordSize)
		}
		if bitmap == 0 && first != 0 {
			return corrupt(secBlocks, "code index word %d: an empty word has an index", w/indexWordSize)
		}
		want += uint32(bits.OnesCount64(bitmap))
	}
	if want != s.blocks.nentry {
		return corrupt(secBlocks, "code indexes count %d entries, section has %d", want, s.blocks.nentry)
	}
	for i := range s.blocks.nentry {
		p := b[s.blocks.entry(i)-base:]
		if err := row(p); err != nil {
			return corrupt(secBlocks, "code entry %d: %v", i, err)
		}
		g := binary.LittleEndian.Uint32(p[16:])
		if g > s.blocks.nthou || (g == 0 && binary.LittleEndian.Uint32(p) == 0) {
			return corrupt(secBlocks, "code entry %d: no code row and no thousands group %d", i, g)
		}
	}
	for g := range s.blocks.nthou {
		for x := range uint64(10) {
			if err := row(b[s.blocks.thousands(g+1, x)-base:]); err != nil {
				return corrupt(secBlocks, "thousands entry %d: %v", uint64(g)*10+x, err)
			}
		}
	}
	return nil
}

func (s *snapshot) verifyNames() error {
	h := &s.names
	for c := range h.chunks {
		raw, err := h.frame(s.m, c)
		if err != nil {
			return corrupt(secCNAMNames, "chunk %d: unreadable", c)
		}
		want := min(h.perChunk, h.names-c*h.perChunk)
		if n, ok := countNames(raw); !ok || uint64(n) != want {
			return corrupt(secCNAMNames, "chunk %d: %d well-formed names, want %d", c, n, want)
		}
	}
	end := make([]byte, 8)
	if _, err := s.m.ReadAt(end, h.offsets+int64(h.chunks)*8); err != nil || binary.LittleEndian.Uint64(end) != h.dataLen {
		return corrupt(secCNAMNames, "frames do not fill the section")
	}
	return nil
}
