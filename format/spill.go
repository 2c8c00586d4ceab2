package format

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/lnpdb/lnpdb/internal/core/vfs"
)

// Bounded memory. A Writer keeps per-number rows in memory (partition.go)
// up to the bytes Writer.SetMemory allows each side (ported; messaging,
// CNAM and trust). Past that, the side's collection holding the most rows is
// written to its spill file: fixed-size records (remainder, source line,
// packed payload) appended NPA by NPA, each run remembered as an extent.
// When the section is written, each NPA's worker reads its extents back
// beside whatever is still in memory, then sorts, checks duplicates and
// hashes exactly as for an in-memory build, so the table's bytes do not
// depend on whether or where rows spilled. A Writer therefore holds at most
// the budget of rows, plus a few NPAs being hashed (an NPA has at most 10^7
// numbers), whatever the number of rows in the source.
//
// Spill files live in the directory SetMemory names, created, written and
// removed through the Writer's vfs.FS like every other file format writes
// (so that the fault tests fail them too).
// Each is unlinked as soon as it is created where the system allows it, so
// that no exit, not even a crash, leaves one behind; where it does not, it
// is removed when the Writer is closed.

// rowCodec turns a payload into its record field values and back; a spill
// record stores each field as a u32 (every field of every section fits).
type rowCodec[T any] struct {
	fields   int // field values in a payload
	memSize  int // bytes of an entry in memory
	vals     func(T) fieldValues
	fromVals func(*fieldValues) T
}

func newCodec[T any](fields int, vals func(T) fieldValues, fromVals func(*fieldValues) T) *rowCodec[T] {
	return &rowCodec[T]{fields: fields, memSize: int(unsafe.Sizeof(entry[T]{})), vals: vals, fromVals: fromVals}
}

func (c *rowCodec[T]) recSize() int { return 8 + 4*c.fields }

func (c *rowCodec[T]) put(p []byte, v T) {
	vals := c.vals(v)
	for i := range c.fields {
		binary.LittleEndian.PutUint32(p[4*i:], uint32(vals[i]))
	}
}

func (c *rowCodec[T]) get(p []byte) T {
	var vals fieldValues
	for i := range c.fields {
		vals[i] = uint64(binary.LittleEndian.Uint32(p[4*i:]))
	}
	return c.fromVals(&vals)
}

var (
	portedCodec = newCodec(2, func(v portedRow) fieldValues {
		return fieldValues{uint64(v.pair), uint64(v.act)}
	}, func(v *fieldValues) portedRow {
		return portedRow{pair: uint32(v[0]), act: uint32(v[1])}
	})
	messagingCodec = newCodec(1, func(v messagingRow) fieldValues {
		return fieldValues{uint64(v.tuple)}
	}, func(v *fieldValues) messagingRow {
		return messagingRow{tuple: uint32(v[0])}
	})
	cnamCodec = newCodec(1, func(v cnamRow) fieldValues {
		return fieldValues{uint64(v.name)}
	}, func(v *fieldValues) cnamRow {
		return cnamRow{name: uint32(v[0])}
	})
	trustCodec = newCodec(4, func(v trustRow) fieldValues {
		return fieldValues{uint64(v.spam), uint64(v.complaints), uint64(v.first), uint64(v.last)}
	}, func(v *fieldValues) trustRow {
		return trustRow{spam: uint8(v[0]), complaints: uint32(v[1]), first: uint32(v[2]), last: uint32(v[3])}
	})
)

// extent is a run of one NPA's records in a spill file.
type extent struct {
	off int64
	n   int
}

// spillFile holds one collection's spilled rows.
type spillFile struct {
	fs   vfs.FS
	f    vfs.File
	name string // set while the file still has to be removed
	bw   *bufio.Writer
	off  int64
	ext  [partitions][]extent
}

func newSpillFile(fs vfs.FS, dir string) (*spillFile, error) {
	f, err := fs.CreateTemp(dir, ".lnpdb-spill-*")
	if err != nil {
		return nil, fmt.Errorf("format: spill file: %w", err)
	}
	s := &spillFile{fs: fs, f: f, bw: bufio.NewWriterSize(f, 1<<20)}
	if fs.Remove(f.Name()) != nil {
		s.name = f.Name()
	}
	return s, nil
}

