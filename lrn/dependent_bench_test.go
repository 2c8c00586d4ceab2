package lrn_test

import (
	"errors"
	"testing"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/benchdata"
	"github.com/lnpdb/lnpdb/internal/testutil/memfloor"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/lnpdb/lnpdb/lrn"
)

// BenchmarkDependentLookup times Lookup's latency rather than a loop's
// throughput: each number looked up is chosen by the answer before it (the
// next index skips 0 to 7 numbers by the LRN's last digit and the SPID's
// length), so the CPU cannot start a lookup before the previous one has
// answered. x-floor is the time over the memory floor's dependent read for
// a buffer the size of the table, measured in the same run (on the sample
// table both fit in the cache: the figure that matters is
// BenchmarkLargeLookup's "-dependent" cases).
func BenchmarkDependentLookup(b *testing.B) {
	db := testdb.Sample(b)
	numbers := benchNumbers(b, 4096)
	floor := benchdata.Floor(db.Info().Size)
	for _, bo := range benchOptions {
		b.Run(bo.name, func(b *testing.B) {
			benchDependent(b, db, numbers, bo.opt)
			b.ReportMetric(floor, "floor-ns")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/floor, "x-floor")
		})
	}
}

// benchDependent looks up numbers (a power of two of them) in a chain, as
// the benchmarks harness chains them: the index of the next one is the one
// after this, plus the low 3 bits of the LRN's last digit plus the SPID's
// length (0 for a vacant number) mixed with 3 pseudo-random bits of the
// step count. Each index is the one before plus a skip, so no lookup can
// start before every answer before it is in. The step count's bits keep
// the walk from settling on a cycle of a fifth of the numbers, whose lines
// a large table would find in the cache. The LRN alone would leave the
// chain broken for a number that routes on itself: its LRN is the input,
// known before the lookup answers once the CPU has predicted the branch
// that picks it, so the next lookup could start early; the SPID comes from
// the table for every routed number.
func benchDependent(b *testing.B, db *format.DB, numbers []string, opt lrn.Options) {
	if len(numbers)&(len(numbers)-1) != 0 {
		b.Fatalf("%d numbers: not a power of two", len(numbers))
	}
	b.ReportAllocs()
	mask := len(numbers) - 1
	i := 0
	for k := 1; b.Loop(); k++ {
		r, err := lrn.Lookup(db, numbers[i], opt)
		if err != nil && !errors.Is(err, lrn.ErrNotFound) {
			b.Fatal(err)
		}
		x := len(r.SPID)
		if r.LRN != "" {
			x += int(r.LRN[len(r.LRN)-1])
		}
		i = memfloor.Step(i, k, uint64(x)) & mask
	}
}
