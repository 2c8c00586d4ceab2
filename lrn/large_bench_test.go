package lrn_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/format/build"
	"github.com/lnpdb/lnpdb/internal/benchdata"
	"github.com/lnpdb/lnpdb/internal/gen"
	"github.com/lnpdb/lnpdb/internal/nanp"
	"github.com/lnpdb/lnpdb/lrn"
)

var benchPorted = flag.Int("bench.ported", 1_000_000, "ported numbers in the generated table of the Large benchmarks (0 skips them)")

var large struct {
	once    sync.Once
	db      *format.DB
	numbers []string
	size    int64 // file size, for the memory floor
	err     error
}

// largeTable generates and builds a table with -bench.ported ported numbers
// (once per size: later runs reuse it), opens it, and returns it with random canonical numbers to look
// up: half ported numbers, half random valid numbers (mostly misses).
func largeTable(b *testing.B) (*format.DB, []string) {
	if *benchPorted == 0 || testing.Short() {
		b.Skip("-bench.ported=0 or -short")
	}
	large.once.Do(func() {
		// The table is generated and built once per size into the system's
		// temporary directory and reused by later runs (LNPDB_BENCH_DIR
		// overrides the place, as for internal/benchdata).
		base := os.Getenv("LNPDB_BENCH_DIR")
		if base == "" {
			base = filepath.Join(os.TempDir(), "lnpdb-bench")
		}
		dir := filepath.Join(base, fmt.Sprintf("lrn-%d-seed1", *benchPorted))
		src := filepath.Join(dir, "src")
		path := filepath.Join(dir, "bench.lnpdb")
		// A table this reader cannot open (an older format version, or
		// damaged) is generated and built again.
		if db, err := format.Open(path); err == nil {
			db.Close()
		} else {
			os.RemoveAll(dir)
		}
		if _, err := os.Stat(path); err != nil {
			os.RemoveAll(dir)
			if _, err := gen.Generate(context.Background(), src, gen.Config{Seed: 1, Ported: *benchPorted,
				Messaging: gen.DefaultMessaging, CNAM: gen.DefaultCNAM, Trust: gen.DefaultTrust}); err != nil {
				large.err = err
				return
			}
			tmp := path + ".tmp"
			if _, err := build.Build(context.Background(), os.DirFS(src), tmp, build.Options{}); err != nil {
				large.err = err
				return
			}
			if large.err = os.Rename(tmp, path); large.err != nil {
				return
			}
		}
		if large.db, large.err = format.Open(path); large.err != nil {
			return
		}
		st, err := os.Stat(path)
		if err != nil {
			large.err = err
			return
		}
		large.size = st.Size()
		// The numbers to look up are drawn once per table and kept beside
		// it: drawing them reads the whole ported.csv.
		if large.numbers, large.err = largeNumbers(b, dir, src); large.err != nil {
			return
		}
		// Map the table in before timing: each first touch of a page is a
		// fault, which the first lookups of a fresh process would pay.
		for _, n := range large.numbers {
			if tn, err := nanp.ParseDigits(n); err == nil {
				if _, large.err = large.db.Get(uint64(tn), format.FieldAll); large.err != nil {
					return
				}
			}
		}
	})
	if large.err != nil {
		b.Fatal(large.err)
	}
	return large.db, large.numbers
}

