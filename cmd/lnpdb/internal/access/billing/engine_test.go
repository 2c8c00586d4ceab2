package billing

import (
	"context"
	"errors"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testclock"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingStore counts the Store's lease syncs.
type countingStore struct {
	Store
	syncs atomic.Int64
}

func (s *countingStore) Sync(ctx context.Context, now time.Time, ttl time.Duration, reqs []LeaseSync) ([]LeaseState, error) {
	s.syncs.Add(1)
	return s.Store.Sync(ctx, now, ttl, reqs)
}

func newEngine(t *testing.T, s Store, c *testclock.Clock, credit Micros) *Engine {
	t.Helper()
	e, err := NewEngine(context.Background(), EngineConfig{Store: s, Now: c.Now, LeaseCredit: credit, SyncEvery: time.Hour, LeaseTTL: 24 * time.Hour, KeysEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e
}

func addKey(t *testing.T, s Store, acct, text string) [32]byte {
	t.Helper()
	h := hash(text)
	if _, err := s.AddKey(context.Background(), KeyRecord{AccountID: acct, Hash: h}, t0); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestFreeTierPerAccountPerMonth: ten free LRN lookups per account and
// calendar month (UTC), however many keys and processes spend them.
func TestFreeTierPerAccountPerMonth(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		a := mustAccount(t, s, 0)
		b := mustAccount(t, s, 0)
		ka1, ka2, kb := addKey(t, s, a.ID, "a1"), addKey(t, s, a.ID, "a2"), addKey(t, s, b.ID, "b")
		c := testclock.New(time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC))
		// Two engines on one store stand for two processes.
		e1, e2 := newEngine(t, s, c, 10_000), newEngine(t, s, c, 10_000)
		charge := func(e *Engine, k [32]byte, kind Kind) error { return deliver(e, ctx, k, kind, false) }
		for i := range FreeTier {
			e, k := e1, ka1
			if i%2 == 1 {
				e, k = e2, ka2
			}
			kind := KindLRN
			if i%3 == 0 {
				kind = KindLRNEnhanced
			}
			if err := charge(e, k, kind); err != nil {
				t.Fatalf("free lookup %d: %v", i+1, err)
			}
		}
		for _, e := range []*Engine{e1, e2} {
			for _, k := range [][32]byte{ka1, ka2} {
				var short *InsufficientBalanceError
				if err := charge(e, k, KindLRN); !errors.As(err, &short) || short.Price != DefaultPrices[KindLRN] || short.Balance != 0 {
					t.Fatalf("lookup 11 of the month: %v", err)
				}
			}
		}
		// Account b has its own.
		for i := range FreeTier {
			if err := charge(e2, kb, KindLRN); err != nil {
				t.Fatalf("account b's free lookup %d: %v", i+1, err)
			}
		}
		// CNAM is never free.
		if err := charge(e1, kb, KindCNAM); !errors.Is(err, ErrInsufficientBalance) {
			t.Fatalf("CNAM on the free tier: %v", err)
		}
		// December brings ten more.
		c.Set(time.Date(2026, 12, 1, 0, 0, 1, 0, time.UTC))
		for i := range FreeTier {
			if err := charge(e1, ka1, KindLRN); err != nil {
				t.Fatalf("December free lookup %d: %v", i+1, err)
			}
		}
		if err := charge(e2, ka2, KindLRN); !errors.Is(err, ErrInsufficientBalance) {
			t.Fatalf("December lookup 11: %v", err)
		}
		for _, e := range []*Engine{e1, e2} {
			if err := e.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for m, want := range map[string]int64{"2026-11": FreeTier, "2026-12": FreeTier} {
			rows, _ := s.Usage(ctx, a.ID, m)
			var free int64
			for _, r := range rows {
				free += r.Free
				if r.Amount != 0 {
					t.Errorf("%s: charged %+v", m, r)
				}
			}
			if free != want {
				t.Errorf("%s: %d free lookups in the ledger, want %d", m, free, want)
			}
		}
	})
}

// TestChargeFromLease: lookups are paid from the lease with a store sync
// only when it runs out; the ledger and the wallet agree at the end.
func TestChargeFromLease(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		cs := &countingStore{Store: s}
		a := mustAccount(t, s, 1_000_000)
		if err := s.SetPrice(ctx, a.ID, KindCNAM, 2500); err != nil {
			t.Fatal(err)
		}
		k := addKey(t, s, a.ID, "k")
		c := testclock.New(t0)
		e := newEngine(t, cs, c, 100_000)
		before := cs.syncs.Load()
		const n = 300
		for i := range n {
			if err := deliver(e, ctx, k, KindCNAM, false); err != nil {
				a := e.account(a.ID)
				t.Fatalf("lookup %d: %v; %+v", i, err, a)
			}
		}
		// 300 × $0.0025 = $0.75 from leases of $0.10: 8 renewals, and as
		// many early ones in the background at a quarter left.
		if syncs := cs.syncs.Load() - before; syncs > 20 {
			t.Errorf("%d store syncs for %d lookups", syncs, n)
		}
		if err := deliver(e, ctx, k, KindLRN, true); err != nil { // free LRN, paid add-on
			t.Fatal(err)
		}
		if err := e.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if err := deliver(e, ctx, k, KindLRN, false); !errors.Is(err, ErrClosed) {
			t.Fatalf("charge after close: %v", err)
		}
		acc, charged := conserved(t, s, a.ID)
		want := Micros(n)*2500 + DefaultPrices[KindMessagingAddon]
		if charged != want || acc.Balance != 1_000_000-want || acc.Leased != 0 {
			t.Fatalf("charged %d (want %d), account %+v", charged, want, acc)
		}
		if err := deliver(e, ctx, hash("nobody"), KindLRN, false); !errors.Is(err, ErrUnknownKey) {
			t.Fatalf("unknown key: %v", err)
		}
	})
}

