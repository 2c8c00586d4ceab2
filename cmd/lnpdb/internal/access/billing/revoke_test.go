package billing

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testpg"
)

// A key revoked, or an account suspended, through one node's store is
// refused by another node sharing the PostgreSQL store within the bound of
// CONTRACT (a second), not at that node's next periodic reload: here the
// periodic reload is an hour away, so only the store's announcement can
// bring it.
func TestRevocationReachesOtherNodes(t *testing.T) {
	ctx := context.Background()
	dsn := testpg.New(t)
	open := func() (Store, *Engine) {
		s, err := Open(ctx, dsn)
		require.NoError(t, err)
		e, err := NewEngine(ctx, EngineConfig{Store: s, Holder: "node", SyncEvery: time.Second, LeaseTTL: time.Minute, KeysEvery: time.Hour})
		require.NoError(t, err)
		t.Cleanup(func() { e.Close(ctx); s.Close() })
		return s, e
	}
	s1, e1 := open()
	_, e2 := open()
	a, err := s1.CreateAccount(ctx, "Acme", t0)
	require.NoError(t, err)
	k, err := s1.AddKey(ctx, KeyRecord{AccountID: a.ID, Hash: hash("k1")}, t0)
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, ok := e2.Lookup(hash("k1")); return ok }, 2*time.Second, time.Millisecond,
		"a new key is known to the other node")

	_, err = s1.RevokeKey(ctx, a.ID, k.ID, t0)
	require.NoError(t, err)
	start := time.Now()
	require.Eventually(t, func() bool { _, ok := e2.Lookup(hash("k1")); return !ok }, time.Second, time.Millisecond,
		"the key revoked on node 1 is refused by node 2 within a second")
	t.Logf("revoked key refused by the other node after %v", time.Since(start).Round(time.Millisecond))
	assert.Eventually(t, func() bool { _, ok := e1.Lookup(hash("k1")); return !ok }, time.Second, time.Millisecond,
		"and by the node it was revoked on")

	_, err = s1.AddKey(ctx, KeyRecord{AccountID: a.ID, Hash: hash("k2")}, t0)
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, ok := e2.Lookup(hash("k2")); return ok }, time.Second, time.Millisecond)
	_, err = s1.SetStatus(ctx, a.ID, StatusSuspended)
	require.NoError(t, err)
	start = time.Now()
	require.Eventually(t, func() bool { _, ok := e2.Lookup(hash("k2")); return !ok }, time.Second, time.Millisecond,
		"a suspension reaches the other node within a second")
	t.Logf("suspended account's key refused by the other node after %v", time.Since(start).Round(time.Millisecond))
}
