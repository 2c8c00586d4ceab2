package mphf

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var benchSizes = []int{1_000_000, 10_000_000}

var (
	benchMu     sync.Mutex
	benchKeys   = map[int][]uint64{}
	benchTables = map[int]*Table{}
)

// benchSet returns n random distinct keys below 10^10 (phone-number-like).
func benchSet(n int) []uint64 {
	benchMu.Lock()
	defer benchMu.Unlock()
	if keys, ok := benchKeys[n]; ok {
		return keys
	}
	r := rand.New(rand.NewPCG(uint64(n), 17))
	seen := make(map[uint64]struct{}, n)
	keys := make([]uint64, 0, n)
	for len(keys) < n {
		k := r.Uint64N(10_000_000_000)
		if _, dup := seen[k]; !dup {
			seen[k] = struct{}{}
			keys = append(keys, k)
		}
	}
	benchKeys[n] = keys
	return keys
}

func benchTable(b *testing.B, n int) *Table {
	keys := benchSet(n)
	benchMu.Lock()
	defer benchMu.Unlock()
	if t, ok := benchTables[n]; ok {
		return t
	}
	t, err := Build(keys, 0)
	require.NoError(b, err)
	benchTables[n] = t
	return t
}

func BenchmarkBuild(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			keys := benchSet(n)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			var t *Table
			for b.Loop() {
				var err error
				t, err = Build(keys, 0)
				require.NoError(b, err)
			}
			b.ReportMetric(float64(n)*float64(b.N)/time.Since(start).Seconds(), "keys/s")
			b.ReportMetric(8*float64(t.Size())/float64(t.N), "bits/key")
		})
	}
}

func BenchmarkLookup(b *testing.B) {
	benchLookups(b, func(t *Table) func(uint64) uint64 { return t.Lookup })
}

func BenchmarkLookupBytes(b *testing.B) {
	benchLookups(b, func(t *Table) func(uint64) uint64 {
		enc := t.AppendBinary(nil)
		p, err := Validate(enc)
		require.NoError(b, err)
		return func(k uint64) uint64 { return p.LookupBytes(enc, k) }
	})
}

// benchLookups times the lookup that lookupIn makes of a table of each
// size, asking its keys in an order unrelated to the table layout.
func benchLookups(b *testing.B, lookupIn func(*Table) func(uint64) uint64) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			lookup := lookupIn(benchTable(b, n))
			keys := benchSet(n)
			q := make([]uint64, 1<<20)
			r := rand.New(rand.NewPCG(1, 2))
			for i := range q {
				q[i] = keys[r.IntN(len(keys))]
			}
			b.ReportAllocs()
			b.ResetTimer()
			var sum uint64
			i := 0
			for b.Loop() {
				sum += lookup(q[i&(len(q)-1)])
				i++
			}
			if sum == 1 {
				b.Log(sum)
			}
		})
	}
}
