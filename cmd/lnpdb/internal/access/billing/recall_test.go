package billing

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestIdleNodeHoldsNoWallet: two servers on one PostgreSQL store and a
// wallet of $0.03 with the free tier used. One paid lookup on node 2
// leases all that is left; node 1's lookups must not be refused for
// long: node 2 hands its lease back when idle or recalled, and node 1's
// lookup waits for it. Any refusal meanwhile reports the true wallet,
// node 2's lease included.
func TestIdleNodeHoldsNoWallet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs on the engines' one-second syncs")
	}
	ctx := context.Background()
	s := newPostgres(t)
	acc := mustAccount(t, s, 30_000)
	key := addKey(t, s, acc.ID, "k")
	node := func() *Engine {
		e, err := NewEngine(ctx, EngineConfig{Store: s})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close(ctx) })
		return e
	}
	n1, n2 := node(), node()
	for range FreeTier + 1 {
		if err := deliver(n2, ctx, key, KindLRN, false); err != nil {
			t.Fatal(err)
		}
	}
	if a, err := s.Account(ctx, acc.ID); err != nil || a.Balance != 0 || a.Leased < 29_000 {
		t.Fatalf("node 2 should lease what is left, $0.029: %+v %v", a, err)
	}
	start := time.Now()
	refused := 0
	for {
		err := deliver(n1, ctx, key, KindLRN, false)
		if err == nil {
			break
		}
		var short *InsufficientBalanceError
		if !errors.As(err, &short) {
			t.Fatal(err)
		}
		refused++
		if short.Balance < 29_000 {
			t.Fatalf("the refusal says the wallet holds $%s; it holds $0.029, leased by node 2", short.Balance)
		}
		if time.Since(start) > 5*time.Second {
			t.Fatalf("node 1 refused %d times over %v while node 2 sat on $0.029: %v", refused, time.Since(start), err)
		}
		time.Sleep(time.Second)
	}
	t.Logf("node 1's first lookup succeeded after %v and %d refusals", time.Since(start).Round(time.Millisecond), refused)
	// The rest of the wallet pays exactly 28 more lookups, to the last
	// micro-dollar, and then the wallet is empty on both nodes.
	for i := range 28 {
		if err := deliver(n1, ctx, key, KindLRN, false); err != nil {
			t.Fatalf("lookup %d of the 28 the wallet still pays: %v", i+1, err)
		}
	}
	for _, e := range []*Engine{n1, n2} {
		var short *InsufficientBalanceError
		if err := deliver(e, ctx, key, KindLRN, false); !errors.As(err, &short) || short.Balance != 0 {
			t.Fatalf("a lookup on an empty wallet: %v", err)
		}
	}
}

// TestLeaseRecall: both stores report what other leases hold, and a sync
// that recalls them flags each, reported once to its holder's next sync.
func TestLeaseRecall(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		acc := mustAccount(t, s, 30_000)
		sync := func(r LeaseSync) LeaseState {
			t.Helper()
			r.Account = acc.ID
			st, err := s.Sync(ctx, t0, time.Minute, []LeaseSync{r})
			if err != nil || st[0].Err != nil {
				t.Fatalf("sync %+v: %v %+v", r, err, st)
			}
			return st[0]
		}
		a := sync(LeaseSync{Holder: "a", WantCredit: 20_000})
		b := sync(LeaseSync{Holder: "b", WantCredit: 20_000})
		if a.Credit != 20_000 || b.Credit != 10_000 || b.Leased != 20_000 || b.Balance != 0 {
			t.Fatalf("a %+v, b %+v", a, b)
		}
		b = sync(LeaseSync{Lease: b.Lease, Seq: 1, WantCredit: 0, Recall: true})
		if b.Leased != 20_000 || b.Recalled {
			t.Fatalf("recalling: %+v", b)
		}
		a = sync(LeaseSync{Lease: a.Lease, Seq: 1, WantCredit: 0})
		if !a.Recalled || a.Credit != 0 || a.Balance != 30_000 {
			t.Fatalf("the recalled lease's sync: %+v", a)
		}
		a = sync(LeaseSync{Lease: a.Lease, Seq: 2, WantCredit: 0})
		if a.Recalled {
			t.Fatalf("a recall is reported once: %+v", a)
		}
		conserved(t, s, acc.ID)
	})
}
