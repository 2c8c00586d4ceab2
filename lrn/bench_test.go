package lrn_test

import (
	"testing"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/lnpdb/lnpdb/lrn"
)

var benchOptions = []struct {
	name string
	opt  lrn.Options
}{
	{"plain", lrn.Options{}},
	{"enhanced", lrn.Options{Enhanced: true}},
	{"enhanced+messaging", lrn.Options{Enhanced: true, Messaging: true}},
}

func BenchmarkLookup(b *testing.B) {
	db := testdb.Sample(b)
	numbers := benchNumbers(b, 4096)
	for _, bo := range benchOptions {
		b.Run(bo.name, func(b *testing.B) { benchLookup(b, db, numbers, bo.opt) })
	}
}

func benchLookup(b *testing.B, db *format.DB, numbers []string, opt lrn.Options) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_, _ = lrn.Lookup(db, numbers[i], opt)
		if i++; i == len(numbers) {
			i = 0
		}
	}
}

// BenchmarkBatch compares LookupMany (and LookupManyNumbers) with a loop
// over Lookup, per number.
func BenchmarkBatch(b *testing.B) {
	db := testdb.Sample(b)
	benchBatch(b, db, benchNumbers(b, 1<<14), false)
}

// batchLen is how many numbers a benchmarked batch holds: what a softswitch
// or a bulk job would hand over in one call.
const batchLen = 1000

// benchBatch looks up numbers in consecutive batches of batchLen, with
// LookupMany, with LookupManyNumbers and with a loop over Lookup, and
// reports the cost per number (and, for the Large table, as a multiple of
// the memory floor).
func benchBatch(b *testing.B, db *format.DB, numbers []string, floor bool) {
	parsed := make([]lnpdb.Number, len(numbers))
	for j, s := range numbers {
		parsed[j], _ = lnpdb.ParseNumber(s)
	}
	for _, bo := range benchOptions {
		out := make([]lrn.Answer, batchLen)
		b.Run("LookupMany/"+bo.name, func(b *testing.B) {
			runBatches(b, len(numbers), floor, func(i int) {
				out = lrn.LookupMany(db, numbers[i:i+batchLen], bo.opt, out[:0])
			})
		})
		b.Run("LookupManyNumbers/"+bo.name, func(b *testing.B) {
			runBatches(b, len(numbers), floor, func(i int) {
				out = lrn.LookupManyNumbers(db, parsed[i:i+batchLen], bo.opt, out[:0])
			})
		})
		b.Run("Loop/"+bo.name, func(b *testing.B) {
			out = out[:batchLen]
			runBatches(b, len(numbers), floor, func(i int) {
				for j, n := range numbers[i : i+batchLen] {
					out[j].Result, out[j].Err = lrn.Lookup(db, n, bo.opt)
				}
			})
		})
	}
}

// runBatches calls batch with the start of each consecutive batch of
// batchLen of total numbers, and reports the cost per number.
func runBatches(b *testing.B, total int, floor bool, batch func(i int)) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		batch(i)
		if i += batchLen; i+batchLen > total {
			i = 0
		}
	}
	reportPerNumber(b, batchLen)
	if floor {
		reportFloor(b, batchLen)
	}
}

func reportPerNumber(b *testing.B, n int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/number")
}
