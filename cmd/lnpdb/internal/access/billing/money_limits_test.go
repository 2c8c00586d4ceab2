package billing

import (
	"context"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testclock"
)

// TestMoneyLimits: top-ups and prices past the documented maximums are
// refused with a clear error, by both stores and by the admin API, so
// that no balance, lease or price sum can wrap around int64.
func TestMoneyLimits(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		acc := mustAccount(t, s, 0)
		// The amounts that turned a balance negative: $9.2 trillion, then
		// $9 trillion.
		for i, amount := range []Micros{9_200_000_000_000 * MicrosPerDollar, 9_000_000_000_000 * MicrosPerDollar, MaxCredit + 1} {
			if _, _, err := s.Credit(ctx, acc.ID, amount, "big-"+string(rune('a'+i)), t0); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "at most $1000000000.00") {
				t.Errorf("credit of $%s: %v, want ErrInvalid naming the maximum", amount, err)
			}
		}
		if _, _, err := s.Credit(ctx, acc.ID, MaxCredit, "max", t0); err != nil {
			t.Fatalf("a credit of MaxCredit: %v", err)
		}
		a, _ := conserved(t, s, acc.ID)
		if a.Balance != MaxCredit {
			t.Fatalf("balance %d after one MaxCredit", a.Balance)
		}
		for _, p := range []Micros{MaxPrice + 1, math.MaxInt64} {
			if err := s.SetPrice(ctx, "", KindMessagingAddon, p); !errors.Is(err, ErrInvalid) {
				t.Errorf("price $%s: %v, want ErrInvalid", p, err)
			}
		}
		if err := s.SetPrice(ctx, acc.ID, KindLRN, MaxPrice); err != nil {
			t.Fatalf("a price of MaxPrice: %v", err)
		}
	})
}

// TestCreditedLimit: a wallet is credited at most MaxCredited in all, so
// its balance cannot pass it whatever the number of top-ups.
func TestCreditedLimit(t *testing.T) {
	if err := checkCredited("a", MaxCredited-MaxCredit, MaxCredit); err != nil {
		t.Fatalf("up to MaxCredited: %v", err)
	}
	for _, c := range [][2]Micros{{MaxCredited - MaxCredit + 1, MaxCredit}, {math.MaxInt64 - 1, 2}, {MaxCredited, 1}} {
		if err := checkCredited("a", c[0], c[1]); !errors.Is(err, ErrInvalid) {
			t.Errorf("credited %d + %d: %v, want ErrInvalid", c[0], c[1], err)
		}
	}
}

// TestAdminRefusesOverLargeMoney: the admin API answers 400 with the
// maximum for a top-up or a price past it.
func TestAdminRefusesOverLargeMoney(t *testing.T) {
	s := newBolt(t)
	acc := mustAccount(t, s, 0)
	a, err := NewAdmin(AdminConfig{Store: s, Authorize: func(tok string) (string, bool) { return "adm1", tok == "admin-secret" },
		NewKey: func() (string, [32]byte) { return "k", hash("k") }})
	if err != nil {
		t.Fatal(err)
	}
	c := serveAdmin(t, a)
	for _, tc := range []struct{ path, method, body string }{
		{"/admin/v1/accounts/" + acc.ID + "/credits", "POST", `{"amount":"9200000000000","ref":"A"}`},
		{"/admin/v1/accounts/" + acc.ID + "/credits", "POST", `{"amount":"9000000000000","ref":"B"}`},
		{"/admin/v1/prices/lrn", "PUT", `{"price":"9223372036854"}`},
		{"/admin/v1/accounts/" + acc.ID + "/prices/messaging_addon", "PUT", `{"price":"1000.000001"}`},
	} {
		code, m, body := c.do(tc.method, tc.path, tc.body)
		if code != 400 || m["code"] != "INVALID_REQUEST" || !(strings.Contains(body, "at most $") || strings.Contains(body, "too large")) {
			t.Errorf("%s %s %s: %d %s", tc.method, tc.path, tc.body, code, body)
		}
	}
	got, err := s.Account(context.Background(), acc.ID)
	if err != nil || got.Balance != 0 || got.Credited != 0 {
		t.Fatalf("account after refused top-ups: %+v %v", got, err)
	}
}

// TestWrappingPriceIsNotFree: a price kept from before MaxPrice whose sum
// with the add-on's wraps around int64 refuses the lookup; it is never
// answered unbilled.
func TestWrappingPriceIsNotFree(t *testing.T) {
	s := newBolt(t)
	acc := mustAccount(t, s, MicrosPerDollar)
	key := addKey(t, s, acc.ID, "k")
	c := testclock.New(t0)
	e := newEngine(t, s, c, 100_000)
	ki := KindLRNEnhanced.index()
	// Use up the free tier first: the wallet pays from here.
	for range FreeTier {
		if err := deliver(e, context.Background(), key, KindLRNEnhanced, false); err != nil {
			t.Fatal(err)
		}
	}
	a := e.account(acc.ID)
	a.mu.Lock()
	a.prices[ki] = math.MaxInt64 - 10
	a.prices[KindMessagingAddon.index()] = 1000
	a.mu.Unlock()
	err := deliver(e, context.Background(), key, KindLRNEnhanced, true)
	if err == nil {
		t.Fatal("a lookup whose price wraps was answered")
	}
	a.mu.Lock()
	credit := a.credit
	a.mu.Unlock()
	if credit < 0 || credit > MicrosPerDollar {
		t.Fatalf("lease credit %d after a wrapping price", credit)
	}
}

// FuzzAddMicros: addMicros is int64 addition that says when it overflows,
// as big.Int arithmetic decides.
func FuzzAddMicros(f *testing.F) {
	for _, c := range [][2]int64{{0, 0}, {math.MaxInt64, 1}, {math.MinInt64, -1}, {9_200_000_000_000_000_000, 9_000_000_000_000_000_000}, {-5, 5}, {math.MaxInt64, math.MinInt64}} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, a, b int64) {
		s, ok := addMicros(Micros(a), Micros(b))
		want := new(big.Int).Add(big.NewInt(a), big.NewInt(b))
		fits := want.IsInt64()
		if ok != fits || (ok && int64(s) != want.Int64()) {
			t.Fatalf("addMicros(%d, %d) = %d, %v; want %s", a, b, s, ok, want)
		}
	})
}
