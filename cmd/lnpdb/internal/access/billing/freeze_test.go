package billing

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testclock"
)

// freezeStore stands for a store out of the engine's reach while frozen:
// every sync fails. With applyFirst set, the first sync of the freeze is
// applied before it fails (its commit went through, its answer never
// came); otherwise none is.
type freezeStore struct {
	Store
	frozen, applyFirst atomic.Bool
}

var errFrozen = errors.New("the store does not answer")

func (s *freezeStore) Sync(ctx context.Context, now time.Time, ttl time.Duration, reqs []LeaseSync) ([]LeaseState, error) {
	if !s.frozen.Load() {
		return s.Store.Sync(ctx, now, ttl, reqs)
	}
	if s.applyFirst.CompareAndSwap(true, false) {
		if _, err := s.Store.Sync(ctx, now, ttl, reqs); err != nil {
			return nil, err
		}
	}
	return nil, errFrozen
}

func (s *freezeStore) ExpireLeases(ctx context.Context, now time.Time) (int, error) {
	if s.frozen.Load() {
		return 0, errFrozen
	}
	return s.Store.ExpireLeases(ctx, now)
}

// TestChargedEqualsAnsweredAcrossFreeze: the store freezes just as the
// account's spending slows, so the sync it does not answer asks for a
// smaller lease than the engine holds. The engine answers from its lease
// while the store is away, as much as that sync leaves it; the store comes
// back with the lease expired and returned meanwhile, or not, the sync
// applied before the freeze, or not. Every lookup answered is charged, once:
// none goes unbilled, and credit is conserved.
func TestChargedEqualsAnsweredAcrossFreeze(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		for _, tc := range []struct {
			name            string
			expire, applied bool
		}{
			{"expired", true, false},
			{"expired, sync applied", true, true},
			{"in time", false, false},
			{"in time, sync applied", false, true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ctx := context.Background()
				fs := &freezeStore{Store: s}
				acc := mustAccount(t, s, 1_000_000)
				k := addKey(t, s, acc.ID, tc.name)
				c := testclock.New(t0)
				const ttl = 24 * time.Hour
				e, err := NewEngine(ctx, EngineConfig{Store: fs, Now: c.Now, LeaseCredit: 30_000, SyncEvery: time.Hour, LeaseTTL: ttl, KeysEvery: time.Hour})
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close(ctx)
				answered := 0
				lookup := func() error {
					err := deliver(e, ctx, k, KindCNAM, false)
					if err == nil {
						answered++
					}
					return err
				}
				// $0.015 spent in a tenth of a second: the next lease
				// holds three seconds of that, $0.225.
				for range 5 {
					if err := lookup(); err != nil {
						t.Fatal(err)
					}
				}
				c.Advance(100 * time.Millisecond)
				if err := e.Flush(ctx); err != nil {
					t.Fatal(err)
				}
				if a, _ := fs.Account(ctx, acc.ID); a.Leased < 200_000 {
					t.Fatalf("the lease holds $%s, want about $0.225", a.Leased)
				}
				// Ten quiet seconds, then the store freezes: the sync
				// that finds it frozen asks for half the lease.
				c.Advance(10 * time.Second)
				fs.applyFirst.Store(tc.applied)
				fs.frozen.Store(true)
				if err := e.Flush(ctx); !errors.Is(err, ErrStoreUnavailable) {
					t.Fatalf("a sync while the store is frozen: %v", err)
				}
				// Lookups come fast again: answered from the lease, or
				// refused for want of the store, never answered unpaid.
				for range 70 {
					if err := lookup(); err != nil && !errors.Is(err, ErrStoreUnavailable) {
						t.Fatal(err)
					}
				}
				inFreeze := answered - 5
				if tc.expire {
					// The lease outlives its last sync by ttl: it
					// expires, and another process's sweep, which
					// reaches the store, returns what it holds.
					c.Advance(2 * ttl)
					if n, err := s.ExpireLeases(ctx, c.Now()); err != nil || n != 1 {
						t.Fatalf("ExpireLeases = %d, %v", n, err)
					}
					fs.frozen.Store(false)
				} else {
					c.Advance(time.Second)
					fs.frozen.Store(false)
				}
				for range 3 {
					if err := e.Flush(ctx); err != nil {
						t.Fatal(err)
					}
				}
				for range 5 {
					if err := lookup(); err != nil {
						t.Fatal(err)
					}
				}
				if err := e.Close(ctx); err != nil {
					t.Fatal(err)
				}
				a, charged := conserved(t, s, acc.ID)
				rows, err := s.Usage(ctx, acc.ID, Month(t0))
				if err != nil {
					t.Fatal(err)
				}
				var lookups int64
				for _, r := range rows {
					lookups += r.Lookups
				}
				t.Logf("answered %d (%d while frozen), charged %d lookups ($%s), unbilled %d", answered, inFreeze, lookups, charged, e.Stats().Unbilled)
				if inFreeze == 0 {
					t.Fatal("no lookup was answered from the lease while the store was frozen")
				}
				if lookups != int64(answered) || charged != Micros(answered)*DefaultPrices[KindCNAM] || e.Stats().Unbilled != 0 {
					t.Fatalf("answered %d, charged %d lookups ($%s), unbilled %d", answered, lookups, charged, e.Stats().Unbilled)
				}
				if a.Leased != 0 || a.Balance != 1_000_000-charged {
					t.Fatalf("after Close: %+v", a)
				}
			})
		}
	})
}
