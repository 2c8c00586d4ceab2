package webhook

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testclock"
)

// memOutbox is an Outbox in memory, with the claim rule the interface
// states: what Due returns is held for Lease.
type memOutbox struct {
	mu   sync.Mutex
	rows map[string]*memRow
}

type memRow struct {
	d       Delivery
	next    time.Time // due from
	claimed time.Time // held until
	state   string    // pending, done, failed
	lastErr string
}

func newMemOutbox(ds ...Delivery) *memOutbox {
	o := &memOutbox{rows: make(map[string]*memRow)}
	for _, d := range ds {
		o.rows[d.ID] = &memRow{d: d, next: d.CreatedAt, state: "pending"}
	}
	return o
}

func (o *memOutbox) Due(_ context.Context, now time.Time, limit int) ([]Delivery, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []Delivery
	for _, r := range o.rows {
		if len(out) == limit {
			break
		}
		if r.state == "pending" && !r.next.After(now) && !r.claimed.After(now) {
			r.claimed = now.Add(Lease)
			out = append(out, r.d)
		}
	}
	return out, nil
}

func (o *memOutbox) end(id, state string, attempts int, lastErr string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if r := o.rows[id]; r != nil && r.state == "pending" {
		r.state, r.d.Attempts, r.lastErr, r.claimed = state, attempts, lastErr, time.Time{}
	}
	return nil
}

func (o *memOutbox) Done(_ context.Context, id string, _ time.Time, attempts int) error {
	return o.end(id, "done", attempts, "")
}

func (o *memOutbox) Fail(_ context.Context, id string, _ time.Time, attempts int, lastErr string) error {
	return o.end(id, "failed", attempts, lastErr)
}

func (o *memOutbox) Retry(_ context.Context, id string, next time.Time, attempts int, lastErr string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if r := o.rows[id]; r != nil && r.state == "pending" {
		r.next, r.d.Attempts, r.lastErr, r.claimed = next, attempts, lastErr, time.Time{}
	}
	return nil
}

func (o *memOutbox) row(id string) memRow {
	o.mu.Lock()
	defer o.mu.Unlock()
	return *o.rows[id]
}

func newTestDeliverer(t *testing.T, o Outbox, clock *testclock.Clock) (*Deliverer, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	require.NoError(t, err)
	return &Deliverer{
		Outbox:  o,
		Client:  NewClient(ClientOptions{AllowPrivate: true}),
		Now:     clock.Now,
		Metrics: m,
		Jitter:  func() float64 { return 0 },
	}, reg
}

func attemptsCounted(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "lnpdb_webhook_attempts_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			got[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
		}
	}
	return got
}

