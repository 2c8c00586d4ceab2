package build_test

import (
	"bytes"
	"errors"
	"io"
	"runtime/metrics"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/format/build"
	"github.com/lnpdb/lnpdb/internal/core/lineio"
	"github.com/lnpdb/lnpdb/internal/ingest/source"
)

// fuzzCap bounds what one fuzz input may decompress to, so that an input
// runs in a moment; a bomb past it is cut there, which is still a line far
// longer than lineio.Max.
const fuzzCap = 16 << 20

// compressedReaders are the shapes a compressed input is read as: CSV, an
// NPAC record file, a numbering report.
var compressedReaders = []func(io.Reader, source.Options) error{
	func(r io.Reader, o source.Options) error {
		return source.ReadPorted(r, "f", o, func(*source.Ported) error { return nil })
	},
	func(r io.Reader, o source.Options) error {
		return source.ReadSubscriptionVersions(r, "f", o, func(*source.SV) error { return nil })
	},
	func(r io.Reader, o source.Options) error {
		return source.ReadNumberingReport(r, "f", o, func(*source.NumberingRecord) error { return nil })
	},
}

// counter counts the bytes a reader pulls.
type counter struct {
	r io.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// heapAllocs is the bytes the program has allocated on the heap so far.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// shortLines is the bytes of b in lines no longer than lineio.Max, ends
// included, and the offset where each line starts.
func shortLines(b []byte) (short int, starts []int) {
	for off := 0; off < len(b); {
		starts = append(starts, off)
		i := bytes.IndexAny(b[off:], "\r\n")
		if i < 0 {
			i = len(b) - off
		}
		if i <= lineio.Max {
			short += i + 1
		}
		off += i + 1
	}
	return short, starts
}

// FuzzCompressedInput: a gzip or zstd input, however far it expands, is
// read in memory bounded by its lines of ordinary length: the heap
// allocated while reading it is at most 24 MiB plus four times the bytes
// of lines within lineio.Max (a line past it costs nothing more, however
// long); and without SkipBadRows a line past the bound is refused having
// read at most lineio.Max and a few buffers of it.
func FuzzCompressedInput(f *testing.F) {
	// The seed corpus (testdata/fuzz/FuzzCompressedInput) holds bombs and
	// ordinary files, gzip and zstd: a header and a 12 MiB line, 12 MiB of
	// zeros, 2 MiB of blank lines, a long line between good ones, in each
	// reader's shape.
	f.Fuzz(func(t *testing.T, data []byte, kind uint8) {
		name := "f.csv.gz"
		if kind&1 == 1 {
			name = "f.csv.zst"
		}
		read := compressedReaders[int(kind>>1)%len(compressedReaders)]
		open := func() (*counter, func()) {
			r, closeZ, err := build.Decompress(name, bytes.NewReader(data))
			if err != nil {
				return nil, nil
			}
			return &counter{r: io.LimitReader(r, fuzzCap)}, closeZ
		}
		c, closeZ := open()
		if c == nil {
			return
		}
		plain, _ := io.ReadAll(c) // what the readers see (a damaged stream: up to the damage)
		closeZ()

		c, closeZ = open()
		before := heapAllocs()
		_ = read(c, source.Options{SkipBadRows: true})
		allocated := heapAllocs() - before
		closeZ()
		short, starts := shortLines(plain[:min(int(c.n), len(plain))])
		require.LessOrEqual(t, allocated, uint64(24<<20+4*short), "heap allocated reading %d bytes, %d of them in short lines", c.n, short)

		c, closeZ = open()
		err := read(c, source.Options{})
		closeZ()
		var re *source.RowError
		if errors.As(err, &re) && errors.Is(err, lineio.ErrTooLong) {
			require.LessOrEqual(t, re.Line, len(starts))
			require.LessOrEqual(t, c.n, int64(starts[re.Line-1]+lineio.Max+3*64<<10), "bytes read to refuse line %d", re.Line)
		}
	})
}