// TestChargeRace: many goroutines spend one account through one engine;
// exactly the credit is spent, never more.
func TestChargeRace(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		a := mustAccount(t, s, 50_000) // 50 lookups + 10 free
		k := addKey(t, s, a.ID, "k")
		e := newEngine(t, s, testclock.New(t0), 7_000)
		var paid atomic.Int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 20 {
					if err := deliver(e, ctx, k, KindLRN, false); err == nil {
						paid.Add(1)
					} else if !errors.Is(err, ErrInsufficientBalance) {
						t.Error(err)
					}
				}
			}()
		}
		wg.Wait()
		if err := e.Close(ctx); err != nil {
			t.Fatal(err)
		}
		acc, charged := conserved(t, s, a.ID)
		if paid.Load() != 60 || charged != 50_000 || acc.Balance != 0 {
			t.Fatalf("paid %d, charged %d, balance %d", paid.Load(), charged, acc.Balance)
		}
	})
}

// TestSuspendedAndRevoked: keys of suspended accounts and revoked keys no
// longer authenticate once the engine reloads.
func TestSuspendedAndRevoked(t *testing.T) {
	s := newBolt(t)
	ctx := context.Background()
	a := mustAccount(t, s, 0)
	k1, err := s.AddKey(ctx, KeyRecord{AccountID: a.ID, Hash: hash("one")}, t0)
	if err != nil {
		t.Fatal(err)
	}
	addKey(t, s, a.ID, "two")
	e := newEngine(t, s, testclock.New(t0), 1000)
	if _, ok := e.Authenticate("one"); !ok {
		t.Fatal("key one refused")
	}
	if _, err := s.RevokeKey(ctx, a.ID, k1.ID, t0); err != nil {
		t.Fatal(err)
	}
	if err := e.ReloadKeys(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Authenticate("one"); ok {
		t.Fatal("revoked key accepted")
	}
	if _, ok := e.Authenticate("two"); !ok {
		t.Fatal("key two refused")
	}
	if _, err := s.SetStatus(ctx, a.ID, StatusSuspended); err != nil {
		t.Fatal(err)
	}
	_ = e.ReloadKeys(ctx)
	if _, ok := e.Authenticate("two"); ok {
		t.Fatal("key of a suspended account accepted")
	}
	if !e.Suspended("two") {
		t.Fatal("key of a suspended account not reported suspended")
	}
	if e.Suspended("one") || e.Suspended("nope") {
		t.Fatal("a revoked or unknown key reported suspended")
	}
	if _, err := s.SetStatus(ctx, a.ID, StatusActive); err != nil {
		t.Fatal(err)
	}
	_ = e.ReloadKeys(ctx)
	if _, ok := e.Authenticate("two"); !ok || e.Suspended("two") {
		t.Fatal("key of a reactivated account refused")
	}
}

func TestChargeAllocs(t *testing.T) {
	s := newBolt(t)
	a := mustAccount(t, s, 100*MicrosPerDollar)
	k := addKey(t, s, a.ID, "k")
	e := newEngine(t, s, testclock.New(t0), 100*MicrosPerDollar)
	ctx := context.Background()
	for range FreeTier + 1 {
		_ = deliver(e, ctx, k, KindLRNEnhanced, true)
	}
	if n := testing.AllocsPerRun(1000, func() { _ = deliver(e, ctx, k, KindLRNEnhanced, true) }); n != 0 {
		t.Fatalf("Charge allocates %v times", n)
	}
}

func BenchmarkCharge(b *testing.B) {
	s := newBolt(b)
	a := mustAccount(b, s, 1_000_000*MicrosPerDollar)
	k := addKey2(b, s, a.ID)
	e, err := NewEngine(context.Background(), EngineConfig{Store: s})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(context.Background())
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := deliver(e, ctx, k, KindLRNEnhanced, false); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func addKey2(b *testing.B, s Store, acct string) [32]byte {
	h := hash("bench")
	if _, err := s.AddKey(context.Background(), KeyRecord{AccountID: acct, Hash: h}, t0); err != nil {
		b.Fatal(err)
	}
	return h
}

// deliver charges a lookup whose answer is delivered: Charge, then Settle.
func deliver(e *Engine, ctx context.Context, h [32]byte, kind Kind, addon bool) error {
	hold, err := e.Charge(ctx, h, kind, addon)
	if err == nil {
		hold.Settle(true)
	}
	return err
}

// doubtStore applies a sync and then fails it, while lost is set: the
// store took the report, its answer never came (a timeout at commit).
type doubtStore struct {
	Store
	lost atomic.Bool
}

func (s *doubtStore) Sync(ctx context.Context, now time.Time, ttl time.Duration, reqs []LeaseSync) ([]LeaseState, error) {
	states, err := s.Store.Sync(ctx, now, ttl, reqs)
	if err == nil && s.lost.Load() {
		err = errors.New("the answer was lost")
	}
	return states, err
}

// TestCloseAfterSyncInDoubt: a sync whose outcome is unknown is sent again
// as it was; lookups answered since are not in it. Close charges them too:
// what was charged is what was answered, and the lease's credit comes
// back.
func TestCloseAfterSyncInDoubt(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		ds := &doubtStore{Store: s}
		a := mustAccount(t, s, 1_000_000)
		k := addKey(t, s, a.ID, "k")
		e := newEngine(t, ds, testclock.New(t0), 100_000)
		for range 3 {
			if err := deliver(e, ctx, k, KindCNAM, false); err != nil {
				t.Fatal(err)
			}
		}
		ds.lost.Store(true)
		if err := e.Flush(ctx); err == nil {
			t.Fatal("the sync in doubt did not fail")
		}
		ds.lost.Store(false)
		// Answered from the lease while its last sync is in doubt.
		for range 4 {
			if err := deliver(e, ctx, k, KindCNAM, false); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.Close(ctx); err != nil {
			t.Fatal(err)
		}
		acc, charged := conserved(t, s, a.ID)
		if want := 7 * DefaultPrices[KindCNAM]; charged != want || acc.Balance != 1_000_000-want || acc.Leased != 0 {
			t.Errorf("7 lookups answered: charged %d (want %d), account %+v, unbilled %d", charged, want, acc, e.Stats().Unbilled)
		}
	})
}
