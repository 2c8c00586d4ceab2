package format

import (
	"cmp"
	"slices"

	"github.com/lnpdb/lnpdb/internal/core/nanp"
)

// entry is one per-number source row on its way into a section: the
// number's remainder within its NPA, its source line (to name both rows of a
// duplicate and to keep the first), and the payload.
type entry[T any] struct {
	rem  uint32
	line uint32
	v    T
}

// chunkLen bounds the memory a partition wastes to one partly filled chunk,
// where a growing slice could waste half its capacity: at NPAC scale that is
// the difference between fitting in memory and not. A partition's chunks
// start at firstChunkLen and double up to chunkLen, so that the thousand
// partitions of four sections do not cost a full chunk each before they
// hold a row worth it.
const (
	chunkLen      = 8192
	firstChunkLen = 64
)

// partitioned collects rows by NPA in fixed-size chunks. Rows held in
// memory may be moved to a spill file (spill.go); take merges both.
type partitioned[T any] struct {
	parts [partitions][][]entry[T]
	n     int // rows added, in memory and spilled
	mem   int // capacity of the chunks in memory, in rows

	// held, when set, counts the bytes of chunks in memory across the
	// Writer's collections on one side, to decide when to spill.
	held  *int64
	codec *rowCodec[T]
	spill *spillFile
	// lo and hi are the smallest nonzero and the largest value of each
	// record field over the rows added, to size the fields.
	lo, hi fieldValues
}

func (p *partitioned[T]) add(tn nanp.Number, line int, v T) {
	npa := uint64(tn) / 10000000
	chunks := p.parts[npa]
	if len(chunks) == 0 || len(chunks[len(chunks)-1]) == cap(chunks[len(chunks)-1]) {
		n := firstChunkLen
		if len(chunks) > 0 {
			n = min(chunkLen, 2*cap(chunks[len(chunks)-1]))
		}
		chunks = append(chunks, make([]entry[T], 0, n))
		p.parts[npa] = chunks
		p.mem += n
		if p.held != nil {
			*p.held += int64(n * p.codec.memSize)
		}
	}
	p.observe(v)
	last := &chunks[len(chunks)-1]
	*last = append(*last, entry[T]{rem: uint32(uint64(tn) % 10000000), line: uint32(line), v: v})
	p.n++
}

// has reports whether partition npa has any rows.
func (p *partitioned[T]) has(npa int) bool {
	return len(p.parts[npa]) > 0 || (p.spill != nil && len(p.spill.ext[npa]) > 0)
}

// take removes partition npa's rows and returns them sorted by number, then
// by line, releasing the chunks. Partitions may be taken concurrently once
// the spill file, if any, is finished.
func (p *partitioned[T]) take(npa int) ([]entry[T], error) {
	chunks := p.parts[npa]
	p.parts[npa] = nil
	n := 0
	for _, c := range chunks {
		n += len(c)
	}
	var ext []extent
	if p.spill != nil {
		ext = p.spill.ext[npa]
		p.spill.ext[npa] = nil
		for _, x := range ext {
			n += x.n
		}
	}
	out := make([]entry[T], 0, n)
	for i, c := range chunks {
		out = append(out, c...)
		chunks[i] = nil
	}
	if len(ext) > 0 {
		var err error
		if out, err = readExtents(p.spill, p.codec, ext, out); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, func(a, b entry[T]) int {
		if c := cmp.Compare(a.rem, b.rem); c != 0 {
			return c
		}
		return cmp.Compare(a.line, b.line)
	})
	return out, nil
}

// observe widens the field ranges to v's values.
func (p *partitioned[T]) observe(v T) {
	vals := p.codec.vals(v)
	for i, x := range vals {
		if x != 0 && (p.lo[i] == 0 || x < p.lo[i]) {
			p.lo[i] = x
		}
		p.hi[i] = max(p.hi[i], x)
	}
}

func (p *partitioned[T]) ranges() (lo, hi fieldValues) { return p.lo, p.hi }

// addValues adds tn's row given by its record field values.
func (p *partitioned[T]) addValues(tn uint64, v *fieldValues) {
	p.add(nanp.Number(tn), 0, p.codec.fromVals(v))
}
