package serve

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/httpapi"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testpg"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// freezeRun is what clients saw while the accounts store was frozen, and
// what the ledger charged.
type freezeRun struct {
	answered, refused, failed int64 // 200s read whole, 503s, broken connections
	worst                     time.Duration
	charged                   int64 // LRN lookups in the ledger
	// from the engine's metrics
	timeouts, undelivered float64
}

// billedFreeze serves billed LRN lookups from the accounts store pg over
// loopback with the given write timeout and store deadline, hammers them
// from 8 clients, freezes the store (SIGSTOP on every PostgreSQL process)
// for freeze, and counts.
func billedFreeze(t *testing.T, pg *testpg.Server, writeTimeout, storeTimeout, freeze time.Duration) freezeRun {
	ctx := context.Background()
	s, err := billing.Open(ctx, pg.DSN())
	require.NoError(t, err)
	defer s.Close()
	a, err := s.CreateAccount(ctx, "frozen", time.Now())
	require.NoError(t, err)
	_, _, err = s.Credit(ctx, a.ID, 100*billing.MicrosPerDollar, "INV-1", time.Now())
	require.NoError(t, err)
	key := auth.NewKey()
	_, err = s.AddKey(ctx, billing.KeyRecord{AccountID: a.ID, Hash: auth.HashKey(key).Hash, Limit: 1 << 30}, time.Now())
	require.NoError(t, err)
	// A lease is spendable for 1.5 s after its last sync: a freeze of
	// a few seconds leaves lookups that need the store.
	e, err := billing.NewEngine(ctx, billing.EngineConfig{Store: s, LeaseTTL: 2 * time.Second, SyncEvery: 100 * time.Millisecond,
		LeaseCredit: 5000, StoreTimeout: storeTimeout})
	require.NoError(t, err)
	b := &billed{store: s, engine: e, keys: map[[32]byte]auth.Key{}}
	reg := prometheus.NewRegistry()
	require.NoError(t, e.RegisterMetrics(reg))

	h, err := httpapi.New(httpapi.Config{Tables: httpapi.NewTable(testdb.Open(t, lnpdb.Sample())), Keys: b, Accounts: b,
		Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: h, WriteTimeout: writeTimeout, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/api/v1/lrn"

	var run freezeRun
	var worst atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Timeout: 30 * time.Second}
			for {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest("POST", url, strings.NewReader(`{"phone_number":"12025550123"}`))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				start := time.Now()
				res, err := c.Do(req)
				var body []byte
				if err == nil {
					body, err = io.ReadAll(res.Body)
					res.Body.Close()
				}
				d := time.Since(start)
				for w := worst.Load(); int64(d) > w && !worst.CompareAndSwap(w, int64(d)); w = worst.Load() {
				}
				switch {
				case err != nil:
					atomic.AddInt64(&run.failed, 1)
				case res.StatusCode == 200 && strings.Contains(string(body), `"lrn"`):
					atomic.AddInt64(&run.answered, 1)
				case res.StatusCode == 503 && strings.Contains(string(body), "STORAGE_UNAVAILABLE"):
					atomic.AddInt64(&run.refused, 1)
					time.Sleep(10 * time.Millisecond)
				default:
					t.Errorf("unexpected answer %d %s", res.StatusCode, body)
					return
				}
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	thaw := pg.Freeze(t)
	time.Sleep(freeze)
	thaw()
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	require.NoError(t, srv.Shutdown(ctx))
	require.NoError(t, e.Close(ctx))
	run.worst = time.Duration(worst.Load())
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		switch mf.GetName() {
		case "lnpdb_billing_store_timeouts_total":
			run.timeouts = mf.GetMetric()[0].GetCounter().GetValue()
		case "lnpdb_billing_lookups_undelivered_total":
			run.undelivered = mf.GetMetric()[0].GetCounter().GetValue()
		}
	}

	rows, err := s.Usage(ctx, a.ID, billing.Month(time.Now()))
	require.NoError(t, err)
	for _, r := range rows {
		if r.Kind == billing.KindLRN {
			run.charged += r.Lookups
		}
	}
	if u := e.Stats().Unbilled; u != 0 {
		t.Errorf("%d lookups went unbilled", u)
	}
	return run
}

// TestBilledLookupsWithFrozenStore: with the accounts PostgreSQL frozen,
// billed lookups are answered from the lease while it lasts, then refused
// with 503 STORAGE_UNAVAILABLE within the store deadline — none waits for
// the store to come back — and the ledger charges exactly the answers
// clients received: a lookup whose answer could not be written (the
// connection's write timeout passed while it waited) is not charged.
func TestBilledLookupsWithFrozenStore(t *testing.T) {
	if testing.Short() {
		t.Skip("freezes PostgreSQL for seconds")
	}
	pg := testpg.NewServer(t)
	t.Run("deadline", func(t *testing.T) {
		// The store deadline is well under the write timeout: every
		// lookup is answered or refused in time, which the server says
		// by writing every answer (a lookup past the write timeout is a
		// connection broken on its client). How long clients waited is
		// logged, not held to a clock: it is the machine's load as much
		// as the server's.
		r := billedFreeze(t, pg, 2*time.Second, 300*time.Millisecond, 4*time.Second)
		t.Logf("answered %d, refused %d, broken %d, charged %d, worst %v", r.answered, r.refused, r.failed, r.charged, r.worst)
		require.Equal(t, r.answered, r.charged, "charged lookups = answers received")
		require.Zero(t, r.failed, "no connection was closed on a client: no lookup waited past the write timeout")
		require.Positive(t, r.refused, "the freeze outlasted the lease")
		require.Equal(t, float64(r.refused), r.timeouts, "each refusal is a store timeout on /metrics")
	})
	t.Run("undelivered", func(t *testing.T) {
		// The store answers after the write timeout has passed: the
		// lookups that waited for it are paid, their answers cannot be
		// written, and they are not charged.
		r := billedFreeze(t, pg, time.Second, 4*time.Second, 2500*time.Millisecond)
		t.Logf("answered %d, refused %d, broken %d, charged %d, worst %v", r.answered, r.refused, r.failed, r.charged, r.worst)
		require.Positive(t, r.failed, "some answers could not be written")
		require.Equal(t, float64(r.failed), r.undelivered, "each answer not written is counted undelivered on /metrics")
		require.Equal(t, r.answered, r.charged, "charged lookups = answers received")
	})
}
