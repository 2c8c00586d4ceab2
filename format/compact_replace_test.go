package format_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/format/build"
)

// TestCompactLeavesReplacementInPlace replaces the table file while a
// compaction runs: the replacement must survive, the updates must stay
// pending, and after Reload a compaction folds them into the replacement.
func TestCompactLeavesReplacementInPlace(t *testing.T) {
	t.Parallel()
	db, path := openMini(t)
	require.NoError(t, db.Apply([]format.Update{{Action: format.Add, TN: 2025550199, LRN: 2025569000, SPID: "3003"}}))

	b, err := os.ReadFile(filepath.Join("testdata/mini", "ported.csv"))
	require.NoError(t, err)
	alt := filepath.Join(t.TempDir(), "alt.lnpdb")
	src := withFile(t, "ported.csv", strings.Replace(string(b), "3122001234,3122009999,1001,", "3122001234,3122008888,1001,", 1))
	_, err = build.Build(context.Background(), src, alt, build.Options{})
	require.NoError(t, err)

	replaced := false
	db.SetCompactWritten(func() {
		require.NoError(t, os.Rename(alt, path))
		replaced = true
	})
	defer db.SetCompactWritten(nil)
	err = db.Compact(context.Background())
	require.True(t, replaced)
	require.ErrorIs(t, err, format.ErrReplaced)
	db.SetCompactWritten(nil)

	assert.Equal(t, 1, db.PendingUpdates(), "the updates stay pending")
	assert.True(t, ported(t, db, 2025550199).OK)
	assert.Equal(t, "13122009999", ported(t, db, 3122001234).LRN, "the old mapping serves until Reload")
	left, err := filepath.Glob(filepath.Join(filepath.Dir(path), ".*compacted*"))
	require.NoError(t, err)
	assert.Empty(t, left, "the compacted file is removed")

	onDisk, err := format.Open(path, format.IgnoreJournal()) // db holds the writer's lock
	require.NoError(t, err)
	assert.Equal(t, "13122008888", ported(t, onDisk, 3122001234).LRN, "the replacement is in place")
	require.NoError(t, onDisk.Close())

	require.NoError(t, db.Reload())
	require.NoError(t, db.Compact(context.Background()))
	assert.Zero(t, db.PendingUpdates())
	assert.Equal(t, "13122008888", ported(t, db, 3122001234).LRN)
	assert.True(t, ported(t, db, 2025550199).OK, "the update is folded into the replacement")
	require.NoError(t, db.Close())

	db, err = format.OpenWriter(path, format.Verify())
	require.NoError(t, err)
	defer db.Close()
	assert.Zero(t, db.PendingUpdates())
	assert.True(t, ported(t, db, 2025550199).OK)
	assert.Equal(t, "13122008888", ported(t, db, 3122001234).LRN)
}
