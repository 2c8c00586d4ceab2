package billing

import (
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testpg"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperMain())
	}
	os.Exit(testpg.Main(m))
}

// stores runs test against each Store implementation, each on a new store.
func stores(t *testing.T, test func(t *testing.T, s Store)) {
	t.Run("bolt", func(t *testing.T) {
		t.Parallel()
		test(t, newBolt(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		test(t, newPostgres(t))
	})
}

func newBolt(t testing.TB) Store {
	s, err := Open(context.Background(), "bolt://"+filepath.Join(t.TempDir(), "sub", "accounts.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newPostgres(t testing.TB) Store {
	s, err := Open(context.Background(), testpg.New(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func hash(s string) [32]byte { return sha256.Sum256([]byte(s)) }

func mustAccount(t testing.TB, s Store, credit Micros) Account {
	t.Helper()
	ctx := context.Background()
	a, err := s.CreateAccount(ctx, "Acme", t0)
	if err != nil {
		t.Fatal(err)
	}
	if credit > 0 {
		if _, _, err := s.Credit(ctx, a.ID, credit, "INV-0", t0); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

// conserved checks credits = balance + leased + charged for a.
func conserved(t testing.TB, s Store, id string) (Account, Micros) {
	t.Helper()
	ctx := context.Background()
	a, err := s.Account(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var charged Micros
	for _, m := range []string{"2026-10", "2026-11", "2026-12"} {
		rows, err := s.Usage(ctx, id, m)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			charged += r.Amount
		}
	}
	if a.Balance < 0 || a.Leased < 0 {
		t.Fatalf("negative: balance %d leased %d", a.Balance, a.Leased)
	}
	if a.Credited != a.Balance+a.Leased+charged {
		t.Fatalf("credit not conserved: credited %d != balance %d + leased %d + charged %d", a.Credited, a.Balance, a.Leased, charged)
	}
	return a, charged
}

func TestAccounts(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		if _, err := s.CreateAccount(ctx, " ", t0); !errors.Is(err, ErrInvalid) {
			t.Fatalf("empty name: %v", err)
		}
		a, err := s.CreateAccount(ctx, "Acme", t0)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := s.CreateAccount(ctx, "Beta", t0.Add(time.Second))
		got, err := s.Account(ctx, a.ID)
		if err != nil || got.Name != "Acme" || got.Status != StatusActive || !got.Created.Equal(t0) || got.Balance != 0 {
			t.Fatalf("Account = %+v, %v", got, err)
		}
		all, err := s.Accounts(ctx)
		if err != nil || len(all) != 2 || all[0].ID != a.ID || all[1].ID != b.ID {
			t.Fatalf("Accounts = %+v, %v", all, err)
		}
		if _, err := s.Account(ctx, "acct_nope"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown account: %v", err)
		}
		sus, err := s.SetStatus(ctx, a.ID, StatusSuspended)
		if err != nil || sus.Status != StatusSuspended {
			t.Fatalf("suspend: %+v %v", sus, err)
		}
		if _, err := s.SetStatus(ctx, a.ID, "gone"); !errors.Is(err, ErrInvalid) {
			t.Fatalf("bad status: %v", err)
		}
		if _, err := s.SetStatus(ctx, "acct_nope", StatusSuspended); !errors.Is(err, ErrNotFound) {
			t.Fatalf("suspend unknown: %v", err)
		}
	})
}

func TestKeys(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		a := mustAccount(t, s, 0)
		k, err := s.AddKey(ctx, KeyRecord{AccountID: a.ID, Label: "prod", Hash: hash("k1"), Limit: 600}, t0)
		if err != nil || k.ID == "" || !k.Created.Equal(t0) {
			t.Fatalf("AddKey = %+v, %v", k, err)
		}
		if _, err := s.AddKey(ctx, KeyRecord{AccountID: a.ID, Hash: hash("k1")}, t0); !errors.Is(err, ErrConflict) {
			t.Fatalf("same hash twice: %v", err)
		}
		if _, err := s.AddKey(ctx, KeyRecord{AccountID: "acct_nope", Hash: hash("k2")}, t0); !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown account: %v", err)
		}
		if _, err := s.AddKey(ctx, KeyRecord{AccountID: a.ID, Hash: hash("k3"), Limit: -1}, t0); !errors.Is(err, ErrInvalid) {
			t.Fatalf("negative limit: %v", err)
		}
		k2, _ := s.AddKey(ctx, KeyRecord{AccountID: a.ID, Label: "dev", Hash: hash("k2")}, t0.Add(time.Second))
		keys, err := s.Keys(ctx, a.ID)
		if err != nil || len(keys) != 2 || keys[0].ID != k.ID || keys[0].Hash != hash("k1") || keys[0].Limit != 600 || keys[0].Label != "prod" || keys[1].ID != k2.ID {
			t.Fatalf("Keys = %+v, %v", keys, err)
		}
		if _, err := s.RevokeKey(ctx, "acct_other", k.ID, t0); !errors.Is(err, ErrNotFound) {
			t.Fatalf("revoke through another account: %v", err)
		}
		r, err := s.RevokeKey(ctx, a.ID, k.ID, t0.Add(time.Hour))
		if err != nil || !r.Revoked.Equal(t0.Add(time.Hour)) {
			t.Fatalf("RevokeKey = %+v, %v", r, err)
		}
		r, _ = s.RevokeKey(ctx, a.ID, k.ID, t0.Add(2*time.Hour))
		if !r.Revoked.Equal(t0.Add(time.Hour)) {
			t.Fatalf("second revoke moved the time: %v", r.Revoked)
		}
		all, _ := s.Keys(ctx, "")
		if len(all) != 2 || all[0].Revoked.IsZero() || !all[1].Revoked.IsZero() {
			t.Fatalf("all keys = %+v", all)
		}
	})
}

// TestAddKeyCapped: keys added together to one account, more than the
// cap, leave exactly the cap valid: the count and the addition are one
// transaction. A revoked key does not count.
func TestAddKeyCapped(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		a := mustAccount(t, s, 0)
		first, err := s.AddKeyCapped(ctx, KeyRecord{AccountID: a.ID, Hash: hash("first")}, t0, 25)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 40)
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = s.AddKeyCapped(ctx, KeyRecord{AccountID: a.ID, Hash: hash("k" + strconv.Itoa(i))}, t0, 25)
			})
		}
		wg.Wait()
		refused := 0
		for _, err := range errs {
			switch {
			case errors.Is(err, ErrKeyCap):
				refused++
			case err != nil:
				t.Fatal(err)
			}
		}
		keys, _ := s.Keys(ctx, a.ID)
		if len(keys) != 25 || refused != 16 {
			t.Fatalf("40 added together under a cap of 25, one there before: %d keys, %d refused", len(keys), refused)
		}
		if _, err := s.RevokeKey(ctx, a.ID, first.ID, t0); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddKeyCapped(ctx, KeyRecord{AccountID: a.ID, Hash: hash("after")}, t0, 25); err != nil {
			t.Fatalf("a revoked key makes room: %v", err)
		}
		if _, err := s.AddKeyCapped(ctx, KeyRecord{AccountID: a.ID, Hash: hash("past")}, t0, 25); !errors.Is(err, ErrKeyCap) {
			t.Fatalf("26th valid key: %v", err)
		}
		if _, err := s.AddKey(ctx, KeyRecord{AccountID: a.ID, Hash: hash("operator")}, t0); err != nil {
			t.Fatalf("AddKey has no cap: %v", err)
		}
		if _, err := s.AddKey(ctx, KeyRecord{AccountID: a.ID, Label: "invoice\u202egpj.exe", Hash: hash("rlo")}, t0); !errors.Is(err, ErrInvalid) {
			t.Fatalf("a label with U+202E: %v", err)
		}
	})
}

