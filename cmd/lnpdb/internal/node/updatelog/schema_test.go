package updatelog

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testpg"
	"github.com/lnpdb/lnpdb/format"
)

// TestLogSchemas: logs in two schemas of one database are two logs: their
// own ids and batches, tables in their schema and none in public, and an
// append in one wakes only the LISTEN connections of that one.
func TestLogSchemas(t *testing.T) {
	ctx := context.Background()
	dsn := testpg.New(t)
	open := func(schema string) *Log {
		l, err := OpenIn(ctx, dsn, schema)
		require.NoError(t, err, schema)
		t.Cleanup(l.Close)
		return l
	}
	a, b := open("log_a"), open("log_b")
	assert.NotEqual(t, a.ID(), b.ID())
	assert.Equal(t, a.ID(), open("log_a").ID(), "a second opening of log_a is the same log")

	lb, err := b.listen(ctx)
	require.NoError(t, err)
	defer lb.Close(ctx)
	la, err := a.listen(ctx)
	require.NoError(t, err)
	defer la.Close(ctx)

	_, err = a.Append(ctx, "n1", "", EncodeFeed([]format.Update{{Action: format.Delete, TN: 2014810001}}))
	require.NoError(t, err)
	got, _, err := a.Read(ctx, 0, 10)
	require.NoError(t, err)
	assert.Len(t, got, 1)
	got, _, err = b.Read(ctx, 0, 10)
	require.NoError(t, err)
	assert.Empty(t, got, "log_b has none of log_a's batches")

	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	n, err := la.WaitForNotification(wctx)
	require.NoError(t, err, "log_a's listener hears log_a's append")
	assert.Equal(t, "1", n.Payload)
	wctx, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	n, err = lb.WaitForNotification(wctx)
	assert.Error(t, err, "log_b's listener heard %v", n)

	c, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer c.Close(ctx)
	count := func(schema string) (n int) {
		require.NoError(t, c.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = $1`, schema).Scan(&n))
		return n
	}
	assert.Positive(t, count("log_a"))
	assert.Equal(t, count("log_a"), count("log_b"))
	assert.Zero(t, count("public"))
}
