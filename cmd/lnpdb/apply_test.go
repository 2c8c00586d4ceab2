package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lnpdb/lnpdb/format"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestApplyAndCompact(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "t.lnpdb")
	code, _, errs := runCmd(t, "build", "--db", table, "../../format/testdata/mini")
	require.Equal(t, 0, code, errs)
	feed := filepath.Join(dir, "feed.csv")
	require.NoError(t, os.WriteFile(feed, []byte("action,tn,lrn,spid,activated_at\n"+
		"A,2025550199,2025569000,3003,20261121120000\n"+
		"D,3122001234,,,\n"), 0o644))
	code, out, errs := runCmd(t, "apply", "--db", table, feed)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "applied 2 updates")

	db, err := format.Open(table)
	require.NoError(t, err)
	r, err := db.Get(2025550199, format.FieldPorted)
	require.NoError(t, err)
	assert.Equal(t, "12025569000", r.Ported.LRN, "the update survives the process that applied it")
	assert.Equal(t, 2, db.PendingUpdates())
	db.Close()

	code, out, errs = runCmd(t, "compact", "--db", table)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "compacted 2 pending numbers")
	db, err = format.Open(table, format.WithVerify())
	require.NoError(t, err)
	defer db.Close()
	assert.Zero(t, db.PendingUpdates())
	r, err = db.Get(3122001234, format.FieldPorted)
	require.NoError(t, err)
	assert.False(t, r.Ported.OK)

	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("action,tn,lrn,spid,activated_at\nA,2025550198,2025569000,ZZZZ,\n"), 0o644))
	code, _, errs = runCmd(t, "apply", "--db", table, bad)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "unknown SPID")
}

// TestApplyRefusesTableOnSharedLog: a table that follows a shared update
// log takes a feed offline only when told it is for this node alone.
func TestApplyRefusesTableOnSharedLog(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "t.lnpdb")
	code, _, errs := runCmd(t, "build", "--db", table, "../../format/testdata/mini")
	require.Equal(t, 0, code, errs)
	require.NoError(t, os.WriteFile(table+".updatelog", []byte(`{"log":"x","seq":7}`), 0o644))
	feed := filepath.Join(dir, "feed.csv")
	require.NoError(t, os.WriteFile(feed, []byte("action,tn,lrn,spid,activated_at\n"+
		"A,2025550199,2025569000,3003,20261121120000\n"), 0o644))

	code, _, errs = runCmd(t, "apply", "--db", table, feed)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errs, "follows a shared update log")
	db, err := format.Open(table)
	require.NoError(t, err)
	assert.Zero(t, db.PendingUpdates(), "nothing applied")
	db.Close()

	code, out, errs := runCmd(t, "apply", "--db", table, "--outside-log", feed)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "applied 1 updates")
}