func TestCredit(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		a := mustAccount(t, s, 0)
		c, applied, err := s.Credit(ctx, a.ID, 25*MicrosPerDollar, "INVOICE-123", t0)
		if err != nil || !applied || c.Amount != 25*MicrosPerDollar {
			t.Fatalf("Credit = %+v %v %v", c, applied, err)
		}
		if _, applied, err = s.Credit(ctx, a.ID, 25*MicrosPerDollar, "INVOICE-123", t0); err != nil || applied {
			t.Fatalf("repeat: %v %v", applied, err)
		}
		if _, _, err = s.Credit(ctx, a.ID, 26*MicrosPerDollar, "INVOICE-123", t0); !errors.Is(err, ErrConflict) {
			t.Fatalf("same ref, other amount: %v", err)
		}
		for _, bad := range []Micros{0, -5} {
			if _, _, err = s.Credit(ctx, a.ID, bad, "INVOICE-9", t0); !errors.Is(err, ErrInvalid) {
				t.Fatalf("amount %d: %v", bad, err)
			}
		}
		if _, _, err = s.Credit(ctx, a.ID, 1, "", t0); !errors.Is(err, ErrInvalid) {
			t.Fatalf("no ref: %v", err)
		}
		if _, _, err = s.Credit(ctx, "acct_nope", 1, "X", t0); !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown account: %v", err)
		}
		got, _ := s.Account(ctx, a.ID)
		if got.Balance != 25*MicrosPerDollar || got.Credited != 25*MicrosPerDollar {
			t.Fatalf("after credits: %+v", got)
		}
		cs, err := s.Credits(ctx, a.ID)
		if err != nil || len(cs) != 1 || cs[0].Ref != "INVOICE-123" {
			t.Fatalf("Credits = %+v %v", cs, err)
		}
	})
}

