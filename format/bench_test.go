package format_test

import (
	"math/bits"
	"os"
	"strconv"
	"testing"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/benchdata"
	"github.com/lnpdb/lnpdb/internal/testutil/memfloor"
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

// BenchmarkLookupStages takes a dependent lookup of a ported number apart:
// the same chain of ported numbers (each next index the one before plus a
// skip taken from the answer, as the benchmarks harness walks) cut short
// after the bucket is touched, after its entry is found, and after the
// ported record and its strings are read; then GetRoute and Get whole
// (with the snapshot's reference count, the two locked adds a lookup
// makes). The first is one random read of the table,
// the floor's own work; each case after it adds what its stage costs on
// the critical path. x-floor is against the memory floor measured in the
// same run. Run it at a size larger than the CPU caches
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
		touched, found, ported := db.Stages()
		var rt format.Route
		for _, c := range []struct {
			name string
			fn   func(tn uint64) uint64
		}{
			{"touched", touched},
			{"found", found},
			{"ported", ported},
			{"GetRoute", func(tn uint64) uint64 {
				if err := db.GetRoute(tn, true, &rt); err != nil {
					return 0
				}
				return rt.Ported.ChainValue()
			}},
			{"Get", func(tn uint64) uint64 {
				r, err := db.Get(tn, format.FieldPorted)
				if err != nil {
					return 0
				}
				return r.Ported.ChainValue()
			}},
		} {
			b.Run(sizeName(n)+"/"+c.name, func(b *testing.B) {
				mask := len(hits) - 1
				i := 0
				var sum uint64
				for k := 1; b.Loop(); k++ {
					x := c.fn(hits[i])
					sum += x
					i = memfloor.Step(i, k, x) & mask
				}
				sinkRecord = sum == 1
				t.Report(b, 1)
			})
		}
	}
}
