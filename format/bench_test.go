package format_test

import (
	"errors"
	"math/bits"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/benchdata"
	"github.com/lnpdb/lnpdb/internal/testutil/memfloor"
	"github.com/lnpdb/lnpdb/lrn"
)

// benchSizes are the table sizes benchmarks run at: 1M ported numbers by
// default, and every size in LNPDB_BENCH_SIZES (e.g. "1000000,10000000").
func benchSizes() []int {
	sizes := []int{1000000}
	if s := os.Getenv("LNPDB_BENCH_SIZES"); s != "" {
		sizes = nil
		for _, f := range splitComma(s) {
			n, err := strconv.Atoi(f)
			if err == nil && n > 0 {
				sizes = append(sizes, n)
			}
		}
	}
	return sizes
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}

func sizeName(n int) string {
	switch {
	case n%1000000 == 0:
		return strconv.Itoa(n/1000000) + "M"
	case n%1000 == 0:
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}

func openBench(b *testing.B, n int) (*format.DB, *benchdata.Table) {
	t := benchdata.Get(b, n)
	db, err := format.Open(t.Path) // a reader: no lock between benchmarks
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	b.ReportMetric(float64(t.Size)/float64(db.Info().Counts.Ported), "file-B/number")
	return db, t
}

// BenchmarkGet measures one number at a time on random keys, half ported
// (hits) and half not (misses), reporting ns/op as a multiple of the memory
// floor measured in the same run.
func BenchmarkGet(b *testing.B) {
	for _, n := range benchSizes() {
		for _, c := range []struct {
			name string
			f    format.Fields
		}{{"ported", format.FieldPorted}, {"ported+messaging", format.FieldPorted | format.FieldMessaging}} {
			b.Run(sizeName(n)+"/"+c.name, func(b *testing.B) {
				db, t := openBench(b, n)
				benchGet(b, db, t, c.f)
			})
		}
	}
}

// benchGet times db.Get with fields f on t's queries, one number an
// operation, and reports the time against the memory floor.
func benchGet(b *testing.B, db *format.DB, t *benchdata.Table, f format.Fields) {
	qs := t.Queries
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := db.Get(qs[i&(len(qs)-1)], f)
		if err != nil {
			b.Fatal(err)
		}
		sinkRecord = r.Ported.OK
	}
	b.StopTimer()
	t.Report(b, 1)
}

// BenchmarkGetMany measures batches of 1024 numbers, per number.
func BenchmarkGetMany(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(sizeName(n), func(b *testing.B) {
			db, t := openBench(b, n)
			const batch = 1024
			out := make([]format.Record, batch)
			qs := t.Queries
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				off := (i * batch) & (len(qs) - 1)
				if err := db.GetMany(qs[off:off+batch], format.FieldPorted, out); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			t.Report(b, batch)
		})
	}
}

// BenchmarkMemoryFloor is the floor itself: one dependent random 8-byte read
// over a buffer as large as the table.
func BenchmarkMemoryFloor(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(sizeName(n), func(b *testing.B) {
			t := benchdata.Get(b, n)
			b.ReportMetric(benchdata.Floor(t.Size), "floor-ns")
		})
	}
}

var sinkRecord bool

