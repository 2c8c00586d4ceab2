package history

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/metric"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testclock"
)

var bounds = []float64{.001, .002, .005, .01}

func fixture(t *testing.T) (*testclock.Clock, *metric.HistogramVec, *metric.HistogramVec, *Sampler) {
	t.Helper()
	clock := testclock.New(time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC))
	http := metric.NewHistogramVec("t_http_seconds", "t", bounds, "path")
	dip := metric.NewHistogramVec("t_dip_seconds", "t", bounds, "proto")
	s := New(clock.Now,
		Front{Name: "REST", Vec: http, Match: Label(0, "/api/v1/lrn", "/api/v1/cnam")},
		Front{Name: "GraphQL", Vec: http, Match: Label(0, "/graphql")},
		Front{Name: "SIP", Vec: dip, Match: Label(0, "sip")},
		Front{Name: "ENUM", Vec: nil}, // not served: left out
	)
	return clock, http, dip, s
}

func observe(h *metric.Histogram, x float64, n int) {
	for range n {
		h.Observe(x)
	}
}

func TestSampleRateAndP99(t *testing.T) {
	clock, http, dip, s := fixture(t)
	assert.Equal(t, []string{"REST", "GraphQL", "SIP"}, s.Names())
	lrn := http.WithLabelValues("/api/v1/lrn")
	observe(lrn, .0005, 1000) // before the first sample: not in any interval
	s.Sample()
	got, ok := s.Read("REST", nil)
	require.True(t, ok)
	assert.Empty(t, got, "the first sample is only a baseline")

	// 10 s: 990 fast REST answers and 10 in (.005, .01]; p99 is the top of
	// the (.001, .002] bucket's share… exactly the 990th observation.
	observe(lrn, .0005, 500)
	observe(http.WithLabelValues("/api/v1/cnam"), .0015, 490) // a series made mid-interval counts whole
	observe(lrn, .008, 10)
	observe(http.WithLabelValues("/metrics"), 1, 100) // matched by no front end
	observe(dip.WithLabelValues("sip"), .003, 40)
	clock.Advance(Interval)
	s.Sample()

	rest, _ := s.Read("REST", nil)
	require.Len(t, rest, 1)
	assert.Equal(t, clock.Now(), rest[0].At)
	assert.Equal(t, uint64(1000), rest[0].Answers)
	assert.InDelta(t, 100.0, rest[0].PerSec, 1e-9)
	// rank 990: 500 in [0,.001], 490 in (.001,.002] → the bucket's top.
	assert.InDelta(t, .002, rest[0].P99, 1e-12)

	sip, _ := s.Read("SIP", nil)
	require.Len(t, sip, 1)
	assert.Equal(t, uint64(40), sip[0].Answers)
	assert.InDelta(t, 4.0, sip[0].PerSec, 1e-9)
	// rank 39.6 of 40 in (.002, .005]: .002 + .003·39.6/40.
	assert.InDelta(t, .002+.003*39.6/40, sip[0].P99, 1e-12)

	gql, _ := s.Read("GraphQL", nil)
	require.Len(t, gql, 1)
	assert.Equal(t, Point{At: clock.Now()}, gql[0], "an idle interval is a point of zero")

	_, ok = s.Read("ENUM", nil)
	assert.False(t, ok)
}

func TestP99InTheInfBucketIsTheHighestBound(t *testing.T) {
	clock, http, _, s := fixture(t)
	s.Sample()
	observe(http.WithLabelValues("/graphql"), 3, 5)
	clock.Advance(Interval)
	s.Sample()
	gql, _ := s.Read("GraphQL", nil)
	assert.Equal(t, .01, gql[0].P99)
}

func TestRateUsesTheTimeElapsed(t *testing.T) {
	clock, http, _, s := fixture(t)
	s.Sample()
	observe(http.WithLabelValues("/graphql"), .001, 30)
	clock.Advance(3 * time.Second) // a late or early tick
	s.Sample()
	gql, _ := s.Read("GraphQL", nil)
	assert.InDelta(t, 10.0, gql[0].PerSec, 1e-9)
}

func TestRingKeepsTheLastHour(t *testing.T) {
	clock, http, _, s := fixture(t)
	h := http.WithLabelValues("/api/v1/lrn")
	s.Sample()
	for i := 1; i <= Points+5; i++ {
		observe(h, .001, i)
		clock.Advance(Interval)
		s.Sample()
	}
	rest, _ := s.Read("REST", nil)
	require.Len(t, rest, Points)
	assert.Equal(t, uint64(6), rest[0].Answers, "the oldest five were overwritten")
	assert.Equal(t, uint64(Points+5), rest[Points-1].Answers)
	assert.Equal(t, clock.Now(), rest[Points-1].At)
	for i := 1; i < len(rest); i++ {
		assert.Equal(t, Interval, rest[i].At.Sub(rest[i-1].At), "oldest first, one interval apart")
	}
}

func TestSampleAllocatesNothing(t *testing.T) {
	clock, http, dip, s := fixture(t)
	lrn := http.WithLabelValues("/api/v1/lrn")
	dip.WithLabelValues("sip")
	s.Sample() // warm-up: resolves the series
	allocs := testing.AllocsPerRun(100, func() {
		lrn.Observe(.001)
		clock.Advance(Interval)
		s.Sample()
	})
	assert.Zero(t, allocs)
	buf := make([]Point, 0, Points)
	allocs = testing.AllocsPerRun(100, func() { buf, _ = s.Read("REST", buf[:0]) })
	assert.Zero(t, allocs)
}

func TestRunSamplesUntilCancelled(t *testing.T) {
	_, _, _, s := fixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	cancel()
	<-done
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.False(t, s.last.IsZero(), "Run samples at once, as the baseline")
}

func BenchmarkSample(b *testing.B) {
	clock := testclock.New(time.Unix(0, 0))
	http := metric.NewHistogramVec("b_http_seconds", "b", bounds, "path")
	for _, p := range []string{"/api/v1/lrn", "/api/v1/cnam", "/graphql", "/metrics"} {
		http.WithLabelValues(p).Observe(.001)
	}
	s := New(clock.Now, Front{Name: "REST", Vec: http, Match: Label(0, "/api/v1/lrn", "/api/v1/cnam")},
		Front{Name: "GraphQL", Vec: http, Match: Label(0, "/graphql")})
	b.ReportAllocs()
	for b.Loop() {
		clock.Advance(Interval)
		s.Sample()
	}
}
