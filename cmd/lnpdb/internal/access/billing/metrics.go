package billing

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/metric"
)

// RegisterMetrics exports the engine's counts and its leases' state with
// reg (nil registers nothing). Per-account amounts are not exported: an
// account is no metric label.
func (e *Engine) RegisterMetrics(reg prometheus.Registerer) error {
	count := func(c interface{ Load() int64 }) func() float64 {
		return func() float64 { return float64(c.Load()) }
	}
	return metric.Register(reg,
		metric.CounterFunc("lnpdb_billing_lookups_charged_total",
			"Lookups charged: paid by the free tier or the wallet, their answers delivered.", nil, count(&e.lookup)),
		metric.CounterFunc("lnpdb_billing_lookups_unbilled_total",
			"Lookups answered but not charged, by reason: lease_lost (the lease they were paid from expired and was returned before its sync).",
			prometheus.Labels{"reason": "lease_lost"}, count(&e.unbilled)),
		metric.CounterFunc("lnpdb_billing_lookups_undelivered_total",
			"Lookups paid for whose answers could not be written (the client left, the write timed out): given back, not charged.", nil, count(&e.undelivered)),
		metric.CounterFunc("lnpdb_billing_syncs_total",
			"Store transactions settling and renewing leases.", nil, count(&e.syncs)),
		metric.CounterFunc("lnpdb_billing_sync_errors_total",
			"Lease syncs that failed (store unreachable, timed out or refused).", nil, count(&e.syncErrs)),
		metric.CounterFunc("lnpdb_billing_store_timeouts_total",
			"Store calls a request gave up on at --accounts-timeout: lookups answered 503 STORAGE_UNAVAILABLE, usage reports 503.", nil, count(&e.storeTimeouts)),
		metric.CounterFunc("lnpdb_billing_recalls_total",
			"Lease recalls: asked, by this process of other processes' leases when the wallet was short; answered, leases of this process handed back when asked.",
			prometheus.Labels{"direction": "asked"}, count(&e.recallsAsked)),
		metric.CounterFunc("lnpdb_billing_recalls_total",
			"Lease recalls: asked, by this process of other processes' leases when the wallet was short; answered, leases of this process handed back when asked.",
			prometheus.Labels{"direction": "answered"}, count(&e.recallsAnswered)),
		metric.GaugeFunc("lnpdb_billing_leases",
			"Leases of account credit this process holds.", func() float64 { n, _ := e.leaseState(); return float64(n) }),
		metric.GaugeFunc("lnpdb_billing_leased_dollars",
			"Credit this process's leases hold, unspent, in dollars (all accounts).", func() float64 {
				_, m := e.leaseState()
				return float64(m) / MicrosPerDollar
			}),
	)
}

// leaseState counts the leases this process holds and the credit they
// hold (answers being written included).
func (e *Engine) leaseState() (leases int, credit Micros) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, a := range e.accounts {
		a.mu.Lock()
		if a.lease != 0 {
			leases++
			credit += max(a.credit, 0) + a.reserved
		}
		a.mu.Unlock()
	}
	return leases, credit
}
