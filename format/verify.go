package format

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"runtime"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/lnpdb/lnpdb/internal/mphf"
)

// Verify reads the whole file and checks every section's checksum and every
// record's structure: each perfect hash maps its keys onto its records one to
// one, and each record points inside its dictionaries. It returns a
// *CorruptError naming the first damaged section, or ErrClosed.
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
	checks := []struct {
		sec   *numSection
		check func(w window) bool
	}{
		{&s.ported, func(w window) bool { return s.ported.field(w, 0) < uint64(len(s.pairs)) }},
		{&s.messaging, func(w window) bool { return s.messaging.field(w, 0) < uint64(len(s.msgTuples)) }},
		{&s.cnam, func(w window) bool { return s.cnam.field(w, 0) < s.names.names }},
		{&s.trustSec, func(w window) bool { return s.trustSec.field(w, 0) < uint64(len(SpamTypes)) }},
	}
	for _, c := range checks {
		if err := s.verifyNumSection(c.sec, c.check); err != nil {
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

// verifyNumSection checks every record of a per-number section: its key is
// where the partition's perfect hash puts it, and its fields point inside
// their dictionaries. Partitions are checked in parallel, each read in one
// piece; the error reported is that of the first damaged partition, so the
// answer does not depend on scheduling.
func (s *snapshot) verifyNumSection(sec *numSection, check func(window) bool) error {
	errs := make([]error, partitions)
	next := make(chan int, partitions)
	for npa := range partitions {
		if sec.parts[npa].p.N > 0 {
			next <- npa
		}
	}
	close(next)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			var recs []byte
			for npa := range next {
				recs, errs[npa] = s.verifyPartition(sec, npa, check, recs)
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

func (s *snapshot) verifyPartition(sec *numSection, npa int, check func(window) bool, recs []byte) ([]byte, error) {
	pt := &sec.parts[npa]
	hb := make([]byte, pt.p.Size())
	if _, err := s.m.ReadAt(hb, pt.pilots-int64(pt.p.PilotsOffset())); err != nil {
		return recs, corrupt(sec.id, "NPA %03d: %v", npa, err)
	}
	t, err := mphf.Decode(hb)
	if err != nil {
		return recs, corrupt(sec.id, "NPA %03d: %v", npa, err)
	}
	return s.partitionRecords(sec, npa, recs, func(slot, rem uint64, w window) error {
		if rem >= 10000000 || t.Lookup(rem) != slot {
			return corrupt(sec.id, "NPA %03d record %d: key %07d is not where the hash puts it", npa, slot, rem)
		}
		if !check(w) {
			return corrupt(sec.id, "NPA %03d record %d: a field points outside its dictionary", npa, slot)
		}
		return nil
	})
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