func TestPrices(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		a := mustAccount(t, s, 0)
		p, err := s.Prices(ctx, a.ID)
		if err != nil || p[KindLRN] != DefaultPrices[KindLRN] || len(p) != len(Kinds) {
			t.Fatalf("Prices = %v %v", p, err)
		}
		if err := s.SetPrice(ctx, "", KindCNAM, 2500); err != nil {
			t.Fatal(err)
		}
		if err := s.SetPrice(ctx, a.ID, KindLRN, 400); err != nil {
			t.Fatal(err)
		}
		p, _ = s.Prices(ctx, a.ID)
		if p[KindLRN] != 400 || p[KindCNAM] != 2500 || p[KindTrust] != DefaultPrices[KindTrust] {
			t.Fatalf("with overrides: %v", p)
		}
		def, _ := s.Prices(ctx, "")
		if def[KindLRN] != DefaultPrices[KindLRN] || def[KindCNAM] != 2500 {
			t.Fatalf("defaults: %v", def)
		}
		if err := s.SetPrice(ctx, a.ID, "bogus", 1); !errors.Is(err, ErrInvalid) {
			t.Fatalf("bad kind: %v", err)
		}
		if err := s.SetPrice(ctx, a.ID, KindLRN, -1); !errors.Is(err, ErrInvalid) {
			t.Fatalf("negative price: %v", err)
		}
		if err := s.SetPrice(ctx, "acct_nope", KindLRN, 1); !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown account: %v", err)
		}
		if p, _ = s.Prices(ctx, a.ID); p[KindLRN] != 400 {
			t.Fatalf("a refused price changed the list: %v", p)
		}
	})
}

func syncOne(t testing.TB, s Store, now time.Time, r LeaseSync) LeaseState {
	t.Helper()
	out, err := s.Sync(context.Background(), now, 30*time.Second, []LeaseSync{r})
	if err != nil {
		t.Fatal(err)
	}
	return out[0]
}

