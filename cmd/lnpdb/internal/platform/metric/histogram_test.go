package metric

import (
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHistogramBucketsAsPrometheus(t *testing.T) {
	// The same observations into this histogram and Prometheus's own give
	// the same exposition: a bound is inclusive (le), +Inf takes the rest.
	mine := NewHistogramVec("h_seconds", "H.", []float64{1, 2, 5}, "k")
	theirs := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "h_seconds", Help: "H.", Buckets: []float64{1, 2, 5}}, []string{"k"})
	for _, x := range []float64{0, 1, 1.0000001, 2, 4.9, 5, 5.1, 100, -3} {
		mine.WithLabelValues("a").Observe(x)
		theirs.WithLabelValues("a").Observe(x)
	}
	mine.WithLabelValues("b").Observe(2)
	theirs.WithLabelValues("b").Observe(2)
	a, b := prometheus.NewRegistry(), prometheus.NewRegistry()
	require.NoError(t, Register(a, mine))
	require.NoError(t, Register(b, theirs))
	got, err := testutil.CollectAndFormat(mine, expfmt.TypeTextPlain, "h_seconds")
	require.NoError(t, err)
	want, err := testutil.CollectAndFormat(theirs, expfmt.TypeTextPlain, "h_seconds")
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))

	counts := make([]uint64, 4)
	sum := mine.WithLabelValues("a").Read(counts)
	assert.Equal(t, []uint64{3, 2, 2, 2}, counts, "per bucket, not cumulative")
	assert.InDelta(t, 0+1+1.0000001+2+4.9+5+5.1+100-3, sum, 1e-9)
}

func TestHistogramSeries(t *testing.T) {
	v := NewHistogramVec("s_seconds", "S.", []float64{1}, "a", "b")
	assert.Zero(t, v.Generation())
	x := v.WithLabelValues("1", "2")
	assert.Same(t, x, v.WithLabelValues("1", "2"))
	assert.NotSame(t, x, v.WithLabelValues("12", ""), "label values are kept apart")
	assert.Equal(t, uint64(2), v.Generation())
	var seen [][]string
	v.Each(func(values []string, _ *Histogram) { seen = append(seen, values) })
	assert.Equal(t, [][]string{{"1", "2"}, {"12", ""}}, seen)
	assert.Panics(t, func() { v.WithLabelValues("1") })
	assert.Panics(t, func() { NewHistogramVec("u", "U.", []float64{2, 1}) })
}

func TestHistogramConcurrent(t *testing.T) {
	v := NewHistogramVec("c_seconds", "C.", []float64{1}, "k")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := v.WithLabelValues([]string{"a", "b"}[g%2])
			for range 1000 {
				h.Observe(0.5)
				h.Observe(2)
			}
		}()
	}
	wg.Wait()
	counts := make([]uint64, 2)
	sum := v.WithLabelValues("a").Read(counts)
	assert.Equal(t, []uint64{4000, 4000}, counts)
	assert.Equal(t, 10000.0, sum)
}

func TestHistogramReadAndObserveAllocateNothing(t *testing.T) {
	h := NewHistogramVec("a_seconds", "A.", []float64{1, 2}, "k").WithLabelValues("x")
	counts := make([]uint64, 3)
	assert.Zero(t, testing.AllocsPerRun(100, func() { h.Observe(1.5); h.Read(counts) }))
}

// The cost on a lookup's path, against the Prometheus histogram it
// replaces: go test -bench Observe ./cmd/lnpdb/internal/platform/metric
func BenchmarkObserve(b *testing.B) {
	buckets := []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}
	b.Run("metric", func(b *testing.B) {
		h := NewHistogramVec("b_seconds", "B.", buckets, "k").WithLabelValues("x")
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				h.Observe(.0003)
			}
		})
	})
	b.Run("prometheus", func(b *testing.B) {
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "b_seconds", Help: "B.", Buckets: buckets}, []string{"k"}).WithLabelValues("x")
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				h.Observe(.0003)
			}
		})
	})
}
