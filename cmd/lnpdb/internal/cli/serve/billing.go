package serve

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/httpapi"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/jobsapi"
)

// billed joins the accounts store and its engine to the HTTP API: it is
// the server's KeyStore and Accounts when serve runs with --accounts.
type billed struct {
	store        billing.Store
	engine       *billing.Engine
	storeTimeout time.Duration // of an admin request's store calls
	jobs         *jobsapi.API  // the lookup jobs API, for the account pages; nil without jobs

	mu   sync.RWMutex
	keys map[[32]byte]auth.Key // built once per key: nothing per request
}

// DemoCredit is the demo account's wallet: after the free tier, enough for
// a few lookups before a 402.
const DemoCredit = 10_000 // $0.01

// openBilling opens the accounts store dsn and starts its engine. With dsn
// "" it makes the demo: a throw-away bbolt store in a temporary directory
// with one account (the free tier and DemoCredit) and returns its key.
func openBilling(ctx context.Context, dsn, schema string, leaseTTL, storeTimeout time.Duration, log *slog.Logger) (b *billed, demoKey string, cleanup func(), err error) {
	cleanup = func() {}
	var s billing.Store
	if dsn == "" {
		dir, err := os.MkdirTemp("", "lnpdb-demo-accounts-")
		if err != nil {
			return nil, "", cleanup, err
		}
		cleanup = func() { os.RemoveAll(dir) }
		if s, err = billing.OpenBolt(filepath.Join(dir, "accounts.db")); err != nil {
			cleanup()
			return nil, "", func() {}, err
		}
		now := time.Now()
		a, err := s.CreateAccount(ctx, "demo", now)
		if err == nil {
			_, _, err = s.Credit(ctx, a.ID, DemoCredit, "demo", now)
		}
		if err == nil {
			demoKey = auth.NewKey()
			_, err = s.AddKey(ctx, billing.KeyRecord{AccountID: a.ID, Label: "demo", Hash: auth.HashKey(demoKey).Hash}, now)
		}
		if err != nil {
			s.Close()
			cleanup()
			return nil, "", func() {}, fmt.Errorf("demo accounts store: %w", err)
		}
	} else if s, err = billing.OpenIn(ctx, dsn, schema); err != nil {
		return nil, "", cleanup, fmt.Errorf("--accounts: %w", err)
	}
	e, err := billing.NewEngine(ctx, billing.EngineConfig{Store: s, Logger: log, LeaseTTL: leaseTTL, SyncEvery: min(time.Second, leaseTTL/5), StoreTimeout: storeTimeout})
	if err != nil {
		s.Close()
		cleanup()
		return nil, "", func() {}, err
	}
	return &billed{store: s, engine: e, storeTimeout: storeTimeout, keys: map[[32]byte]auth.Key{}}, demoKey, cleanup, nil
}

// reachable reports whether the accounts store answers a read (the default
// prices: one small transaction).
func (b *billed) reachable(ctx context.Context) error {
	if _, err := b.store.Prices(ctx, ""); err != nil {
		return fmt.Errorf("the accounts store does not answer: %w", err)
	}
	return nil
}

// close returns the engine's leases and closes the store.
func (b *billed) close(ctx context.Context) error {
	err := b.engine.Close(ctx)
	if cerr := b.store.Close(); err == nil {
		err = cerr
	}
	return err
}

// Authenticate implements auth.KeyStore: valid keys of active accounts.
func (b *billed) Authenticate(token string) (auth.Key, bool) {
	rec, ok := b.engine.Authenticate(token)
	if !ok {
		return auth.Key{}, false
	}
	b.mu.RLock()
	k, ok := b.keys[rec.Hash]
	b.mu.RUnlock()
	if !ok || k.Limit != rec.Limit {
		k = auth.KeyOf(rec.Hash, rec.Limit)
		b.mu.Lock()
		b.keys[rec.Hash] = k
		b.mu.Unlock()
	}
	return k, true
}

// Suspended implements httpapi.SuspendedKeys: a valid key of a suspended
// account.
func (b *billed) Suspended(token string) bool { return b.engine.Suspended(token) }

// Charge implements httpapi.Accounts.
func (b *billed) Charge(ctx context.Context, key auth.Key, lookup string) (httpapi.Payment, error) {
	var kind billing.Kind
	addon := false
	switch lookup {
	case httpapi.ChargeLRN:
		kind = billing.KindLRN
	case httpapi.ChargeLRNEnhanced:
		kind = billing.KindLRNEnhanced
	case httpapi.ChargeLRNMessaging:
		kind, addon = billing.KindLRN, true
	case httpapi.ChargeLRNEnhancedMessaging:
		kind, addon = billing.KindLRNEnhanced, true
	default:
		kind = billing.Kind(lookup) // cnam, messaging, trust
	}
	hold, err := b.engine.Charge(ctx, key.Hash, kind, addon)
	if short, ok := err.(*billing.InsufficientBalanceError); ok {
		return nil, paymentError{short}
	}
	if err != nil {
		return nil, err
	}
	return hold, nil
}

// paymentError is a refusal as httpapi answers it: 402 with the price and
// the balance in its details.
type paymentError struct {
	e *billing.InsufficientBalanceError
}

func (p paymentError) Error() string { return p.e.Error() }
func (p paymentError) Unwrap() error { return httpapi.ErrInsufficientBalance }
func (p paymentError) Details() string {
	if p.e.Leased > 0 {
		return fmt.Sprintf("This lookup costs $%s; the wallet holds $%s, of which $%s is held by other servers' leases and has been asked back; retry in a second. This month's %d free lookups are used.", p.e.Price, p.e.Balance, p.e.Leased, billing.FreeTier)
	}
	return fmt.Sprintf("This lookup costs $%s; the wallet holds $%s and this month's %d free lookups are used. Top up the account's wallet.", p.e.Price, p.e.Balance, billing.FreeTier)
}

// Usage implements httpapi.UsageReporter.
func (b *billed) Usage(ctx context.Context, key auth.Key) (any, error) {
	return b.engine.Usage(ctx, key.Hash)
}

// admin returns the accounts admin API for adminKeys.
func (b *billed) admin(adminKeys auth.KeyStore, log *slog.Logger) (*billing.Admin, error) {
	return billing.NewAdmin(billing.AdminConfig{
		Store:     b.store,
		Authorize: func(tok string) (string, bool) { k, ok := adminKeys.Authenticate(tok); return k.ID(), ok },
		LookupKey: func(tok string) bool { _, ok := b.Authenticate(tok); return ok || b.Suspended(tok) },
		Changed: func(ctx context.Context) {
			if err := b.engine.ReloadKeys(ctx); err != nil {
				log.Error("reloading keys after an admin change", "error", err)
			}
		},
		NewKey:       cliutil.NewStoreKey,
		Logger:       log,
		StoreTimeout: b.storeTimeout,
	})
}

// isAccountsAdmin tells the accounts admin API's paths from the table's.
func isAccountsAdmin(path string) bool {
	for _, p := range []string{"/admin/v1/accounts", "/admin/v1/prices", "/admin/v1/usage"} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// printDemo says what the demo account may do and how to see a 402.
func printDemo(w io.Writer, base, key string) {
	fmt.Fprintf(w, "The key belongs to a demo account: %d free LRN lookups this month, then $%s of credit;\n", billing.FreeTier, billing.Micros(DemoCredit))
	fmt.Fprintf(w, "past that a lookup answers 402 INSUFFICIENT_BALANCE. What is left:\n\n")
	fmt.Fprintf(w, "  curl -s %s/api/v1/usage -H 'Authorization: Bearer %s'\n\n", base, key)
}
