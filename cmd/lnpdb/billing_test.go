package main

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/internal/billing"
	"github.com/lnpdb/lnpdb/internal/httpapi"
)

// TestBilledAllocs: with billing on, authenticating a key and charging a
// lookup allocate nothing.
func TestBilledAllocs(t *testing.T) {
	ctx := context.Background()
	b, key, cleanup, err := openBilling(ctx, "", time.Minute, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer cleanup()
	defer b.close(ctx)
	accts, err := b.store.Accounts(ctx)
	require.NoError(t, err)
	_, _, err = b.store.Credit(ctx, accts[0].ID, 1000*billing.MicrosPerDollar, "more", time.Now())
	require.NoError(t, err)
	charge := func() {
		k, ok := b.Authenticate(key)
		if !ok {
			t.Fatal("the demo key does not authenticate")
		}
		if err := b.Charge(ctx, k, httpapi.ChargeLRNEnhancedMessaging); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 * billing.FreeTier {
		charge()
	}
	if raceEnabled {
		t.Skip("allocations are counted without the race detector")
	}
	if n := testing.AllocsPerRun(1000, charge); n != 0 {
		t.Fatalf("Authenticate and Charge allocate %v times per lookup", n)
	}
}
