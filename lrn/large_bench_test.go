package lrn_test

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/format/build"
	"github.com/lnpdb/lnpdb/internal/core/nanp"
	"github.com/lnpdb/lnpdb/internal/ingest/gen"
	"github.com/lnpdb/lnpdb/internal/testutil/benchdata"
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
// up, in the probe mix of the benchmarks harness (largeNumbers).
func largeTable(b *testing.B) (*format.DB, []string) {
	if *benchPorted == 0 || testing.Short() {
		b.Skip("-bench.ported=0 or -short")
	}
	large.once.Do(func() {
		// The table is generated and built once per size into the system's
		// temporary directory and reused by later runs (LNPDB_BENCH_DIR
		// overrides the place, as for internal/testutil/benchdata).
		base := os.Getenv("LNPDB_BENCH_DIR")
		if base == "" {
			base = filepath.Join(os.TempDir(), "lnpdb-bench")
		}
		dir := filepath.Join(base, fmt.Sprintf("lrn-%d-seed1", *benchPorted))
		src := filepath.Join(dir, "src")
		path := filepath.Join(dir, "bench.lnpdb")
		// A table this reader cannot open (an older format version, or
		// damaged) is generated and built again.
		// Open: a reader, which no other process's lock refuses.
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
		if large.numbers, large.err = largeNumbers(b, large.db, dir, src); large.err != nil {
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

// largeNumbers returns random canonical numbers to look up, shuffled, in
// the benchmarks harness's probe mix, so that every lookup reads the table:
// half ported numbers, a quarter numbers of assigned codes that are not
// ported, a quarter vacant numbers in vacant codes of NPAs that hold ported
// numbers. They are read from dir's probe-numbers.txt (unless it holds
// another count) or, the first time, drawn from src and db and written
// there.
func largeNumbers(b *testing.B, db *format.DB, dir, src string) ([]string, error) {
	const count = 1 << 20
	cache := filepath.Join(dir, "probe-numbers.txt")
	if data, err := os.ReadFile(cache); err == nil {
		if numbers := strings.Fields(string(data)); len(numbers) == count {
			return numbers, nil
		}
	}
	// Sample the ported numbers (reservoir sampling keeps memory flat
	// whatever the table size).
	rng := rand.New(rand.NewPCG(1, 2))
	var ported []nanp.Number
	seen := 0
	npas := map[uint64]bool{}
	readTNs(b, filepath.Join(src, gen.FilePorted), func(n nanp.Number) {
		npas[uint64(n)/10_000_000] = true
		if seen++; len(ported) < count/2 {
			ported = append(ported, n)
		} else if k := rng.IntN(seen); k < count/2 {
			ported[k] = n
		}
	})
	if len(ported) == 0 {
		return nil, fmt.Errorf("%s: no ported numbers", src)
	}
	populated := slices.Sorted(maps.Keys(npas))
	numbers := make([]string, 0, count)
	for i := range count / 2 { // each once, when there are enough
		numbers = append(numbers, ported[i%len(ported)].String())
	}
	// The other half: random numbers of populated NPAs, sorted by what the
	// table answers, until each quarter is full.
	var assigned, vacant int
	for tries := 0; assigned < count/4 || vacant < count/4; tries++ {
		if tries > 1000*count {
			return nil, fmt.Errorf("%s: cannot draw %d assigned and %d vacant numbers", src, count/4, count/4)
		}
		n := nanp.Number(populated[rng.IntN(len(populated))]*10_000_000 + rng.Uint64N(10_000_000))
		if !n.Valid() {
			continue
		}
		r, err := db.Get(uint64(n), format.FieldPorted)
		switch {
		case err != nil:
			return nil, err
		case r.Ported.OK:
		case r.Block.Assigned && assigned < count/4:
			assigned++
			numbers = append(numbers, n.String())
		case !r.Block.Assigned && vacant < count/4:
			vacant++
			numbers = append(numbers, n.String())
		}
	}
	rng.Shuffle(len(numbers), func(i, j int) { numbers[i], numbers[j] = numbers[j], numbers[i] })
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

// BenchmarkLargeBatchByKind is BenchmarkLargeBatch's plain LookupMany on
// the Large numbers as they come (mixed) and on the same numbers with each
// batch sorted by kind (ported, pooled, code-routed, vacant): the same
// lines read, but every branch on the kind going the same way as for the
// number before. What the mixed batches take beyond the sorted ones is
// what the CPU's mispredicted branches on the kind still cost.
func BenchmarkLargeBatchByKind(b *testing.B) {
	db, numbers := largeTable(b)
	kinds, _ := kindsOf(b, db, numbers)
	rank := map[string]int{"ported": 0, "pooled": 1, "code": 2, vacant: 3}
	kind := make(map[string]int, len(numbers))
	for i, n := range numbers {
		kind[n] = rank[kinds[i]]
	}
	sorted := slices.Clone(numbers)
	for i := 0; i+batchLen <= len(sorted); i += batchLen {
		slices.SortStableFunc(sorted[i:i+batchLen], func(x, y string) int { return kind[x] - kind[y] })
	}
	for _, c := range []struct {
		name    string
		numbers []string
	}{{"mixed", numbers}, {"sorted-by-kind", sorted}} {
		b.Run(c.name, func(b *testing.B) {
			out := make([]lrn.Answer, 0, batchLen)
			i := 0
			for b.Loop() {
				out = lrn.LookupMany(db, c.numbers[i:i+batchLen], lrn.Options{}, out[:0])
				if i += batchLen; i+batchLen > len(c.numbers) {
					i = 0
				}
			}
			reportPerNumber(b, batchLen)
			reportFloor(b, batchLen)
		})
	}
}

// vacant is kindsOf's kind of a number that routes nowhere.
const vacant = ""

// kindsOf returns the kind of each of numbers' answers, "ported",
// "pooled" (the LRN of its thousands-block), "code" (routed on itself) or
// vacant, and the NPAs that have assigned codes.
func kindsOf(b *testing.B, db *format.DB, numbers []string) ([]string, map[uint64]bool) {
	npas := map[uint64]bool{}
	kinds := make([]string, len(numbers))
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
			kinds[i] = "ported"
		case r.Block.LRN != "":
			kinds[i] = "pooled"
		case r.Block.Assigned:
			kinds[i] = "code"
		default:
			kinds[i] = vacant
		}
		if r.Block.Assigned {
			npas[uint64(tn)/10_000_000] = true
		}
	}
	return kinds, npas
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
// BenchmarkLargeLookup's "-dependent" cases are. The probe mix draws no
// number in an NPA without codes, so that kind has no case; a kind with
// few numbers (pooled blocks are a small share of the assigned codes'
// numbers, and at 100M the code-routed numbers' 131,072 buckets are 8 MB)
// keeps some of its lines in the cache and times the CPU's part of the
// lookup rather than its miss. A vacant number's answer carries no bytes
// to chain on: the next index is known once the CPU has predicted the
// not-found branch, which it does for every number of the vacant case, so
// that case's lookups may overlap as a loop's do, as far as the CPU's
// window lets them; in the mixed sequence of BenchmarkLargeLookup the
// branch goes either way, and where it is mispredicted the next lookup
// waits for the answer.
func BenchmarkLargeLookupByKind(b *testing.B) {
	db, numbers := largeTable(b)
	kindOf, npas := kindsOf(b, db, numbers)
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