// finish makes everything spilled readable.
func (s *spillFile) finish() error {
	if s == nil {
		return nil
	}
	if err := s.bw.Flush(); err != nil {
		return fmt.Errorf("format: spill file: %w", err)
	}
	return nil
}

func (s *spillFile) close() {
	if s == nil {
		return
	}
	s.f.Close()
	if s.name != "" {
		s.fs.Remove(s.name)
	}
}

// spiller is a collection as a Writer's budget sees it.
type spiller interface {
	heldBytes() int64
	spillAll(fs vfs.FS, dir string) (int, error)
	finishSpill() error
	closeSpill()
}

func (p *partitioned[T]) heldBytes() int64 { return int64(p.mem) * int64(p.codec.memSize) }
func (p *partitioned[T]) finishSpill() error {
	return p.spill.finish()
}

// closeSpill closes and removes the spill file; it may be called again.
func (p *partitioned[T]) closeSpill() {
	p.spill.close()
	p.spill = nil
}

// spillAll appends every row in memory to the spill file, releases them
// and returns how many there were.
func (p *partitioned[T]) spillAll(fs vfs.FS, dir string) (int, error) {
	if p.mem == 0 {
		return 0, nil
	}
	if p.spill == nil {
		s, err := newSpillFile(fs, dir)
		if err != nil {
			return 0, err
		}
		p.spill = s
	}
	rows := 0
	s, rs := p.spill, p.codec.recSize()
	var buf []byte
	for npa := range partitions {
		chunks := p.parts[npa]
		if len(chunks) == 0 {
			continue
		}
		x := extent{off: s.off}
		for i, c := range chunks {
			if len(buf) < len(c)*rs {
				buf = make([]byte, len(c)*rs)
			}
			b := buf[:len(c)*rs]
			for j := range c {
				e := &c[j]
				r := b[j*rs:]
				binary.LittleEndian.PutUint32(r, e.rem)
				binary.LittleEndian.PutUint32(r[4:], e.line)
				p.codec.put(r[8:], e.v)
			}
			if _, err := s.bw.Write(b); err != nil {
				return 0, fmt.Errorf("format: spill file: %w", err)
			}
			rows += len(c)
			s.off += int64(len(b))
			x.n += len(c)
			chunks[i] = nil
		}
		p.parts[npa] = nil
		s.ext[npa] = append(s.ext[npa], x)
	}
	if p.held != nil {
		*p.held -= p.heldBytes()
	}
	p.mem = 0
	return rows, nil
}

// readExtents appends the rows of the given extents to out.
func readExtents[T any](s *spillFile, c *rowCodec[T], ext []extent, out []entry[T]) ([]entry[T], error) {
	rs, most := c.recSize(), 0
	for _, x := range ext {
		most = max(most, x.n)
	}
	buf := make([]byte, min(most, chunkLen)*rs)
	for _, x := range ext {
		for done := 0; done < x.n; {
			k := min(x.n-done, chunkLen)
			b := buf[:k*rs]
			if _, err := s.f.ReadAt(b, x.off+int64(done*rs)); err != nil {
				return nil, fmt.Errorf("format: spill file: %w", err)
			}
			for j := range k {
				r := b[j*rs:]
				out = append(out, entry[T]{rem: binary.LittleEndian.Uint32(r), line: binary.LittleEndian.Uint32(r[4:]), v: c.get(r[8:])})
			}
			done += k
		}
	}
	return out, nil
}

// budget decides when a Writer's collections spill.
type budget struct {
	limit   int64 // bytes of rows in memory; 0 never spills
	fs      vfs.FS
	dir     string
	held    int64
	all     []spiller
	spilled int // rows written to spill files
}

// check spills the largest collection while the rows held exceed the limit.
func (g *budget) check() error {
	for g.limit > 0 && g.held > g.limit {
		var big spiller
		var most int64
		for _, s := range g.all {
			if h := s.heldBytes(); h > most {
				big, most = s, h
			}
		}
		if big == nil {
			return nil
		}
		n, err := big.spillAll(g.fs, g.dir)
		if err != nil {
			return err
		}
		g.spilled += n
	}
	return nil
}

func (g *budget) close() {
	for _, s := range g.all {
		s.closeSpill()
	}
}
