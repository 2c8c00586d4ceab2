package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/metric"
)

// Metrics are the handler's Prometheus metrics:
//
//	lnpdb_http_requests_total{path, code}            requests by endpoint and status
//	lnpdb_http_request_duration_seconds{path}        latency histogram
//	lnpdb_lookups_total{type, result}                lookups by kind and outcome
//	lnpdb_ratelimit_errors_total                     limiter failures (requests let through)
//	lnpdb_log_lines_dropped_total                    log lines a slow log output lost (see RegisterLogWriter)
//
// path is the endpoint's path, or "other" for a path that is no endpoint, so
// that clients cannot grow the label set.
type Metrics struct {
	gatherer      prometheus.Gatherer
	requests      *prometheus.CounterVec
	duration      *metric.HistogramVec
	lookups       *prometheus.CounterVec
	limiterErrors prometheus.Counter

	// The series of each label set seen, so that counting a request does
	// not hash and validate its labels again (a tenth of a lookup's cost).
	// The label sets are few: paths are the endpoints' and "other".
	mu         sync.RWMutex
	requestsBy map[requestLabels]requestSeries
	lookupsBy  map[[2]string]prometheus.Counter
}

type requestLabels struct {
	path   string
	status int
}

type requestSeries struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

// NewRegistry returns a Prometheus registry holding the Go runtime and
// process collectors, for NewMetrics and the server's other metrics.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// NewMetrics registers the handler's metrics with reg and returns them. A
// nil reg means a new registry that also holds the Go runtime and process
// collectors.
func NewMetrics(reg *prometheus.Registry) (*Metrics, error) {
	if reg == nil {
		reg = NewRegistry()
	}
	m := &Metrics{
		gatherer: reg,
		requests: metric.CounterVec("lnpdb_http_requests_total",
			"HTTP requests by endpoint path and status code.", "path", "code"),
		duration: metric.NewHistogramVec("lnpdb_http_request_duration_seconds",
			"HTTP request latency by endpoint path.",
			[]float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}, "path"),
		lookups: metric.CounterVec("lnpdb_lookups_total",
			"Lookups by type (lrn, cnam, messaging, trust) and result.", "type", "result"),
		limiterErrors: metric.Counter("lnpdb_ratelimit_errors_total",
			"Rate limiter failures; the requests were let through."),
		requestsBy: make(map[requestLabels]requestSeries),
		lookupsBy:  make(map[[2]string]prometheus.Counter),
	}
	if err := metric.Register(reg, m.requests, m.duration, m.lookups, m.limiterErrors); err != nil {
		return nil, err
	}
	return m, nil
}

// RegisterLogWriter exports l's count of dropped lines as
// lnpdb_log_lines_dropped_total: a log output that does not keep up loses
// lines rather than stall requests, and this says how many.
func (m *Metrics) RegisterLogWriter(l *LogWriter) error {
	reg, ok := m.gatherer.(prometheus.Registerer)
	if !ok {
		return errors.New("httpapi: the metrics registry does not take new metrics")
	}
	return reg.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "lnpdb_log_lines_dropped_total",
		Help: "Log lines dropped because the log output did not keep up.",
	}, func() float64 { return float64(l.Dropped()) }))
}

// Durations returns the request latency histograms (label path), for a
// reader of the server's own history.
func (m *Metrics) Durations() *metric.HistogramVec { return m.duration }

// Handler serves the metrics in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.gatherer, promhttp.HandlerOpts{})
}

// statusText holds the code label of every status, so that counting a
// request does not format a number.
var statusText = func() (s [600]string) {
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

func (m *Metrics) observe(path string, status int, d time.Duration) {
	if status < 0 || status >= len(statusText) {
		status = -1 // one series, "other", for every status out of range
	}
	k := requestLabels{path, status}
	m.mu.RLock()
	s, ok := m.requestsBy[k]
	m.mu.RUnlock()
	if !ok {
		code := "other"
		if status >= 0 {
			code = statusText[status]
		}
		s = requestSeries{m.requests.WithLabelValues(path, code), m.duration.WithLabelValues(path)}
		m.mu.Lock()
		m.requestsBy[k] = s
		m.mu.Unlock()
	}
	s.count.Inc()
	s.duration.Observe(d.Seconds())
}

func (m *Metrics) lookup(kind, result string) {
	k := [2]string{kind, result}
	m.mu.RLock()
	c, ok := m.lookupsBy[k]
	m.mu.RUnlock()
	if !ok {
		c = m.lookups.WithLabelValues(kind, result)
		m.mu.Lock()
		m.lookupsBy[k] = c
		m.mu.Unlock()
	}
	c.Inc()
}
