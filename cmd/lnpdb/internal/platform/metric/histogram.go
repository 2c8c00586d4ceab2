package metric

import (
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// HistogramVec is a histogram vector that the server reads back itself as
// well as exporting it: the same counts feed /metrics and the server's own
// history (platform/history), so that an observation is counted once.
// Prometheus's histogram can be read only by building its protobuf, which
// allocates; [Histogram.Read] copies the counts into the caller's slice.
//
// It is a [prometheus.Collector]: register it with [Register]. Its
// exposition is that of a classic Prometheus histogram (_bucket, _sum,
// _count). A series is made on its first [HistogramVec.WithLabelValues];
// resolve it once and keep the *Histogram, as for Prometheus's vectors.
type HistogramVec struct {
	desc   *prometheus.Desc
	labels int
	upper  []float64

	mu     sync.RWMutex
	series map[string]*Histogram
	order  []*Histogram // in the order made
	gen    atomic.Uint64
}

// Histogram is one series of a [HistogramVec]. Its methods are safe for
// concurrent use.
type Histogram struct {
	values []string
	upper  []float64
	counts []atomic.Uint64 // per bucket, not cumulative; the last is +Inf
	sum    atomic.Uint64   // float64 bits
}

// NewHistogramVec returns a histogram vector named name, by labels, with
// the upper bounds buckets (ascending; +Inf is implied).
func NewHistogramVec(name, help string, buckets []float64, labels ...string) *HistogramVec {
	if !sort.Float64sAreSorted(buckets) {
		panic("metric: histogram buckets of " + name + " are not ascending")
	}
	return &HistogramVec{
		desc:   prometheus.NewDesc(name, help, labels, nil),
		labels: len(labels),
		upper:  append([]float64(nil), buckets...),
		series: make(map[string]*Histogram),
	}
}

// Bounds returns the buckets' upper bounds, without +Inf. The caller must
// not change them.
func (v *HistogramVec) Bounds() []float64 { return v.upper }

// WithLabelValues returns the series of values, making it on first use. It
// panics if the number of values is not the number of labels.
func (v *HistogramVec) WithLabelValues(values ...string) *Histogram {
	if len(values) != v.labels {
		panic("metric: wrong number of label values")
	}
	key := strings.Join(values, "\xff")
	v.mu.RLock()
	h, ok := v.series[key]
	v.mu.RUnlock()
	if ok {
		return h
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if h, ok := v.series[key]; ok {
		return h
	}
	h = &Histogram{
		values: append([]string(nil), values...),
		upper:  v.upper,
		counts: make([]atomic.Uint64, len(v.upper)+1),
	}
	v.series[key] = h
	v.order = append(v.order, h)
	v.gen.Add(1)
	return h
}

// Generation counts the series made so far: a reader that keeps series
// looks again when it changes.
func (v *HistogramVec) Generation() uint64 { return v.gen.Load() }

// Each calls fn for every series, in the order they were made.
func (v *HistogramVec) Each(fn func(values []string, h *Histogram)) {
	v.mu.RLock()
	order := v.order
	v.mu.RUnlock()
	for _, h := range order {
		fn(h.values, h)
	}
}

// Describe implements [prometheus.Collector].
func (v *HistogramVec) Describe(ch chan<- *prometheus.Desc) { ch <- v.desc }

// Collect implements [prometheus.Collector].
func (v *HistogramVec) Collect(ch chan<- prometheus.Metric) {
	counts := make([]uint64, len(v.upper)+1)
	v.Each(func(values []string, h *Histogram) {
		sum := h.Read(counts)
		buckets := make(map[float64]uint64, len(v.upper))
		var cum uint64
		for i, le := range v.upper {
			cum += counts[i]
			buckets[le] = cum
		}
		cum += counts[len(v.upper)]
		ch <- prometheus.MustNewConstHistogram(v.desc, cum, sum, buckets, values...)
	})
}

// Observe counts one observation of x.
func (h *Histogram) Observe(x float64) {
	i := sort.SearchFloat64s(h.upper, x) // the first bound >= x: le is inclusive
	h.counts[i].Add(1)
	for {
		old := h.sum.Load()
		if h.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+x)) {
			return
		}
	}
}

// Read copies the count of each bucket (not cumulative; the last is +Inf)
// into dst, which must hold len(Bounds())+1, and returns the sum of the
// observations. It allocates nothing. Observations made while it reads may
// be in the counts and not yet in the sum, or the other way round.
func (h *Histogram) Read(dst []uint64) (sum float64) {
	for i := range h.counts {
		dst[i] = h.counts[i].Load()
	}
	return math.Float64frombits(h.sum.Load())
}
