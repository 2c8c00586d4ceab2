package format

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/lnpdb/lnpdb/internal/core/nanp"
	"github.com/lnpdb/lnpdb/internal/core/vfs"
)

// fileWriter appends sections to the output file and remembers where each
// one went.
type fileWriter struct {
	f   vfs.File
	bw  *chunkWriter
	off int64
	dir []dirEntry
}

func (w *fileWriter) write(p []byte) error {
	n, err := w.bw.Write(p)
	w.off += int64(n)
	return err
}

func (w *fileWriter) align() error {
	if pad := (8 - w.off%8) % 8; pad != 0 {
		return w.write(make([]byte, pad))
	}
	return nil
}

// section writes an in-memory section, compressing it when enc is encZstd.
func (w *fileWriter) section(id string, enc uint32, raw []byte) error {
	if err := w.align(); err != nil {
		return err
	}
	stored := raw
	if enc == encZstd {
		stored = compress(raw)
	}
	e := dirEntry{id: id, encoding: enc, offset: uint64(w.off), length: uint64(len(stored)), checksum: xxhash.Sum64(stored)}
	w.dir = append(w.dir, e)
	return w.write(stored)
}

// checksum flushes and hashes a range already written, for sections too
// large to keep in memory.
func (w *fileWriter) checksum(off, n int64) (uint64, error) {
	if err := w.bw.Flush(); err != nil {
		return 0, err
	}
	h := xxhash.New()
	if _, err := io.Copy(h, io.NewSectionReader(w.f, off, n)); err != nil {
		return 0, err
	}
	return h.Sum64(), nil
}

// write writes the whole table to f: a zeroed prefix, the sections in
// sectionOrder, then the header and directory over the prefix.
func (w *Writer) write(ctx context.Context, f vfs.File, opt WriteOptions) error {
	fw := &fileWriter{f: f, bw: newChunkWriter(f)}
	if err := fw.write(make([]byte, headerSize+dirSize(len(sectionOrder)))); err != nil {
		return err
	}
	lrns, lrnRemap := w.sortedLRNs()
	metaJSON, err := json.Marshal(w.meta())
	if err != nil {
		return err
	}
	small := []struct {
		id     string
		encode func() []byte
	}{
		{secMeta, func() []byte { return metaJSON }},
		{secCarriers, func() []byte { return encodeCarriers(w.carriers) }},
		{secRateCenters, func() []byte { return encodeRateCenters(w.rcs) }},
		{secLRNs, func() []byte { return encodeLRNs(lrns) }},
		{secMsgStrings, func() []byte { return encodeStrings(w.msgStrs.list) }},
		{secPairs, func() []byte { return encodePairs(w.pairs.list, lrnRemap) }},
		{secMsgTuples, func() []byte { return encodeMsgTuples(w.msgTuples.list) }},
	}
	for _, sec := range small {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fw.section(sec.id, encZstd, sec.encode()); err != nil {
			return err
		}
	}
	if err := fw.section(secBlocks, encRaw, w.encodeBlocks(lrnRemap)); err != nil {
		return err
	}
	for i := range numSpecs {
		if err := ctx.Err(); err != nil {
			return err
		}
		spec := &numSpecs[i]
		if err := writeNumSection(ctx, fw, spec, spec.rows(w), opt.Duplicate); err != nil {
			return err
		}
	}
	if err := w.writeNames(fw); err != nil {
		return err
	}
	if err := fw.bw.Flush(); err != nil {
		return err
	}
	builtAt := opt.BuiltAt
	if builtAt.IsZero() {
		builtAt = time.Now()
	}
	h := header{sections: uint32(len(fw.dir)), fileSize: uint64(fw.off), builtAt: builtAt.Unix()}
	_, err = f.WriteAt(append(h.encode(), encodeDir(fw.dir)...), 0)
	return err
}

// meta counts the codes and thousands-blocks with a row.
func (w *Writer) meta() meta {
	var m meta
	for _, cr := range w.codes {
		if cr.hasCode {
			m.Codes++
		}
		for _, t := range cr.thousands {
			if t.carrier != 0 {
				m.ThousandsBlocks++
			}
		}
	}
	return m
}

// dupFunc is WriteOptions.Duplicate.
type dupFunc = func(f Fields, tn uint64, line, first int) error

