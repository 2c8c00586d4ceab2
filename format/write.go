package format

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/bits"
	"runtime"
	"slices"

	"github.com/cespare/xxhash/v2"
	"github.com/lnpdb/lnpdb/format/internal/vfs"
	"github.com/lnpdb/lnpdb/internal/mphf"
)

// fileWriter appends sections to the output file and remembers where each
// one went.
type fileWriter struct {
	f   vfs.File
	bw  *bufio.Writer
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

func (b *builder) write(f vfs.File, builtAt int64) (int64, error) {
	w := &fileWriter{f: f, bw: bufio.NewWriterSize(f, 1<<20)}
	prefix := headerSize + dirSize(len(sectionOrder))
	if err := w.write(make([]byte, prefix)); err != nil {
		return 0, err
	}
	lrns, lrnRemap := b.sortedLRNs()
	codes, thousands := 0, 0
	for _, cr := range b.codes {
		if cr.hasCode {
			codes++
		}
		for _, t := range cr.thousands {
			if t.carrier != 0 {
				thousands++
			}
		}
	}
	metaJSON, err := json.Marshal(meta{Codes: codes, ThousandsBlocks: thousands})
	if err != nil {
		return 0, err
	}
	steps := []func() error{
		func() error { return w.section(secMeta, encZstd, metaJSON) },
		func() error { return w.section(secCarriers, encZstd, encodeCarriers(b.carriers)) },
		func() error { return w.section(secRateCenters, encZstd, encodeRateCenters(b.rcs)) },
		func() error { return w.section(secLRNs, encZstd, encodeLRNs(lrns)) },
		func() error { return w.section(secMsgStrings, encZstd, encodeStrings(b.msgStrs)) },
		func() error { return w.section(secPairs, encZstd, encodePairs(b.pairs, lrnRemap)) },
		func() error { return w.section(secMsgTuples, encZstd, encodeMsgTuples(b.msgTuples)) },
		func() error { return w.section(secBlocks, encRaw, b.encodeBlocks(lrnRemap)) },
		func() error {
			return writeNumSection(b, w, secPorted, b.portedFile, &b.ported,
				[]uint{widthFor(len(b.pairs)), 32},
				func(v portedRow) [maxFields]uint64 { return [maxFields]uint64{uint64(v.pair), uint64(v.act)} })
		},
		func() error {
			return writeNumSection(b, w, secMessaging, "messaging.csv", &b.messaging,
				[]uint{widthFor(len(b.msgTuples))},
				func(v messagingRow) [maxFields]uint64 { return [maxFields]uint64{uint64(v.tuple)} })
		},
		func() error {
			return writeNumSection(b, w, secCNAM, "cnam.csv", &b.cnam,
				[]uint{widthFor(len(b.names))},
				func(v cnamRow) [maxFields]uint64 { return [maxFields]uint64{uint64(v.name)} })
		},
		func() error {
			return writeNumSection(b, w, secTrust, "trust.csv", &b.trust,
				[]uint{3, uint(max(1, bits.Len32(b.maxComplaints))), 32, 32},
				func(v trustRow) [maxFields]uint64 {
					return [maxFields]uint64{uint64(v.spam), uint64(v.complaints), uint64(v.first), uint64(v.last)}
				})
		},
		func() error { return b.writeNames(w) },
	}
	for _, step := range steps {
		if err := b.ctx.Err(); err != nil {
			return 0, err
		}
		if err := step(); err != nil {
			return 0, err
		}
	}
	if err := w.bw.Flush(); err != nil {
		return 0, err
	}
	h := header{sections: uint32(len(w.dir)), fileSize: uint64(w.off), builtAt: builtAt}
	pre := append(h.encode(), encodeDir(w.dir)...)
	if _, err := f.WriteAt(pre, 0); err != nil {
		return 0, err
	}
	return w.off, nil
}

func (b *builder) encodeBlocks(lrnRemap []uint32) []byte {
	// Walk codes in number order: the same source gives the same bytes.
	keys := make([]uint32, 0, len(b.codes))
	for k := range b.codes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var npaIndex [partitions]uint32
	for i := range npaIndex {
		npaIndex[i] = noCodeTable
	}
	var indexes uint32
	groups := uint32(0)
	for _, k := range keys {
		if npa := k / 1000; npaIndex[npa] == noCodeTable {
			npaIndex[npa] = indexes
			indexes++
		}
		if b.codes[k].split {
			groups++
		}
	}
	entries := uint32(len(keys))
	out := make([]byte, blocksHeader+int(indexes)*codeIndexSize+int(entries)*codeEntrySize+int(groups)*thouGroupSize)
	for i, v := range npaIndex {
		binary.LittleEndian.PutUint32(out[i*4:], v)
	}
	binary.LittleEndian.PutUint32(out[partitions*4:], indexes)
	binary.LittleEndian.PutUint32(out[partitions*4+4:], entries)
	binary.LittleEndian.PutUint32(out[partitions*4+8:], groups)
	lrn := func(v uint32) uint32 {
		if v == 0 {
			return 0
		}
		return lrnRemap[v-1] + 1
	}
	putRow := func(p []byte, r blockRow) {
		binary.LittleEndian.PutUint32(p[0:], r.carrier)
		binary.LittleEndian.PutUint32(p[4:], r.rc)
		binary.LittleEndian.PutUint32(p[8:], lrn(r.lrn))
		binary.LittleEndian.PutUint32(p[12:], r.activated)
	}
	indexBase := blocksHeader
	entryBase := indexBase + int(indexes)*codeIndexSize
	thouBase := entryBase + int(entries)*codeEntrySize
	lastWord := -1
	var g uint32
	for i, k := range keys {
		npa, nxx := k/1000, int(k%1000)
		word := out[indexBase+int(npaIndex[npa])*codeIndexSize+(nxx/64)*indexWordSize:]
		if wk := int(npa)*16 + nxx/64; wk != lastWord {
			binary.LittleEndian.PutUint32(word[8:], uint32(i))
			lastWord = wk
		}
		binary.LittleEndian.PutUint64(word, binary.LittleEndian.Uint64(word)|1<<(nxx%64))
		cr := b.codes[k]
		p := out[entryBase+i*codeEntrySize:]
		if cr.hasCode {
			putRow(p, cr.code)
		}
		if cr.split {
			g++
			binary.LittleEndian.PutUint32(p[16:], g)
			for x, t := range cr.thousands {
				if t.carrier != 0 {
					putRow(out[thouBase+int(g-1)*thouGroupSize+x*thouEntrySize:], t)
				}
			}
		}
	}
	return out
}

func (b *builder) writeNames(w *fileWriter) error {
	hdr, frames := encodeNameChunks(b.names)
	if err := w.align(); err != nil {
		return err
	}
	start := w.off
	if err := w.write(hdr); err != nil {
		return err
	}
	for _, f := range frames {
		if err := w.write(f); err != nil {
			return err
		}
	}
	sum, err := w.checksum(start, w.off-start)
	if err != nil {
		return err
	}
	w.dir = append(w.dir, dirEntry{id: secCNAMNames, encoding: encRaw, offset: uint64(start), length: uint64(w.off - start), checksum: sum})
	return nil
}

// builtPart is one partition, hashed and packed.
type builtPart struct {
	hash, recs []byte
	n          int
	dups       []dup
	err        error
}

type dup struct {
	tn          uint64
	line, first int
}

// writeNumSection writes a per-number section: partitions are hashed and
// packed in parallel and written in NPA order, so the output does not depend
// on scheduling.
func writeNumSection[T any](b *builder, w *fileWriter, id, file string, p *partitioned[T], widths []uint, payload func(T) [maxFields]uint64) error {
	layout, err := newLayout(widths...)
	if err != nil {
		return fmt.Errorf("format: section %s: %w", id, err)
	}
	if err := w.align(); err != nil {
		return err
	}
	start := w.off
	table := make([]byte, numHeaderSize+partitions*partEntrySize)
	for i, wd := range widths {
		table[8+i] = byte(wd)
	}
	if err := w.write(table); err != nil {
		return err
	}
	if err := p.finishSpill(); err != nil {
		return err
	}
	var npas []int
	for npa := range partitions {
		if p.has(npa) {
			npas = append(npas, npa)
		}
	}
	workers := runtime.GOMAXPROCS(0)
	results := make([]chan builtPart, len(npas))
	for i := range results {
		results[i] = make(chan builtPart, 1)
	}
	// tokens bound the partitions built ahead of the writer.
	tokens := make(chan struct{}, workers+1)
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range npas {
			select {
			case tokens <- struct{}{}:
				next <- i
			case <-b.ctx.Done():
				return
			}
		}
	}()
	for range workers {
		go func() {
			for i := range next {
				results[i] <- buildPart(p, npas[i], layout, payload)
			}
		}()
	}
	var keys uint64
	var firstErr error
	for i, npa := range npas {
		var r builtPart
		select {
		case r = <-results[i]:
		case <-b.ctx.Done():
			return b.ctx.Err()
		}
		<-tokens
		if firstErr != nil {
			continue
		}
		if r.err != nil {
			firstErr = fmt.Errorf("format: section %s, NPA %03d: %w", id, npa, r.err)
			continue
		}
		for _, d := range r.dups {
			if err := b.rowErr(file, d.line, "tn", "%s listed twice (first on line %d)", canonical(d.tn), d.first); err != nil {
				firstErr = err
				break
			}
		}
		if firstErr != nil {
			continue
		}
		if firstErr = w.align(); firstErr != nil {
			continue
		}
		pe := table[numHeaderSize+npa*partEntrySize:]
		binary.LittleEndian.PutUint64(pe, uint64(w.off-start))
		if firstErr = w.write(r.hash); firstErr != nil {
			continue
		}
		if firstErr = w.align(); firstErr != nil {
			continue
		}
		binary.LittleEndian.PutUint64(pe[8:], uint64(w.off-start))
		binary.LittleEndian.PutUint32(pe[16:], uint32(r.n))
		firstErr = w.write(r.recs)
		keys += uint64(r.n)
	}
	if firstErr != nil {
		return firstErr
	}
	binary.LittleEndian.PutUint64(table, keys)
	if err := w.bw.Flush(); err != nil {
		return err
	}
	if _, err := w.f.WriteAt(table, start); err != nil {
		return err
	}
	sum, err := w.checksum(start, w.off-start)
	if err != nil {
		return err
	}
	w.dir = append(w.dir, dirEntry{id: id, encoding: encRaw, offset: uint64(start), length: uint64(w.off - start), checksum: sum})
	return nil
}

func buildPart[T any](p *partitioned[T], npa int, layout numLayout, payload func(T) [maxFields]uint64) builtPart {
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
	keys := make([]uint64, len(kept))
	for i, e := range kept {
		keys[i] = uint64(e.rem)
	}
	t, err := mphf.Build(keys, uint64(npa))
	if err != nil {
		r.err = err
		return r
	}
	order := make([]uint32, len(kept))
	for i, k := range keys {
		order[t.Lookup(k)] = uint32(i)
	}
	keys = nil
	bw := bitWriter{buf: make([]byte, 0, layout.recordBytes(uint64(len(kept))))}
	for _, i := range order {
		e := &kept[i]
		bw.put(uint64(e.rem)-keyBase, keyBits)
		v := payload(e.v)
		for f := 0; f < maxFields && layout.widths[f] != 0; f++ {
			bw.put(v[f], uint(layout.widths[f]))
		}
	}
	r.hash = t.AppendBinary(nil)
	r.recs = bw.finish()
	r.n = len(kept)
	return r
}
