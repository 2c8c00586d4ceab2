package metric

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRegister(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := Counter("test_events_total", "Events.")
	v := CounterVec("test_results_total", "Results by kind.", "kind")
	g := Gauge("test_level", "Level.")
	f := GaugeFunc("test_read", "Read when gathered.", func() float64 { return 7 })
	h := NewHistogramVec("test_seconds", "Durations by kind.", []float64{1, 2}, "kind")
	require.NoError(t, Register(reg, c, v, g, f, h))
	c.Inc()
	v.WithLabelValues("a").Add(2)
	g.Set(3)
	h.WithLabelValues("a").Observe(1.5)
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP test_events_total Events.
# TYPE test_events_total counter
test_events_total 1
# HELP test_level Level.
# TYPE test_level gauge
test_level 3
# HELP test_read Read when gathered.
# TYPE test_read gauge
test_read 7
# HELP test_results_total Results by kind.
# TYPE test_results_total counter
test_results_total{kind="a"} 2
# HELP test_seconds Durations by kind.
# TYPE test_seconds histogram
test_seconds_bucket{kind="a",le="1"} 0
test_seconds_bucket{kind="a",le="2"} 1
test_seconds_bucket{kind="a",le="+Inf"} 1
test_seconds_sum{kind="a"} 1.5
test_seconds_count{kind="a"} 1
`)))

	// The first error stops the registration: what follows stays out.
	later := Counter("test_later_total", "Later.")
	err := Register(reg, Counter("test_events_total", "Events."), later)
	var are prometheus.AlreadyRegisteredError
	require.ErrorAs(t, err, &are)
	assert.True(t, reg.Unregister(c))
	assert.False(t, reg.Unregister(later), "a collector after the failed one was registered")

	assert.NoError(t, Register(nil, Counter("test_events_total", "Events.")), "a nil registry registers nothing")
}