func (w *Writer) encodeBlocks(lrnRemap []uint32) []byte {
	// Walk codes in number order: the same source gives the same bytes.
	keys := make([]uint32, 0, len(w.codes))
	for k := range w.codes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var npaIndex [partitions]uint32
	for i := range npaIndex {
		npaIndex[i] = noCodeTable
	}
	var indexes, groups uint32
	for _, k := range keys {
		if npa := k / 1000; npaIndex[npa] == noCodeTable {
			npaIndex[npa] = indexes
			indexes++
		}
		if w.codes[k].split {
			groups++
		}
	}
	entries := uint32(len(keys))
	l := newBlockLayout(0, indexes, entries, groups)
	out := make([]byte, l.end)
	for i, v := range npaIndex {
		binary.LittleEndian.PutUint32(out[i*4:], v)
	}
	binary.LittleEndian.PutUint32(out[partitions*4:], indexes)
	binary.LittleEndian.PutUint32(out[partitions*4+4:], entries)
	binary.LittleEndian.PutUint32(out[partitions*4+8:], groups)
	remapped := func(r blockRow) blockRow {
		if r.lrn != 0 {
			r.lrn = lrnRemap[r.lrn-1] + 1
		}
		return r
	}
	lastWord := int64(-1)
	var g uint32
	for i, k := range keys {
		npa, nxx := k/1000, uint64(k%1000)
		off := l.word(npaIndex[npa], nxx)
		word := out[off:]
		if off != lastWord {
			binary.LittleEndian.PutUint32(word[8:], uint32(i))
			lastWord = off
		}
		binary.LittleEndian.PutUint64(word, binary.LittleEndian.Uint64(word)|1<<(nxx%64))
		cr := w.codes[k]
		p := out[l.entry(uint32(i)):]
		if cr.hasCode {
			remapped(cr.code).put(p)
		}
		if cr.split {
			g++
			binary.LittleEndian.PutUint32(p[16:], g)
			for x, t := range cr.thousands {
				if t.carrier != 0 {
					remapped(t).put(out[l.thousands(g, uint64(x)):])
				}
			}
		}
	}
	return out
}

func (w *Writer) writeNames(fw *fileWriter) error {
	hdr, frames := encodeNameChunks(w.names.list)
	if err := fw.align(); err != nil {
		return err
	}
	start := fw.off
	if err := fw.write(hdr); err != nil {
		return err
	}
	for _, f := range frames {
		if err := fw.write(f); err != nil {
			return err
		}
	}
	sum, err := fw.checksum(start, fw.off-start)
	if err != nil {
		return err
	}
	fw.dir = append(fw.dir, dirEntry{id: secCNAMNames, encoding: encRaw, offset: uint64(start), length: uint64(fw.off - start), checksum: sum})
	return nil
}

// builtPart is one partition's table, placed and packed.
type builtPart struct {
	buckets []byte
	pt      part
	dups    []dup
	err     error
}

type dup struct {
	tn          uint64
	line, first int
}

// writeNumSection writes a per-number section: partitions are placed and
// packed in parallel and written in NPA order, so the output does not
// depend on scheduling.
func writeNumSection(ctx context.Context, w *fileWriter, spec *numSpec, src rowSource, dup dupFunc) error {
	lo, hi := src.ranges()
	layout, err := layoutFor(spec, lo, hi)
	if err != nil {
		return fmt.Errorf("format: section %s: %w", spec.id, err)
	}
	if err := w.align(); err != nil {
		return err
	}
	// The header and partition table, written now as a placeholder and
	// again once the partitions' places are known.
	sec := numSectionWriter{w: w, spec: spec, dup: dup, start: w.off, table: make([]byte, numTableEnd)}
	for i := range layout.count {
		sec.table[8+i] = layout.widths[i]
		binary.LittleEndian.PutUint32(sec.table[32+4*i:], uint32(layout.bases[i]))
	}
	if err := w.write(sec.table); err != nil {
		return err
	}
	if pad := (bucketBytes - w.off%bucketBytes) % bucketBytes; pad != 0 {
		if err := w.write(make([]byte, pad)); err != nil {
			return err
		}
	}
	sec.area = w.off - sec.start
	if err := src.finishSpill(); err != nil {
		return err
	}
	parts := buildParts(ctx, src, &layout)
	var firstErr error
	for i, npa := range parts.npas {
		r, err := parts.next(ctx, i)
		if err != nil {
			return err
		}
		// After an error, keep taking the built partitions, so that the
		// builders finish.
		if firstErr == nil {
			firstErr = sec.part(npa, &r)
		}
	}
	if firstErr != nil {
		return firstErr
	}
	return sec.finish()
}

// numSectionWriter writes one per-number section's partitions and then
// its header and partition table.
type numSectionWriter struct {
	w       *fileWriter
	spec    *numSpec
	dup     dupFunc
	start   int64  // the section's offset
	area    int64  // the bucket array's offset from start
	table   []byte // header and partition table
	keys    uint64
	buckets uint64
}

