package billing

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testpg"
)

// TestPostgresSchemas: two stores in two schemas of one database keep
// separate accounts and keys, each store's tables are in its schema and
// none in public, and a change of keys in one wakes only its own watchers.
func TestPostgresSchemas(t *testing.T) {
	ctx := context.Background()
	dsn := testpg.New(t)
	open := func(schema string) Store {
		s, err := OpenIn(ctx, dsn, schema)
		require.NoError(t, err, schema)
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := open("tenant_a"), open("tenant_b")
	acct, err := a.CreateAccount(ctx, "Acme", t0)
	require.NoError(t, err)
	got, err := b.Accounts(ctx)
	require.NoError(t, err)
	assert.Empty(t, got, "tenant_b sees none of tenant_a's accounts")
	got, err = open("tenant_a").Accounts(ctx)
	require.NoError(t, err)
	require.Len(t, got, 1, "a second store on tenant_a sees its account")
	assert.Equal(t, acct.ID, got[0].ID)

	c, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer c.Close(ctx)
	tables := func(schema string) []string {
		rows, err := c.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`, schema)
		require.NoError(t, err)
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return names
	}
	assert.Contains(t, tables("tenant_a"), "accounts")
	assert.Contains(t, tables("tenant_a"), "schema_migrations")
	assert.Equal(t, tables("tenant_a"), tables("tenant_b"))
	assert.Empty(t, tables("public"), "nothing in public")

	// Keys: a's change is announced on a's channel only.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wa, wb := a.(KeysWatcher).WatchKeys(wctx), b.(KeysWatcher).WatchKeys(wctx)
	for _, w := range []<-chan struct{}{wa, wb} {
		select {
		case <-w: // the signal of each new LISTEN connection
		case <-time.After(10 * time.Second):
			t.Fatal("no watcher connected")
		}
	}
	_, err = a.AddKey(ctx, KeyRecord{AccountID: acct.ID, Hash: hash("a")}, t0)
	require.NoError(t, err)
	select {
	case <-wa:
	case <-time.After(10 * time.Second):
		t.Fatal("tenant_a's watcher did not hear tenant_a's new key")
	}
	select {
	case <-wb:
		t.Fatal("tenant_b's watcher heard tenant_a's new key")
	case <-time.After(300 * time.Millisecond):
	}

	_, err = OpenIn(ctx, dsn, "Bad-Name")
	assert.Error(t, err)
	_, err = OpenIn(ctx, "bolt:///tmp/x.db", "tenant_a")
	assert.Error(t, err, "a bolt store has no schema")
}