// largeNumbers returns random canonical numbers to look up: half ported
// numbers, half random valid numbers (mostly misses), read from dir's
// numbers.txt (unless it holds another count) or, the first time, drawn
// from src and written there.
func largeNumbers(b *testing.B, dir, src string) ([]string, error) {
	const count = 1 << 20
	cache := filepath.Join(dir, "numbers.txt")
	if data, err := os.ReadFile(cache); err == nil {
		if numbers := strings.Fields(string(data)); len(numbers) == count {
			return numbers, nil
		}
	}
	// Sample the ported numbers (reservoir sampling keeps memory flat
	// whatever the table size), then write the numbers to look up
	// afresh, next to each other, as a caller's request batch would be.
	rng := rand.New(rand.NewPCG(1, 2))
	var ported []nanp.Number
	seen := 0
	readTNs(b, filepath.Join(src, gen.FilePorted), func(n nanp.Number) {
		if seen++; len(ported) < count/2 {
			ported = append(ported, n)
		} else if k := rng.IntN(seen); k < count/2 {
			ported[k] = n
		}
	})
	numbers := make([]string, count)
	for i := range numbers {
		n := ported[rng.IntN(len(ported))]
		for i%2 == 1 {
			if n = nanp.Number(2_000_000_000 + rng.Uint64N(8_000_000_000)); n.Valid() {
				break
			}
		}
		numbers[i] = n.String()
	}
	// Written aside and renamed, so that a run killed while writing leaves
	// no short list behind.
	if err := os.WriteFile(cache+".tmp", []byte(strings.Join(numbers, "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	return numbers, os.Rename(cache+".tmp", cache)
}

// readTNs calls fn with the tn column of every data row of a generated CSV
// file.
func readTNs(b *testing.B, path string, fn func(nanp.Number)) {
	col := -1
	err := benchdata.EachRow(path, func(header, rec []string) error {
		if col < 0 {
			col = slices.Index(header, "tn")
		}
		n, err := nanp.ParseDigits(rec[col])
		if err == nil {
			fn(n)
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
}

func BenchmarkLargeLookup(b *testing.B) {
	db, numbers := largeTable(b)
	for _, bo := range benchOptions {
		b.Run(bo.name, func(b *testing.B) {
			benchLookup(b, db, numbers, bo.opt)
			reportFloor(b, 1)
		})
		// The same lookups in a chain (BenchmarkDependentLookup).
		b.Run(bo.name+"-dependent", func(b *testing.B) {
			benchDependent(b, db, numbers, bo.opt)
			reportFloor(b, 1)
		})
	}
}

func BenchmarkLargeBatch(b *testing.B) {
	db, numbers := largeTable(b)
	benchBatch(b, db, numbers, true)
}

// reportFloor adds the time per number as a multiple of the memory floor
// for a buffer as large as the Large benchmarks' table, measured in the same
// run.
func reportFloor(b *testing.B, perIter int) {
	if large.size == 0 {
		return
	}
	floor := benchdata.Floor(large.size)
	b.ReportMetric(floor, "floor-ns")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(perIter)/floor, "x-floor")
}

// BenchmarkLargeGetMany takes a batch apart, per number: format.DB.GetMany
// of the Large numbers in batches of 256 with the block data only, with the
// ported section, and with the ported section and the block data only of
// numbers that are not ported (what lrn.LookupMany reads); and the ported
// read once more over the same 256 numbers again and again, whose lines
// and branches the CPU has learned: what a batch costs when memory is not
// the limit.
func BenchmarkLargeGetMany(b *testing.B) {
	db, numbers := largeTable(b)
	tns := make([]uint64, len(numbers))
	for i, n := range numbers {
		tn, err := nanp.ParseDigits(n)
		if err != nil {
			b.Fatal(err)
		}
		tns[i] = uint64(tn)
	}
	const batch = 256
	recs := make([]format.Record, batch)
	for _, c := range []struct {
		name string
		f    format.Fields
		tns  []uint64
	}{
		{"block", 0, tns},
		{"ported", format.FieldPorted, tns},
		{"ported-block-unless-ported", format.FieldPorted | format.BlockUnlessPorted, tns},
		{"ported-same-256", format.FieldPorted, tns[:batch]},
	} {
		b.Run(c.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				if err := db.GetMany(c.tns[i:i+batch], c.f, recs); err != nil {
					b.Fatal(err)
				}
				if i += batch; i+batch > len(c.tns) {
					i = 0
				}
			}
			reportPerNumber(b, batch)
			reportFloor(b, batch)
		})
	}
}

// BenchmarkLargeLookupByKind takes the dependent plain lookup apart by what
// the answer is: a ported number, a number of a pooled thousands-block, a
// number of an assigned code that routes on itself, a vacant number in an
// NPA that has assigned codes, and a vacant number in an NPA without any.
// Each kind's numbers are the Large numbers of that kind (at most 2^18 of
// them, a power of two, in the name), looked up in a chain as
// BenchmarkLargeLookup's "-dependent" cases are. The random half of the
// Large numbers falls in assigned codes seldom: those kinds get a few
// hundred or thousand numbers, whose lines stay in the cache, and time
// the CPU's part of the lookup rather than its miss.
func BenchmarkLargeLookupByKind(b *testing.B) {
	db, numbers := largeTable(b)
	// One Get per number: its kind, but for the vacant ones, which need
	// every number's NPA seen first.
	const vacant = ""
	npas := map[uint64]bool{}
	kindOf := make([]string, len(numbers))
	for i, n := range numbers {
		tn, err := nanp.ParseDigits(n)
		if err != nil {
			b.Fatal(err)
		}
		r, err := db.Get(uint64(tn), format.FieldPorted)
		if err != nil {
			b.Fatal(err)
		}
		switch {
		case r.Ported.OK:
			kindOf[i] = "ported"
		case r.Block.LRN != "":
			kindOf[i] = "pooled"
		case r.Block.Assigned:
			kindOf[i] = "code"
		default:
			kindOf[i] = vacant
		}
		if r.Block.Assigned {
			npas[uint64(tn)/10_000_000] = true
		}
	}
	kinds := map[string][]string{}
	var order []string
	for i, n := range numbers {
		kind := kindOf[i]
		if kind == vacant {
			kind = "vacant-npa"
			if tn, _ := nanp.ParseDigits(n); npas[uint64(tn)/10_000_000] {
				kind = "vacant-in-populated-npa"
			}
		}
		if kinds[kind] == nil {
			order = append(order, kind)
		}
		kinds[kind] = append(kinds[kind], n)
	}
	slices.Sort(order)
	for _, kind := range order {
		ns := kinds[kind]
		n := 1
		for n*2 <= len(ns) && n < 1<<18 {
			n *= 2
		}
		b.Run(fmt.Sprintf("%s-%d", kind, n), func(b *testing.B) {
			benchDependent(b, db, ns[:n], lrn.Options{})
			reportFloor(b, 1)
		})
	}
}