// part writes partition npa's buckets, after reporting its duplicates.
func (sec *numSectionWriter) part(npa int, r *builtPart) error {
	if r.err != nil {
		return fmt.Errorf("format: section %s, NPA %03d: %w", sec.spec.id, npa, r.err)
	}
	for _, d := range r.dups {
		if sec.dup == nil {
			return fmt.Errorf("format: section %s: %s listed twice", sec.spec.id, nanp.Number(d.tn))
		}
		if err := sec.dup(sec.spec.field, d.tn, d.line, d.first); err != nil {
			return err
		}
	}
	if r.pt.n == 0 {
		return nil // every row was a duplicate of another
	}
	w := sec.w
	pe := sec.table[numHeaderSize+npa*partEntrySize:]
	binary.LittleEndian.PutUint64(pe, uint64(w.off-sec.start))
	binary.LittleEndian.PutUint32(pe[8:], uint32(r.pt.n))
	binary.LittleEndian.PutUint32(pe[12:], uint32(r.pt.nb))
	binary.LittleEndian.PutUint32(pe[16:], uint32(r.pt.nphys))
	pe[20] = byte(r.pt.dbits)
	sec.keys += r.pt.n
	sec.buckets += r.pt.nphys
	return w.write(r.buckets)
}

// finish writes the slack after the last bucket, the header and partition
// table over the placeholder, and adds the section to the directory.
func (sec *numSectionWriter) finish() error {
	w := sec.w
	if err := w.write(make([]byte, bucketSlack)); err != nil {
		return err
	}
	binary.LittleEndian.PutUint64(sec.table, sec.keys)
	binary.LittleEndian.PutUint64(sec.table[16:], uint64(sec.area))
	binary.LittleEndian.PutUint64(sec.table[24:], sec.buckets)
	if err := w.bw.Flush(); err != nil {
		return err
	}
	if _, err := w.f.WriteAt(sec.table, sec.start); err != nil {
		return err
	}
	sum, err := w.checksum(sec.start, w.off-sec.start)
	if err != nil {
		return err
	}
	w.dir = append(w.dir, dirEntry{id: sec.spec.id, encoding: encRaw, offset: uint64(sec.start), length: uint64(w.off - sec.start), checksum: sum})
	return nil
}

// builtParts delivers a collection's partitions, placed and packed on
// every core, in NPA order.
type builtParts struct {
	npas    []int            // the partitions with rows, in order
	results []chan builtPart // one per entry of npas
	tokens  chan struct{}    // bound the partitions built ahead of the writer
}

func buildParts(ctx context.Context, src rowSource, layout *numLayout) *builtParts {
	bp := &builtParts{}
	for npa := range partitions {
		if src.has(npa) {
			bp.npas = append(bp.npas, npa)
		}
	}
	workers := runtime.GOMAXPROCS(0)
	bp.results = make([]chan builtPart, len(bp.npas))
	for i := range bp.results {
		bp.results[i] = make(chan builtPart, 1)
	}
	bp.tokens = make(chan struct{}, workers+1)
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range bp.npas {
			select {
			case bp.tokens <- struct{}{}:
				next <- i
			case <-ctx.Done():
				return
			}
		}
	}()
	for range workers {
		go func() {
			for i := range next {
				bp.results[i] <- src.build(bp.npas[i], layout)
			}
		}()
	}
	return bp
}

// next waits for the i-th partition; every one must be taken in order,
// until ctx is done.
func (bp *builtParts) next(ctx context.Context, i int) (builtPart, error) {
	select {
	case r := <-bp.results[i]:
		<-bp.tokens
		return r, nil
	case <-ctx.Done():
		return builtPart{}, ctx.Err()
	}
}

// build takes partition npa's rows, drops duplicates (the first row of a
// number wins) and places and packs the rest.
func (p *partitioned[T]) build(npa int, layout *numLayout) builtPart {
	rows, err := p.take(npa)
	var r builtPart
	if err != nil {
		r.err = err
		return r
	}
	kept := rows[:0]
	for i, e := range rows {
		if e.rem < keyBase {
			r.err = fmt.Errorf("NPA %03d: number %03d%07d has an NXX below 200", npa, npa, e.rem)
			return r
		}
		if i > 0 && e.rem == rows[i-1].rem {
			first := kept[len(kept)-1]
			r.dups = append(r.dups, dup{tn: uint64(npa)*10000000 + uint64(e.rem), line: int(e.line), first: int(first.line)})
			continue
		}
		kept = append(kept, e)
	}
	if len(kept) == 0 {
		return r
	}
	type keyed struct {
		x uint64
		i uint32
	}
	ks := make([]keyed, len(kept))
	for i, e := range kept {
		ks[i] = keyed{permute(uint64(e.rem) - keyBase), uint32(i)}
	}
	slices.SortFunc(ks, func(a, b keyed) int { return cmp.Compare(a.x, b.x) })
	xs := make([]uint64, len(ks))
	for i, k := range ks {
		xs[i] = k.x
	}
	pt, place := planTable(xs, layout.payload)
	r.buckets = packTable(&pt, xs, place, layout, func(i int) fieldValues { return p.codec.vals(kept[ks[i].i].v) })
	r.pt = pt
	return r
}
