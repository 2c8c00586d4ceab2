package serve

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"

	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/httpapi"
)

// TestBilledAllocs: with billing on, authenticating a key and charging a
// lookup allocate nothing. (The engine's lease is made large enough that
// no background renewal, which allocates, runs while counting.)
func TestBilledAllocs(t *testing.T) {
	ctx := context.Background()
	s, err := billing.OpenBolt(filepath.Join(t.TempDir(), "accounts.db"))
	require.NoError(t, err)
	a, err := s.CreateAccount(ctx, "a", time.Now())
	require.NoError(t, err)
	_, _, err = s.Credit(ctx, a.ID, 1000*billing.MicrosPerDollar, "x", time.Now())
	require.NoError(t, err)
	key := auth.NewKey()
	_, err = s.AddKey(ctx, billing.KeyRecord{AccountID: a.ID, Hash: auth.HashKey(key).Hash}, time.Now())
	require.NoError(t, err)
	e, err := billing.NewEngine(ctx, billing.EngineConfig{Store: s, LeaseCredit: 500 * billing.MicrosPerDollar,
		LeaseTTL: time.Hour, SyncEvery: time.Minute, KeysEvery: time.Hour})
	require.NoError(t, err)
	b := &billed{store: s, engine: e, keys: map[[32]byte]auth.Key{}}
	defer b.close(ctx)
	charge := func() {
		k, ok := b.Authenticate(key)
		if !ok {
			t.Fatal("the key does not authenticate")
		}
		p, err := b.Charge(ctx, k, httpapi.ChargeLRNEnhancedMessaging)
		if err != nil {
			t.Fatal(err)
		}
		p.Settle(true)
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
