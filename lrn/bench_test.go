package lrn_test

import (
	"testing"

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

// BenchmarkBatch compares LookupMany with a loop over Lookup, per number.
func BenchmarkBatch(b *testing.B) {
	db := testdb.Sample(b)
	benchBatch(b, db, benchNumbers(b, 1<<14), false)
}

// batchLen is how many numbers a benchmarked batch holds: what a softswitch
// or a bulk job would hand over in one call.
const batchLen = 1000

// benchBatch looks up numbers in consecutive batches of batchLen, with
// LookupMany and with a loop over Lookup, and reports the cost per number
// (and, for the Large table, as a multiple of the memory floor).
func benchBatch(b *testing.B, db *format.DB, numbers []string, floor bool) {
	for _, bo := range benchOptions {
		b.Run("LookupMany/"+bo.name, func(b *testing.B) {
			b.ReportAllocs()
			out := make([]lrn.Answer, 0, batchLen)
			i := 0
			for b.Loop() {
				out = lrn.LookupMany(db, numbers[i:i+batchLen], bo.opt, out[:0])
				if i += batchLen; i+batchLen > len(numbers) {
					i = 0
				}
			}
			reportPerNumber(b, batchLen)
			if floor {
				reportFloor(b, batchLen)
			}
		})
		b.Run("Loop/"+bo.name, func(b *testing.B) {
			b.ReportAllocs()
			out := make([]lrn.Answer, batchLen)
			i := 0
			for b.Loop() {
				for j, n := range numbers[i : i+batchLen] {
					out[j].Result, out[j].Err = lrn.Lookup(db, n, bo.opt)
				}
				if i += batchLen; i+batchLen > len(numbers) {
					i = 0
				}
			}
			reportPerNumber(b, batchLen)
			if floor {
				reportFloor(b, batchLen)
			}
		})
	}
}

func reportPerNumber(b *testing.B, n int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/number")
}