func TestLease(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		a := mustAccount(t, s, 10_000)
		l := syncOne(t, s, t0, LeaseSync{Account: a.ID, Holder: "p1", WantCredit: 4000, WantFree: 3})
		if l.Err != nil || l.Lease == 0 || l.Credit != 4000 || l.Free != 3 || l.Balance != 6000 || l.FreeLeft != FreeTier-3 || l.Month != "2026-11" {
			t.Fatalf("new lease: %+v", l)
		}
		conserved(t, s, a.ID)
		spend := LeaseSync{Account: a.ID, Lease: l.Lease, Seq: 1, SpentCredit: 3000, SpentFree: 2, WantCredit: 4000, WantFree: 3,
			Usage: []UsageRow{{Day: "2026-11-23", Kind: KindLRN, Lookups: 4, Free: 2, Amount: 2000}, {Day: "2026-11-23", Kind: KindCNAM, Lookups: 1, Amount: 1000}}}
		l = syncOne(t, s, t0.Add(time.Second), spend)
		if l.Err != nil || l.Credit != 4000 || l.Balance != 3000 || l.Free != 3 || l.FreeLeft != FreeTier-5 {
			t.Fatalf("after spending: %+v", l)
		}
		_, charged := conserved(t, s, a.ID)
		if charged != 3000 {
			t.Fatalf("charged %d", charged)
		}
		// The same sync again (its answer was lost): not applied twice.
		l = syncOne(t, s, t0.Add(2*time.Second), spend)
		if l.Err != nil || l.Balance != 3000 {
			t.Fatalf("replayed sync: %+v", l)
		}
		if _, charged = conserved(t, s, a.ID); charged != 3000 {
			t.Fatalf("replayed sync charged again: %d", charged)
		}
		// Spending more than the lease holds is refused and changes nothing.
		over := LeaseSync{Account: a.ID, Lease: l.Lease, Seq: 2, SpentCredit: 5000, Usage: []UsageRow{{Day: "2026-11-23", Kind: KindLRN, Lookups: 5, Amount: 5000}}}
		if l2 := syncOne(t, s, t0.Add(3*time.Second), over); !errors.Is(l2.Err, ErrInvalid) {
			t.Fatalf("overspend: %+v", l2)
		}
		bad := LeaseSync{Account: a.ID, Lease: l.Lease, Seq: 2, SpentCredit: 100}
		if l2 := syncOne(t, s, t0.Add(3*time.Second), bad); !errors.Is(l2.Err, ErrInvalid) {
			t.Fatalf("spending without usage rows: %+v", l2)
		}
		conserved(t, s, a.ID)
		// Wanting less returns the rest.
		l = syncOne(t, s, t0.Add(4*time.Second), LeaseSync{Account: a.ID, Lease: l.Lease, Seq: 2, WantCredit: 1000, WantFree: 1})
		if l.Credit != 1000 || l.Balance != 6000 || l.Free != 1 || l.FreeLeft != FreeTier-3 {
			t.Fatalf("shrunk: %+v", l)
		}
		// Release returns everything.
		l = syncOne(t, s, t0.Add(5*time.Second), LeaseSync{Account: a.ID, Lease: l.Lease, Seq: 3, Release: true, SpentCredit: 1000, SpentFree: 1,
			Usage: []UsageRow{{Day: "2026-11-23", Kind: KindLRNEnhanced, Lookups: 2, Free: 1, Amount: 1000}}})
		if l.Err != nil || l.Lease != 0 || l.Balance != 6000 || l.FreeLeft != FreeTier-3 {
			t.Fatalf("released: %+v", l)
		}
		acc, charged := conserved(t, s, a.ID)
		if charged != 4000 || acc.Leased != 0 {
			t.Fatalf("after release: %+v charged %d", acc, charged)
		}
		if l = syncOne(t, s, t0.Add(6*time.Second), LeaseSync{Account: a.ID, Lease: 99999, Seq: 1}); !errors.Is(l.Err, ErrLeaseLost) {
			t.Fatalf("unknown lease: %+v", l)
		}
		if l = syncOne(t, s, t0, LeaseSync{Account: "acct_nope", WantCredit: 1}); !errors.Is(l.Err, ErrNotFound) {
			t.Fatalf("unknown account: %+v", l)
		}
		rows, err := s.Usage(ctx, a.ID, "2026-11")
		if err != nil || len(rows) != 3 || rows[0].Kind != KindLRN || rows[0].Lookups != 4 || rows[0].Free != 2 || rows[1].Kind != KindLRNEnhanced || rows[2].Kind != KindCNAM {
			t.Fatalf("usage = %+v %v", rows, err)
		}
		if rows, _ := s.Usage(ctx, a.ID, "2026-10"); len(rows) != 0 {
			t.Fatalf("October usage: %+v", rows)
		}
		if _, err := s.Usage(ctx, a.ID, "2026-13"); !errors.Is(err, ErrInvalid) {
			t.Fatalf("bad month: %v", err)
		}
	})
}

