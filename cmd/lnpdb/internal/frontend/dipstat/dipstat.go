// Package dipstat owns the Prometheus metrics that the softswitch front ends
// (SIP redirect, ENUM, Kamailio pdb) share in shape: per protocol, the
// requests received, the answers given by outcome, and a latency histogram.
//
//	lnpdb_dip_requests_total{proto}                 requests received
//	lnpdb_dip_answers_total{proto, outcome}         answers by outcome
//	lnpdb_dip_duration_seconds{proto}               time from decoded request to answer sent
//	lnpdb_dip_dropped_total{proto, reason}          requests and connections dropped unanswered
//
// The series of every outcome are resolved when a front end starts, so that
// counting a dip neither hashes labels nor allocates.
package dipstat

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/metric"
	"github.com/lnpdb/lnpdb/lrn"
)

// Metrics are one protocol's dip metrics. A nil *Metrics counts nothing, so
// that a front end runs without a registry in tests.
type Metrics struct {
	requests prometheus.Counter
	duration prometheus.Observer
	answers  map[string]prometheus.Counter
	dropped  map[string]prometheus.Counter
}

// Outcomes every front end reports: the lookup's result.
const (
	Ported    = "ported"    // LRN from the number's ported record
	Pooled    = "pooled"    // LRN from its pooled thousands-block
	Home      = "home"      // routes on itself (not ported or pooled away)
	Vacant    = "vacant"    // not found: the NPA-NXX is unassigned
	Invalid   = "invalid"   // not a NANP number
	Skipped   = "skipped"   // already dipped (npdi present): answered without a lookup
	Error     = "error"     // no table, or the table failed: answered as unavailable
	Refused   = "refused"   // outside what this front end answers (zone, method, address)
	Malformed = "malformed" // the request itself could not be decoded
)

// Why a request (or a TCP connection) was dropped without an answer.
const (
	DropDenied      = "denied"       // its source is outside the allow-list
	DropFull        = "full"         // a TCP connection beyond the connection cap
	DropRateLimited = "rate_limited" // over the response rate limit
)

// Vectors are the metric families on one registry, shared by every protocol.
type Vectors struct {
	requests *prometheus.CounterVec
	answers  *prometheus.CounterVec
	duration *metric.HistogramVec
	dropped  *prometheus.CounterVec
}

// Register registers the dip metric families with reg. Register them once
// per registry and take each protocol's Metrics from [Vectors.For].
func Register(reg prometheus.Registerer) (*Vectors, error) {
	v := &Vectors{
		requests: metric.CounterVec("lnpdb_dip_requests_total",
			"Number portability dips received, by protocol (sip, enum, pdb).", "proto"),
		answers: metric.CounterVec("lnpdb_dip_answers_total",
			"Number portability dip answers by protocol and outcome.", "proto", "outcome"),
		duration: metric.NewHistogramVec("lnpdb_dip_duration_seconds",
			"Time from a decoded dip request to its answer, by protocol.",
			[]float64{.00001, .000025, .00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05}, "proto"),
		dropped: metric.CounterVec("lnpdb_dip_dropped_total",
			"Requests (and TCP connections, closed at accept) dropped without an answer, by protocol and reason (denied: source outside the allow-list; full: connection cap reached; rate_limited: over the response rate limit).", "proto", "reason"),
	}
	if err := metric.Register(reg, v.requests, v.answers, v.duration, v.dropped); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			return nil, fmt.Errorf("dip metrics registered twice on one registry: %w", err)
		}
		return nil, err
	}
	return v, nil
}

// For returns the metrics of one protocol; v may be nil (no metrics).
func (v *Vectors) For(proto string) *Metrics {
	if v == nil {
		return nil
	}
	m := &Metrics{
		requests: v.requests.WithLabelValues(proto),
		duration: v.duration.WithLabelValues(proto),
		answers:  make(map[string]prometheus.Counter),
		dropped:  make(map[string]prometheus.Counter),
	}
	for _, o := range []string{Ported, Pooled, Home, Vacant, Invalid, Skipped, Error, Refused, Malformed} {
		m.answers[o] = v.answers.WithLabelValues(proto, o)
	}
	for _, r := range []string{DropDenied, DropFull, DropRateLimited} {
		m.dropped[r] = v.dropped.WithLabelValues(proto, r)
	}
	return m
}

// Dropped counts one request or connection dropped unanswered, for reason
// (one of the Drop constants).
func (m *Metrics) Dropped(reason string) {
	if m == nil {
		return
	}
	if c, ok := m.dropped[reason]; ok {
		c.Inc()
	}
}

// Request counts one request received.
func (m *Metrics) Request() {
	if m != nil {
		m.requests.Inc()
	}
}

// Answer counts one answer with outcome (one of the constants above) and
// records how long it took since start.
func (m *Metrics) Answer(outcome string, start time.Time) {
	if m == nil {
		return
	}
	if c, ok := m.answers[outcome]; ok {
		c.Inc()
	}
	m.duration.Observe(time.Since(start).Seconds())
}

// Outcome names the outcome of an LRN lookup: [Ported] or [Pooled] when the
// number routes to another switch (its LRN differs from the number),
// [Home] when it routes on itself, [Vacant], [Invalid], or [Error] for any
// other error (no table, a closed or damaged one).
func Outcome(r *lrn.Result, err error) string {
	switch {
	case err == nil && r.LRN == r.PhoneNumber:
		return Home
	case err == nil && r.Source == lrn.SourcePooled:
		return Pooled
	case err == nil:
		return Ported
	case errors.Is(err, lrn.ErrInvalidNumber):
		return Invalid
	case errors.Is(err, lrn.ErrNotFound):
		return Vacant
	}
	return Error
}

// Durations returns the latency histograms of every protocol (label proto),
// for a reader of the server's own history; v may be nil.
func (v *Vectors) Durations() *metric.HistogramVec {
	if v == nil {
		return nil
	}
	return v.duration
}
