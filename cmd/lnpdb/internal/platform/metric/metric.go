// Package metric owns how lnpdb's servers declare their Prometheus metrics
// and register them: one call per metric, naming it, saying what it counts
// and, for a vector, its labels; and one rule for registering a package's
// metrics, in order, stopping at the first error, with a nil registry
// meaning that none are exported. It imports only the Prometheus client; the
// library packages (format, lrn, cnam, messaging, trust) must not import it.
package metric

import "github.com/prometheus/client_golang/prometheus"

// Counter returns a new counter named name.
func Counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
}

// CounterVec returns a new counter vector named name, by labels.
func CounterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

// Gauge returns a new gauge named name.
func Gauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
}

// GaugeFunc returns a gauge named name whose value fn reads when the
// metrics are gathered.
func GaugeFunc(name, help string, fn func() float64) prometheus.GaugeFunc {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, fn)
}

// CounterFunc returns a counter named name, with the constant labels
// labels (nil for none), whose value fn reads when the metrics are
// gathered: for a count a package keeps itself.
func CounterFunc(name, help string, labels prometheus.Labels, fn func() float64) prometheus.CounterFunc {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels}, fn)
}

// Register registers cs with reg in order and returns the first error; a
// nil reg registers nothing.
func Register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	if reg == nil {
		return nil
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