func TestLeaseExpiry(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		a := mustAccount(t, s, 10_000)
		l := syncOne(t, s, t0, LeaseSync{Account: a.ID, WantCredit: 4000, WantFree: 2})
		l = syncOne(t, s, t0.Add(10*time.Second), LeaseSync{Account: a.ID, Lease: l.Lease, Seq: 1, SpentCredit: 1000, WantCredit: 4000, WantFree: 2,
			Usage: []UsageRow{{Day: "2026-11-23", Kind: KindLRN, Lookups: 1, Amount: 1000}}})
		if n, err := s.ExpireLeases(ctx, t0.Add(30*time.Second)); err != nil || n != 0 {
			t.Fatalf("renewed lease expired: %d %v", n, err)
		}
		n, err := s.ExpireLeases(ctx, t0.Add(41*time.Second))
		if err != nil || n != 1 {
			t.Fatalf("ExpireLeases = %d %v", n, err)
		}
		acc, charged := conserved(t, s, a.ID)
		if acc.Balance != 9000 || charged != 1000 || acc.Leased != 0 {
			t.Fatalf("after expiry: %+v, charged %d", acc, charged)
		}
		if left, _ := s.FreeLeft(ctx, a.ID, "2026-11"); left != FreeTier {
			t.Fatalf("free lookups not returned: %d left", left)
		}
		// The holder comes back (the store was out of its reach) and
		// reports what it spent before its deadline: it is charged from
		// the balance the expiry returned it to, and the lease lives on
		// under its ID.
		late := LeaseSync{Account: a.ID, Lease: l.Lease, Seq: 2, SpentCredit: 1000, SpentFree: 1, WantCredit: 500,
			Usage: []UsageRow{{Day: "2026-11-23", Kind: KindLRN, Lookups: 2, Free: 1, Amount: 1000}}}
		l2 := syncOne(t, s, t0.Add(42*time.Second), late)
		if l2.Err != nil || l2.Lease != l.Lease || l2.Credit != 500 || l2.Balance != 7500 || l2.FreeLeft != FreeTier-1 {
			t.Fatalf("late sync: %+v", l2)
		}
		if acc, charged := conserved(t, s, a.ID); charged != 2000 || acc.Leased != 500 {
			t.Fatalf("after the late sync: %+v, charged %d", acc, charged)
		}
		// Sent again (its answer lost), it is applied once.
		if l2 = syncOne(t, s, t0.Add(43*time.Second), late); l2.Err != nil || l2.Lease != l.Lease || l2.Balance != 7500 {
			t.Fatalf("late sync again: %+v", l2)
		}
		if _, charged := conserved(t, s, a.ID); charged != 2000 {
			t.Fatalf("the late sync sent again charged twice: %d", charged)
		}
		rows, err := s.Usage(ctx, a.ID, "2026-11")
		if err != nil || len(rows) != 1 || rows[0].Lookups != 3 || rows[0].Free != 1 || rows[0].Amount != 2000 {
			t.Fatalf("usage = %+v %v", rows, err)
		}

		// A late report the balance no longer holds (other leases took
		// it) is refused: no balance goes below zero.
		b := mustAccount(t, s, 10_000)
		lb := syncOne(t, s, t0, LeaseSync{Account: b.ID, WantCredit: 4000})
		if _, err := s.ExpireLeases(ctx, t0.Add(41*time.Second)); err != nil {
			t.Fatal(err)
		}
		if other := syncOne(t, s, t0.Add(41*time.Second), LeaseSync{Account: b.ID, WantCredit: 10_000}); other.Credit != 10_000 {
			t.Fatalf("the other lease: %+v", other)
		}
		short := LeaseSync{Account: b.ID, Lease: lb.Lease, Seq: 1, SpentCredit: 1000, Usage: []UsageRow{{Day: "2026-11-23", Kind: KindLRN, Lookups: 1, Amount: 1000}}}
		if lb = syncOne(t, s, t0.Add(42*time.Second), short); !errors.Is(lb.Err, ErrLeaseLost) {
			t.Fatalf("late sync past the balance: %+v", lb)
		}
		conserved(t, s, b.ID)
		// An expired lease is kept a day for its holder, not longer.
		if _, err := s.ExpireLeases(ctx, t0.Add(41*time.Second+tombstoneKeep+time.Second)); err != nil {
			t.Fatal(err)
		}
		short.Seq, short.SpentCredit, short.Usage = 2, 0, nil
		if lb = syncOne(t, s, t0.Add(42*time.Second+tombstoneKeep+time.Second), short); !errors.Is(lb.Err, ErrLeaseLost) {
			t.Fatalf("late sync a day after: %+v", lb)
		}
		conserved(t, s, a.ID)
	})
}