// BenchmarkLookupStages sets each form of a lookup beside the bounds that
// memory sets it, all in one run and process, over the same table:
//
//   - floor: one dependent random 8-byte read over a buffer as large as
//     the table (each x-floor below is against it);
//   - indep: random 8-byte reads over that buffer that do not wait for
//     each other, the memory-level-parallelism bound a batch can at best
//     reach;
//   - bucket-read: a dependent chain of ported numbers (each next index
//     the one before plus a skip taken from the answer, as the benchmarks
//     harness walks), cut short after the number's bucket is aimed and its
//     two lines read: no lookup that reads its bucket can beat it; and
//     bucket-read-indep, the same reads of consecutive numbers, not
//     chained;
//   - found, ported: the chain cut short after the entry is found, and
//     after the ported record and its strings are read;
//   - GetRoute, Get, lrn.LookupInto (plain, into one Result): the chain's
//     whole lookups (with the snapshot's reference count, the two locked
//     adds a lookup makes);
//   - GetRoute-loop, LookupInto-loop: the same lookups of the probe mix
//     (half ported, half not) in a loop, not chained;
//   - GetRoutes, LookupMany: the probe mix in batches of 1,024 (plain),
//     a number.
//
// Run it at a size larger than the CPU caches
// (LNPDB_BENCH_SIZES=100000000).
func BenchmarkLookupStages(b *testing.B) {
	for _, n := range benchSizes() {
		db, t := openBench(b, n)
		var hits []uint64
		for _, tn := range t.Queries {
			if r, err := db.Get(tn, format.FieldPorted); err == nil && r.Ported.OK {
				hits = append(hits, tn)
			}
		}
		if len(hits) == 0 {
			b.Fatalf("%s: no ported number among the queries", sizeName(n))
		}
		hits = hits[:1<<(bits.Len(uint(len(hits)))-1)]
		phones := make([]string, len(hits))
		for i, tn := range hits {
			phones[i] = "1" + strconv.FormatUint(tn, 10)
		}
		chain := memfloor.New(t.Size, benchdata.Seed)
		words := chain.Words()
		chain.Step(chain.Len()) // every page touched once
		idx := make([]uint64, 1<<20)
		for i := range idx {
			idx[i] = rand.Uint64N(uint64(len(words)))
		}
		touched, found, ported := db.Stages()
		var rt format.Route
		var res lrn.Result
		chained := []struct {
			name string
			fn   func(i int) uint64
		}{
			{"bucket-read", func(i int) uint64 { return touched(hits[i]) }},
			{"found", func(i int) uint64 { return found(hits[i]) }},
			{"ported", func(i int) uint64 { return ported(hits[i]) }},
			{"GetRoute", func(i int) uint64 {
				if err := db.GetRoute(hits[i], true, &rt); err != nil {
					return 0
				}
				return rt.Ported.ChainValue()
			}},
			{"Get", func(i int) uint64 {
				r, err := db.Get(hits[i], format.FieldPorted)
				if err != nil {
					return 0
				}
				return r.Ported.ChainValue()
			}},
			{"LookupInto", func(i int) uint64 {
				if lrn.LookupInto(db, phones[i], lrn.Options{}, &res) != nil {
					return 0
				}
				return uint64(res.LRN[len(res.LRN)-1]) + uint64(len(res.SPID))
			}},
		}
		b.Run(sizeName(n)+"/floor", func(b *testing.B) {
			for b.Loop() {
				sinkRecord = chain.Step(1) == 1
			}
			t.Report(b, 1)
		})
		b.Run(sizeName(n)+"/indep", func(b *testing.B) {
			var sum uint64
			i := 0
			for b.Loop() {
				sum += words[idx[i]]
				i = (i + 1) & (len(idx) - 1)
			}
			sinkRecord = sum == 1
			t.Report(b, 1)
		})
		runtime.KeepAlive(chain) // its cleanup unmaps words
		b.Run(sizeName(n)+"/bucket-read-indep", func(b *testing.B) {
			var sum uint64
			i := 0
			for b.Loop() {
				sum += touched(hits[i])
				i = (i + 1) & (len(hits) - 1)
			}
			sinkRecord = sum == 1
			t.Report(b, 1)
		})
		for _, c := range chained {
			b.Run(sizeName(n)+"/"+c.name, func(b *testing.B) {
				mask := len(hits) - 1
				i := 0
				var sum uint64
				for k := 1; b.Loop(); k++ {
					x := c.fn(i)
					sum += x
					i = memfloor.Step(i, k, x) & mask
				}
				sinkRecord = sum == 1
				t.Report(b, 1)
			})
		}
		qs, mix := t.Queries, t.Canonical
		b.Run(sizeName(n)+"/GetRoute-loop", func(b *testing.B) {
			i := 0
			for b.Loop() {
				if err := db.GetRoute(qs[i], true, &rt); err != nil {
					b.Fatal(err)
				}
				i = (i + 1) & (len(qs) - 1)
			}
			t.Report(b, 1)
		})
		b.Run(sizeName(n)+"/LookupInto-loop", func(b *testing.B) {
			i := 0
			for b.Loop() {
				// The mix's misses include numbers that are no valid line
				// (a random NXX): answered without a read.
				if err := lrn.LookupInto(db, mix[i], lrn.Options{}, &res); err != nil && !errors.Is(err, lrn.ErrNotFound) && !errors.Is(err, lrn.ErrInvalidNumber) {
					b.Fatal(err)
				}
				i = (i + 1) & (len(mix) - 1)
			}
			t.Report(b, 1)
		})
		const batch = 1024
		routes := make([]format.Route, batch)
		b.Run(sizeName(n)+"/GetRoutes", func(b *testing.B) {
			off := 0
			for b.Loop() {
				if err := db.GetRoutes(qs[off:off+batch], true, routes); err != nil {
					b.Fatal(err)
				}
				off = (off + batch) & (len(qs) - 1)
			}
			t.Report(b, batch)
		})
		answers := make([]lrn.Answer, 0, batch)
		b.Run(sizeName(n)+"/LookupMany", func(b *testing.B) {
			off := 0
			for b.Loop() {
				answers = lrn.LookupMany(db, mix[off:off+batch], lrn.Options{}, answers[:0])
				off = (off + batch) & (len(mix) - 1)
			}
			t.Report(b, batch)
		})
	}
}