// A receiver that never answers 2xx is tried on the schedule, with the
// same webhook-id each time, the last attempt at the end of the day, and
// then given up.
func TestDelivererRetriesForADay(t *testing.T) {
	created := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	var stamps []int64
	var ids []string
	rcv := newCounting(t, func(w http.ResponseWriter, r *http.Request) {
		ts, _ := strconv.ParseInt(r.Header.Get(HeaderTimestamp), 10, 64)
		mu.Lock()
		stamps = append(stamps, ts-created.Unix())
		ids = append(ids, r.Header.Get(HeaderID))
		mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	d := testDelivery(rcv.srv.URL)
	d.CreatedAt = created
	o := newMemOutbox(d)
	clock := testclock.New(created)
	dl, reg := newTestDeliverer(t, o, clock)

	for range 20 {
		n, err := dl.Step(t.Context())
		require.NoError(t, err)
		r := o.row(d.ID)
		if r.state != "pending" {
			break
		}
		if n == 0 { // nothing due: on to the next attempt's time
			clock.Set(r.next)
			continue
		}
		// Not due again before its time.
		n, err = dl.Step(t.Context())
		require.NoError(t, err)
		assert.Zero(t, n)
	}
	r := o.row(d.ID)
	assert.Equal(t, "failed", r.state)
	assert.Equal(t, 8, r.d.Attempts)
	assert.Contains(t, r.lastErr, "503")

	h := func(d time.Duration) int64 { return int64(d / time.Second) }
	want := []int64{0, 5, h(5*time.Minute + 5*time.Second), h(35*time.Minute + 5*time.Second),
		h(2*time.Hour + 35*time.Minute + 5*time.Second), h(7*time.Hour + 35*time.Minute + 5*time.Second),
		h(17*time.Hour + 35*time.Minute + 5*time.Second), h(24 * time.Hour)}
	assert.Equal(t, want, stamps)
	assert.Len(t, slices.Compact(ids), 1)
	assert.Equal(t, map[string]float64{"delivered": 0, "retried": 7, "failed": 1}, attemptsCounted(t, reg))
}

func TestDelivererDelivers(t *testing.T) {
	calls := 0
	rcv := newCounting(t, func(w http.ResponseWriter, r *http.Request) {
		calls++ // the Deliverer's one attempt at a time at this delivery
		if calls == 1 {
			w.WriteHeader(http.StatusBadGateway)
		}
	})
	d := testDelivery(rcv.srv.URL)
	o := newMemOutbox(d)
	clock := testclock.New(d.CreatedAt)
	dl, reg := newTestDeliverer(t, o, clock)

	n, err := dl.Step(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, "pending", o.row(d.ID).state)
	assert.Equal(t, d.CreatedAt.Add(5*time.Second), o.row(d.ID).next)

	clock.Advance(5 * time.Second)
	_, err = dl.Step(t.Context())
	require.NoError(t, err)
	r := o.row(d.ID)
	assert.Equal(t, "done", r.state)
	assert.Equal(t, 2, r.d.Attempts)
	assert.Equal(t, map[string]float64{"delivered": 1, "retried": 1, "failed": 0}, attemptsCounted(t, reg))

	// Done is done: not due again, whenever.
	clock.Advance(48 * time.Hour)
	n, err = dl.Step(t.Context())
	require.NoError(t, err)
	assert.Zero(t, n)
}

// A delivery no retry can mend (its URL refused outright) is given up at
// once.
func TestDelivererGivesUpOnBadURL(t *testing.T) {
	d := testDelivery("https://169.254.169.254/latest/meta-data")
	o := newMemOutbox(d)
	clock := testclock.New(d.CreatedAt)
	dl, reg := newTestDeliverer(t, o, clock)
	dl.Client = NewClient(ClientOptions{})
	_, err := dl.Step(t.Context())
	require.NoError(t, err)
	r := o.row(d.ID)
	assert.Equal(t, "failed", r.state)
	assert.Equal(t, 1, r.d.Attempts)
	assert.Equal(t, map[string]float64{"delivered": 0, "retried": 0, "failed": 1}, attemptsCounted(t, reg))
}

func TestBackoffJitter(t *testing.T) {
	created := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	now := created.Add(time.Hour)
	for attempts, wait := range map[int]time.Duration{1: 5 * time.Second, 3: 30 * time.Minute, 5: 5 * time.Hour} {
		lo, ok := Backoff(created, now, attempts, 0)
		require.True(t, ok)
		hi, ok := Backoff(created, now, attempts, 0.999999)
		require.True(t, ok)
		assert.Equal(t, now.Add(wait), lo, attempts)
		assert.True(t, hi.After(lo) && !hi.After(now.Add(wait+wait/10)), "attempts %d: %v", attempts, hi.Sub(now))
	}
	// Never past the window's end, and nothing after it.
	next, ok := Backoff(created, created.Add(23*time.Hour), 6, 0.5)
	require.True(t, ok)
	assert.Equal(t, created.Add(Window), next)
	_, ok = Backoff(created, created.Add(Window), 8, 0)
	assert.False(t, ok)
}

// Run delivers what is written to the outbox when notified, without
// waiting for its poll.
func TestDelivererRunNotify(t *testing.T) {
	rcv := newCounting(t, nil)
	d := testDelivery(rcv.srv.URL)
	o := newMemOutbox()
	clock := testclock.New(d.CreatedAt)
	dl, _ := newTestDeliverer(t, o, clock)
	ctx, cancel := context.WithCancel(t.Context())
	stopped := make(chan struct{})
	go func() { dl.Run(ctx, time.Hour); close(stopped) }()

	o.mu.Lock()
	o.rows[d.ID] = &memRow{d: d, next: d.CreatedAt, state: "pending"}
	o.mu.Unlock()
	dl.Notify()
	<-rcv.hits
	cancel()
	<-stopped
}