func TestFreeTierMonths(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		a := mustAccount(t, s, 0)
		b := mustAccount(t, s, 0)
		nov := time.Date(2026, 11, 30, 23, 59, 50, 0, time.UTC)
		la := syncOne(t, s, nov, LeaseSync{Account: a.ID, WantFree: 100})
		if la.Free != FreeTier || la.FreeLeft != 0 {
			t.Fatalf("free tier: %+v", la)
		}
		// Another lease on the same account gets none: the tier is the
		// account's, not the lease's.
		if l2 := syncOne(t, s, nov, LeaseSync{Account: a.ID, WantFree: 5}); l2.Free != 0 {
			t.Fatalf("second lease got free lookups: %+v", l2)
		}
		if lb := syncOne(t, s, nov, LeaseSync{Account: b.ID, WantFree: 5}); lb.Free != 5 {
			t.Fatalf("account b: %+v", lb)
		}
		// Spend 4 in November; at the month boundary the rest of
		// November's is returned and December's granted.
		dec := nov.Add(20 * time.Second)
		la = syncOne(t, s, dec, LeaseSync{Account: a.ID, Lease: la.Lease, Seq: 1, SpentFree: 4, WantFree: 10,
			Usage: []UsageRow{{Day: "2026-11-30", Kind: KindLRN, Lookups: 4, Free: 4}}})
		if la.Err != nil || la.Month != "2026-12" || la.Free != 10 || la.FreeLeft != 0 {
			t.Fatalf("December lease: %+v", la)
		}
		if left, _ := s.FreeLeft(ctx, a.ID, "2026-11"); left != FreeTier-4 {
			t.Fatalf("November left %d, want %d", left, FreeTier-4)
		}
		rows, _ := s.Usage(ctx, a.ID, "2026-11")
		if len(rows) != 1 || rows[0].Free != 4 || rows[0].Amount != 0 {
			t.Fatalf("November usage: %+v", rows)
		}
	})
}

func TestSuspendedGetsNoCredit(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		a := mustAccount(t, s, 10_000)
		l := syncOne(t, s, t0, LeaseSync{Account: a.ID, WantCredit: 5000, WantFree: 5})
		if _, err := s.SetStatus(context.Background(), a.ID, StatusSuspended); err != nil {
			t.Fatal(err)
		}
		l = syncOne(t, s, t0.Add(time.Second), LeaseSync{Account: a.ID, Lease: l.Lease, Seq: 1, WantCredit: 5000, WantFree: 5})
		if l.Credit != 0 || l.Free != 0 || l.Balance != 10_000 || l.Status != StatusSuspended {
			t.Fatalf("suspended lease: %+v", l)
		}
	})
}

// TestSyncRace has many goroutines lease and spend one account at once:
// the balance never goes below zero and credit is conserved.
func TestSyncRace(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		a := mustAccount(t, s, 50_000)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var spent Micros
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				now := t0.Add(time.Duration(g) * time.Millisecond)
				l := syncOne(t, s, now, LeaseSync{Account: a.ID, WantCredit: 3000})
				for seq := int64(1); seq <= 20; seq++ {
					if l.Err != nil {
						t.Error(l.Err)
						return
					}
					sp := l.Credit / 2
					req := LeaseSync{Account: a.ID, Lease: l.Lease, Seq: seq, WantCredit: 3000, SpentCredit: sp}
					if sp > 0 {
						req.Usage = []UsageRow{{Day: "2026-11-23", Kind: KindTrust, Lookups: 1, Amount: sp}}
					}
					l = syncOne(t, s, now, req)
					if l.Err == nil {
						mu.Lock()
						spent += sp
						mu.Unlock()
					}
				}
				syncOne(t, s, now, LeaseSync{Account: a.ID, Lease: l.Lease, Seq: 21, Release: true})
			}()
		}
		wg.Wait()
		acc, charged := conserved(t, s, a.ID)
		if charged != spent || acc.Leased != 0 || acc.Balance != 50_000-spent {
			t.Fatalf("charged %d, spent %d, account %+v", charged, spent, acc)
		}
	})
}

func TestOpenDSN(t *testing.T) {
	ctx := context.Background()
	for _, dsn := range []string{"", "mysql://x", "bolt://host/path", "bolt://", "postgres://127.0.0.1:1/x?connect_timeout=1", "postgres://%zz"} {
		if s, err := Open(ctx, dsn); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", dsn)
		}
	}
	// A second process (here: a second open) on one bolt file is refused
	// clearly.
	path := filepath.Join(t.TempDir(), "a.db")
	s, err := Open(ctx, "bolt://"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := OpenBolt(path); err == nil {
		t.Fatal("second open of a bolt store succeeded")
	}
}
