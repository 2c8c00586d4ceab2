// Package history owns the server's own recent history, drawn by the
// operator console: per front end (REST, GraphQL, SIP, ENUM, pdb), answers
// per second and the 99th percentile latency, one point every [Interval],
// in a fixed ring covering the last hour.
//
// It counts nothing itself. Each point is the difference of two reads of
// the latency histograms the front ends already keep for Prometheus
// (platform/metric.HistogramVec: the HTTP API's by path, the dip front
// ends' by protocol), so that nothing is added to a lookup's path: the
// count of an interval is the growth of the histogram's count, and its p99
// is interpolated in the bucket where the interval's 99th percentile
// observation fell, as Prometheus's histogram_quantile does. A sample reads
// a few hundred atomic words and allocates nothing once every series has
// been seen.
package history

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/metric"
)

const (
	// Interval is how often the server samples its counters.
	Interval = 10 * time.Second
	// Points is how many samples a front end's ring holds: an hour.
	Points = int(time.Hour / Interval)
)

// Point is one interval of a front end's history.
type Point struct {
	At      time.Time // the interval's end
	Answers uint64    // answers given in the interval
	PerSec  float64   // Answers over the interval's length
	P99     float64   // seconds; 0 when there were no answers
}

// Front names a front end and where its answers are counted: the series of
// Vec whose label values Match accepts (nil: every series). A nil Vec (a
// front end not served) is left out.
type Front struct {
	Name  string
	Vec   *metric.HistogramVec
	Match func(labelValues []string) bool
}

// Sampler keeps the history of some front ends. Its methods are safe for
// concurrent use.
type Sampler struct {
	now func() time.Time

	mu     sync.Mutex
	fronts []*front
	last   time.Time // the previous sample; zero before the first
}

type front struct {
	Front
	gen    uint64 // the Vec's generation when hs was resolved
	hs     []*metric.Histogram
	read   []uint64 // one histogram's buckets
	cur    []uint64 // the buckets summed over hs
	prev   []uint64 // cur at the previous sample
	primed bool     // prev holds a read

	ring [Points]Point
	next int // where the next point goes
	n    int // points held
}

// New returns a sampler of fronts reading the time from now (time.Now when
// nil).
func New(now func() time.Time, fronts ...Front) *Sampler {
	if now == nil {
		now = time.Now
	}
	s := &Sampler{now: now}
	for _, f := range fronts {
		if f.Vec == nil {
			continue
		}
		b := len(f.Vec.Bounds()) + 1
		s.fronts = append(s.fronts, &front{
			Front: f, gen: math.MaxUint64,
			read: make([]uint64, b), cur: make([]uint64, b), prev: make([]uint64, b),
		})
	}
	return s
}

// Names returns the front ends sampled, in the order given to New.
func (s *Sampler) Names() []string {
	names := make([]string, len(s.fronts))
	for i, f := range s.fronts {
		names[i] = f.Name
	}
	return names
}

// Run samples every [Interval] until ctx is done.
func (s *Sampler) Run(ctx context.Context) {
	s.Sample()
	t := time.NewTicker(Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.Sample()
		}
	}
}

// Sample reads the counters now and, from the second sample on, appends
// one point per front end covering the time since the previous sample.
func (s *Sampler) Sample() {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	secs := now.Sub(s.last).Seconds()
	first := s.last.IsZero()
	s.last = now
	for _, f := range s.fronts {
		f.sample(now, secs, first)
	}
}

func (f *front) sample(now time.Time, secs float64, first bool) {
	if g := f.Vec.Generation(); g != f.gen {
		f.gen = g
		f.hs = f.hs[:0]
		f.Vec.Each(func(values []string, h *metric.Histogram) {
			if f.Match == nil || f.Match(values) {
				f.hs = append(f.hs, h)
			}
		})
	}
	clear(f.cur)
	for _, h := range f.hs {
		h.Read(f.read)
		for i, c := range f.read {
			f.cur[i] += c
		}
	}
	if f.primed && !first && secs > 0 {
		var n uint64
		for i := range f.cur {
			// A series made since the last sample grew from nothing;
			// counts never fall, but a delta must not wrap if they did.
			f.prev[i] = f.cur[i] - min(f.prev[i], f.cur[i])
			n += f.prev[i]
		}
		f.ring[f.next] = Point{At: now, Answers: n, PerSec: float64(n) / secs, P99: quantile(0.99, f.Vec.Bounds(), f.prev, n)}
		f.next = (f.next + 1) % Points
		f.n = min(f.n+1, Points)
	}
	copy(f.prev, f.cur)
	f.primed = true
}

// quantile returns the q-quantile of n observations counted per bucket
// (upper bounds bounds, then +Inf), interpolating linearly inside the
// bucket it falls in; in the +Inf bucket it is the highest bound. It is 0
// for no observations.
func quantile(q float64, bounds []float64, counts []uint64, n uint64) float64 {
	if n == 0 {
		return 0
	}
	rank := q * float64(n)
	var below uint64
	for i, c := range counts {
		if c == 0 || float64(below+c) < rank {
			below += c
			continue
		}
		if i == len(bounds) {
			break
		}
		lo := 0.0
		if i > 0 {
			lo = bounds[i-1]
		}
		return lo + (bounds[i]-lo)*(rank-float64(below))/float64(c)
	}
	return bounds[len(bounds)-1]
}

// Read appends the history of the front end name to dst, oldest first, and
// returns it; nil and false if no such front end is sampled.
func (s *Sampler) Read(name string, dst []Point) ([]Point, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.fronts {
		if f.Name != name {
			continue
		}
		start := (f.next - f.n + Points) % Points
		for i := 0; i < f.n; i++ {
			dst = append(dst, f.ring[(start+i)%Points])
		}
		return dst, true
	}
	return nil, false
}

// Label returns a Match that accepts a series whose label i is one of
// values.
func Label(i int, values ...string) func([]string) bool {
	return func(lv []string) bool {
		for _, v := range values {
			if i < len(lv) && lv[i] == v {
				return true
			}
		}
		return false
	}
}
