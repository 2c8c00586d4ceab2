// Package benchdata provides generated tables for benchmarks: built once per
// size and seed into the system's temporary directory (never the source
// tree) and reused across runs, with query sets of hits and misses.
package benchdata

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/format/build"
	"github.com/lnpdb/lnpdb/internal/ingest/gen"
	"github.com/lnpdb/lnpdb/internal/testutil/memfloor"
)

// Seed is the generator seed of every benchmark table.
const Seed = 1

// Table is a generated table and what benchmarks query it with.
type Table struct {
	Path string // the built table
	Src  string // its source directory
	Size int64  // file size in bytes
	// Queries are 10-digit numbers, half of them ported (hits) and half not
	// (misses: numbers in assigned codes that are not ported, and numbers in
	// vacant codes), shuffled.
	Queries []uint64
	// Canonical holds Queries as 11-digit strings.
	Canonical []string
}

var (
	mu     sync.Mutex
	tables = map[int]*Table{}
)

// Get returns the table with n ported numbers, generating and building it
// on first use (minutes for tens of millions). Set LNPDB_BENCH_DIR to keep
// tables somewhere other than the temporary directory.
func Get(tb testing.TB, n int) *Table {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	if t, ok := tables[n]; ok {
		return t
	}
	base := os.Getenv("LNPDB_BENCH_DIR")
	if base == "" {
		base = filepath.Join(os.TempDir(), "lnpdb-bench")
	}
	dir := filepath.Join(base, fmt.Sprintf("%d-seed%d", n, Seed))
	src := filepath.Join(dir, "src")
	path := filepath.Join(dir, "table.lnpdb")
	ctx := context.Background()
	if _, err := os.Stat(filepath.Join(src, "ported.csv")); err != nil {
		if _, err := gen.Generate(ctx, src, gen.Config{Seed: Seed, Ported: n}); err != nil {
			tb.Fatalf("generating %d: %v", n, err)
		}
	}
	// A table this reader cannot open (one written by an older format
	// version, or damaged) is built again.
	if db, err := format.Open(path); err == nil {
		db.Close()
	} else {
		os.Remove(path)
		os.Remove(format.JournalPath(path))
	}
	if _, err := os.Stat(path); err != nil {
		if _, err := build.Build(ctx, os.DirFS(src), path, build.Options{BuiltAt: time.Unix(1790000000, 0)}); err != nil {
			tb.Fatalf("building %d: %v", n, err)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	t := &Table{Path: path, Src: src, Size: st.Size()}
	if err := t.queries(1 << 20); err != nil {
		tb.Fatal(err)
	}
	tables[n] = t
	return t
}

func (t *Table) queries(count int) error {
	ported, err := column(filepath.Join(t.Src, "ported.csv"), "tn")
	if err != nil {
		return err
	}
	slices.Sort(ported)
	codes, err := codeList(filepath.Join(t.Src, "blocks.csv"))
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(Seed, 42))
	qs := make([]uint64, 0, count)
	for len(qs) < count/2 {
		qs = append(qs, ported[r.IntN(len(ported))])
	}
	for len(qs) < count {
		var tn uint64
		if len(qs)%4 == 0 {
			tn = 2000000000 + r.Uint64N(8000000000) // mostly vacant codes
		} else {
			tn = codes[r.IntN(len(codes))]*10000 + r.Uint64N(10000)
		}
		if _, hit := slices.BinarySearch(ported, tn); !hit {
			qs = append(qs, tn)
		}
	}
	r.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
	t.Queries = qs
	t.Canonical = make([]string, len(qs))
	for i, q := range qs {
		t.Canonical[i] = "1" + strconv.FormatUint(q, 10)
	}
	return nil
}

func column(path, name string) ([]uint64, error) {
	var out []uint64
	col := -1
	err := EachRow(path, func(hdr, rec []string) error {
		if col < 0 {
			if col = slices.Index(hdr, name); col < 0 {
				return fmt.Errorf("%s: no column %s", path, name)
			}
		}
		s := rec[col]
		if len(s) == 11 {
			s = s[1:]
		}
		v, err := strconv.ParseUint(s, 10, 64)
		out = append(out, v)
		return err
	})
	return out, err
}

// EachRow calls fn with the header and each data row of the CSV file at
// path, in order, until fn returns an error, which it returns. The row's
// slice is reused from call to call.
func EachRow(path string, fn func(header, row []string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := csv.NewReader(f)
	hdr, err := r.Read()
	if err != nil {
		return err
	}
	r.ReuseRecord = true
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(hdr, rec); err != nil {
			return err
		}
	}
}

// codeList returns the assigned NPA-NXX codes as npa*1000+nxx.
func codeList(path string) ([]uint64, error) {
	npas, err := column(path, "npa")
	if err != nil {
		return nil, err
	}
	nxxs, err := column(path, "nxx")
	if err != nil {
		return nil, err
	}
	out := make([]uint64, len(npas))
	for i := range npas {
		out[i] = npas[i]*1000 + nxxs[i]
	}
	return out, nil
}

// Floor measures the memory floor for a buffer of size bytes: nanoseconds
// per dependent random 8-byte read, the median of five rounds. Benchmarks
// report their time as a multiple of it, measured in the same run.
func Floor(size int64) float64 {
	mu.Lock()
	defer mu.Unlock()
	if f, ok := floors[size]; ok {
		return f
	}
	c := memfloor.New(size, Seed)
	c.Step(c.Len()) // touch every page once
	const steps = 1 << 21
	var rounds []float64
	for range 5 {
		start := time.Now()
		runtime.KeepAlive(c.Step(steps))
		rounds = append(rounds, float64(time.Since(start).Nanoseconds())/steps)
	}
	slices.Sort(rounds)
	floors[size] = rounds[2]
	return rounds[2]
}

var floors = map[int64]float64{}

// Report adds the benchmark's time per operation as a multiple of the memory
// floor for a buffer the size of t's file ("x-floor"), and the floor itself.
func (t *Table) Report(b *testing.B, opsPerIter int) {
	floor := Floor(t.Size)
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(opsPerIter)
	b.ReportMetric(floor, "floor-ns")
	b.ReportMetric(perOp/floor, "x-floor")
}
