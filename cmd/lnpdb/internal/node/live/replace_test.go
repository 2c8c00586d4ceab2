package live

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/format"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Replace reloads at once what install put in place, without the watcher;
// an install that changed nothing reloads nothing; a compaction asked for
// meanwhile waits for the install.
func TestReplace(t *testing.T) {
	path, db := openMini(t)
	other, err := os.ReadFile(path)
	require.NoError(t, err)
	r, err := Start(Config{DB: db}) // no watcher
	require.NoError(t, err)
	defer r.Stop()

	require.NoError(t, r.Replace(func() error { replace(t, path, other); return nil }))
	assert.Equal(t, 1, r.Status().Reloads, "reloaded at once")

	failed := errors.New("download cut short")
	assert.ErrorIs(t, r.Replace(func() error { return failed }), failed)
	assert.Equal(t, 1, r.Status().Reloads, "nothing changed, nothing reloaded")

	require.NoError(t, db.Apply([]format.Update{{Action: format.Add, TN: 2025550199, LRN: 2025569000, SPID: "2002"}}))
	compacted := make(chan error, 1)
	require.NoError(t, r.Replace(func() error {
		go func() { compacted <- r.Compact(context.Background(), "test") }()
		time.Sleep(50 * time.Millisecond)
		assert.Equal(t, 1, db.PendingUpdates(), "the compaction waits for the install")
		replace(t, path, other)
		return nil
	}))
	require.NoError(t, <-compacted)
	assert.Equal(t, 0, db.PendingUpdates())
	assert.Equal(t, 2, r.Status().Reloads)
	rec, err := db.Get(2025550199, format.FieldPorted)
	require.NoError(t, err)
	assert.Equal(t, "12025569000", rec.Ported.LRN, "the update is folded into the installed table")
}
