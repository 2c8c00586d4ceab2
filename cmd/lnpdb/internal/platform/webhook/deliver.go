package webhook

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/metric"
)

// schedule is the wait before each retry, after the attempt made at once:
// the Standard Webhooks recommendation. A retry that would fall after
// CreatedAt+[Window] is made at that instant instead, and is the last.
var schedule = []time.Duration{
	5 * time.Second,
	5 * time.Minute,
	30 * time.Minute,
	2 * time.Hour,
	5 * time.Hour,
	10 * time.Hour,
	10 * time.Hour,
}

// Backoff returns when the delivery made at created, whose attempts-th
// attempt ended at now, is tried next, and false if it is not: the wait
// Schedule gives (its last entry repeated) plus up to a tenth more at
// random, by jitter (a number in [0, 1)), so that deliveries failed
// together do not return together; the last attempt is made at the end
// of the window.
func Backoff(created, now time.Time, attempts int, jitter float64) (time.Time, bool) {
	end := created.Add(Window)
	if !now.Before(end) {
		return time.Time{}, false
	}
	wait := schedule[min(max(attempts, 1), len(schedule))-1]
	next := now.Add(wait + time.Duration(jitter*float64(wait/10)))
	if next.After(end) {
		next = end
	}
	return next, true
}

// Metrics count what a Deliverer does.
type Metrics struct {
	deliveries *prometheus.CounterVec
}

// The results of an attempt, as the metric names them.
const (
	resultDelivered = "delivered"
	resultRetried   = "retried"
	resultFailed    = "failed"
)

// NewMetrics registers the webhook metrics on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		deliveries: metric.CounterVec("lnpdb_webhook_attempts_total",
			"Webhook delivery attempts, by result: delivered (answered 2xx), retried (failed, to be tried again), or failed (failed, and the delivery given up: its 24 hours passed, or its URL or secret is not valid).", "result"),
	}
	if err := metric.Register(reg, m.deliveries); err != nil {
		return nil, err
	}
	for _, r := range []string{resultDelivered, resultRetried, resultFailed} {
		m.deliveries.WithLabelValues(r)
	}
	return m, nil
}

func (m *Metrics) count(result string) {
	if m != nil {
		m.deliveries.WithLabelValues(result).Inc()
	}
}

// Deliverer attempts the deliveries an Outbox holds as they fall due,
// and records each attempt's outcome in it. Outbox and Client are
// required.
type Deliverer struct {
	Outbox Outbox
	Client *Client
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Batch is how many deliveries are claimed and attempted at once
	// (zero: 16).
	Batch   int
	Log     *slog.Logger // nil: no log
	Metrics *Metrics     // nil: no metrics
	// Jitter returns a number in [0, 1) for [Backoff] (nil: random).
	Jitter func() float64

	wakeOnce sync.Once
	wake     chan struct{}
}

func (d *Deliverer) wakeCh() chan struct{} {
	d.wakeOnce.Do(func() { d.wake = make(chan struct{}, 1) })
	return d.wake
}

// Notify makes Run look for due deliveries at once rather than at its
// next poll: call it after writing a delivery to the outbox.
func (d *Deliverer) Notify() {
	select {
	case d.wakeCh() <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends, looking for due deliveries every poll and
// when notified. An outbox error is logged and tried again at the next
// poll.
func (d *Deliverer) Run(ctx context.Context, poll time.Duration) {
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		for {
			n, err := d.Step(ctx)
			if err != nil && ctx.Err() == nil {
				d.log().Warn("webhook outbox", "err", err)
			}
			if err != nil || n < d.batch() {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-d.wakeCh():
		}
	}
}

func (d *Deliverer) log() *slog.Logger {
	if d.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.Log
}

func (d *Deliverer) batch() int {
	if d.Batch <= 0 {
		return 16
	}
	return d.Batch
}

func (d *Deliverer) now() time.Time {
	if d.Now == nil {
		return time.Now()
	}
	return d.Now()
}

// Step claims the deliveries due now (up to Batch), attempts each, at
// once, and records the outcomes. It returns how many it claimed, and the
// outbox's errors joined.
func (d *Deliverer) Step(ctx context.Context) (int, error) {
	due, err := d.Outbox.Due(ctx, d.now(), d.batch())
	if err != nil {
		return 0, err
	}
	errs := make([]error, len(due))
	var wg sync.WaitGroup
	for i, dl := range due {
		wg.Go(func() { errs[i] = d.attempt(ctx, dl) })
	}
	wg.Wait()
	return len(due), errors.Join(errs...)
}

// attempt makes one attempt at dl and records its outcome.
func (d *Deliverer) attempt(ctx context.Context, dl Delivery) error {
	err := d.Client.Send(ctx, dl, d.now())
	if ctx.Err() != nil {
		return ctx.Err() // stopping: the lease will hand it on
	}
	at := d.now()
	attempts := dl.Attempts + 1
	if err == nil {
		d.Metrics.count(resultDelivered)
		return d.Outbox.Done(ctx, dl.ID, at, attempts)
	}
	jitter := rand.Float64
	if d.Jitter != nil {
		jitter = d.Jitter
	}
	next, ok := Backoff(dl.CreatedAt, at, attempts, jitter())
	if !ok || errors.Is(err, errPermanent) {
		d.Metrics.count(resultFailed)
		d.log().Warn("webhook given up", "id", dl.ID, "account", dl.AccountID, "attempts", attempts, "err", err)
		return d.Outbox.Fail(ctx, dl.ID, at, attempts, err.Error())
	}
	d.Metrics.count(resultRetried)
	return d.Outbox.Retry(ctx, dl.ID, next, attempts, err.Error())
}
