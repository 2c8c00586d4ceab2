package format

import (
	"cmp"
	"slices"

	"github.com/lnpdb/lnpdb/internal/nanp"
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
// the difference between fitting in memory and not.
const chunkLen = 8192

// partitioned collects rows by NPA in fixed-size chunks.
type partitioned[T any] struct {
	parts [partitions][][]entry[T]
	n     int
}

func (p *partitioned[T]) add(tn nanp.Number, line int, v T) {
	npa := uint64(tn) / 10000000
	chunks := p.parts[npa]
	if len(chunks) == 0 || len(chunks[len(chunks)-1]) == chunkLen {
		chunks = append(chunks, make([]entry[T], 0, chunkLen))
		p.parts[npa] = chunks
	}
	last := &chunks[len(chunks)-1]
	*last = append(*last, entry[T]{rem: uint32(uint64(tn) % 10000000), line: uint32(line), v: v})
	p.n++
}

// take removes partition npa's rows and returns them sorted by number, then
// by line, releasing the chunks.
func (p *partitioned[T]) take(npa int) []entry[T] {
	chunks := p.parts[npa]
	p.parts[npa] = nil
	n := 0
	for _, c := range chunks {
		n += len(c)
	}
	out := make([]entry[T], 0, n)
	for i, c := range chunks {
		out = append(out, c...)
		chunks[i] = nil
	}
	slices.SortFunc(out, func(a, b entry[T]) int {
		if c := cmp.Compare(a.rem, b.rem); c != 0 {
			return c
		}
		return cmp.Compare(a.line, b.line)
	})
	return out
}
