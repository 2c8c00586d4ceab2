package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/apply"
	"github.com/lnpdb/lnpdb/format"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// miniTable builds format's mini source into a table in a directory of its
// own.
func miniTable(t *testing.T) (dir, table string) {
	t.Helper()
	dir = t.TempDir()
	table = filepath.Join(dir, "t.lnpdb")
	code, _, errs := runCmd(t, "build", "--db", table, "../../format/testdata/mini")
	require.Equal(t, 0, code, errs)
	return dir, table
}

func TestApplyAndCompact(t *testing.T) {
	dir, table := miniTable(t)
	feed := filepath.Join(dir, "feed.csv")
	require.NoError(t, os.WriteFile(feed, []byte("action,tn,lrn,spid,activated_at\n"+
		"A,2025550199,2025569000,3003,20261121120000\n"+
		"D,3122001234,,,\n"), 0o644))
	code, out, errs := runCmd(t, "apply", "--db", table, feed)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "applied 2 updates")

	db, err := format.OpenWriter(table)
	require.NoError(t, err)
	r, err := db.Get(2025550199, format.FieldPorted)
	require.NoError(t, err)
	assert.Equal(t, "12025569000", r.Ported.LRN, "the update survives the process that applied it")
	assert.Equal(t, 2, db.PendingUpdates())
	db.Close()

	code, out, errs = runCmd(t, "compact", "--db", table)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "compacted 2 pending numbers")
	db, err = format.OpenWriter(table, format.Verify())
	require.NoError(t, err)
	assert.Zero(t, db.PendingUpdates())
	r, err = db.Get(3122001234, format.FieldPorted)
	require.NoError(t, err)
	assert.False(t, r.Ported.OK)

	// While a process (a server) has the table open for updates, apply,
	// compact and journal recover refuse it, saying what to do instead;
	// lookup answers beside it.
	for _, args := range [][]string{{"apply", "--db", table, feed}, {"compact", "--db", table}, {"journal", "recover", "--db", table}} {
		code, _, errs = runCmd(t, args...)
		assert.Equal(t, 1, code, args)
		assert.Contains(t, errs, "open for updates in another process", args)
		assert.Contains(t, errs, "stop it first", args)
	}
	code, _, errs = runCmd(t, "serve", "--db", table, "--dev-key", "--addr", "127.0.0.1:0", "--watch", "0")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "each lnpdb serve needs its own copy of the table", "a second server on one table")
	code, out, errs = runCmd(t, "lookup", "--db", table, "12025550199")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "12025569000")
	assert.Zero(t, db.PendingUpdates(), "nothing was applied meanwhile")
	require.NoError(t, db.Close())

	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("action,tn,lrn,spid,activated_at\nA,2025550198,2025569000,ZZZZ,\n"), 0o644))
	code, _, errs = runCmd(t, "apply", "--db", table, bad)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "unknown SPID")
}

// TestApplyRefusesTableOnSharedLog: a table that follows a shared update
// log takes a feed offline only when told it is for this node alone.
func TestApplyRefusesTableOnSharedLog(t *testing.T) {
	dir, table := miniTable(t)
	require.NoError(t, os.WriteFile(table+".updatelog", []byte(`{"log":"x","seq":7}`), 0o644))
	feed := filepath.Join(dir, "feed.csv")
	require.NoError(t, os.WriteFile(feed, []byte("action,tn,lrn,spid,activated_at\n"+
		"A,2025550199,2025569000,3003,20261121120000\n"), 0o644))

	code, _, errs := runCmd(t, "apply", "--db", table, feed)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errs, "follows a shared update log")
	db, err := format.OpenWriter(table)
	require.NoError(t, err)
	assert.Zero(t, db.PendingUpdates(), "nothing applied")
	db.Close()

	code, out, errs := runCmd(t, "apply", "--db", table, "--outside-log", feed)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "applied 1 update in")
}

// TestApplyFeedIsOneUnit: a feed of more updates than one batch whose last
// row is refused applies nothing at all, and a killed apply's stage is
// removed by the next; the same feed, corrected and compressed, applies
// whole.
func TestApplyFeedIsOneUnit(t *testing.T) {
	dir, table := miniTable(t)
	stale := filepath.Join(dir, ".t.lnpdb.apply-123")
	require.NoError(t, os.Mkdir(stale, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(stale, "t.lnpdb.journal"), []byte("left by a killed apply"), 0o644))

	var b strings.Builder
	b.WriteString("action,tn,lrn,spid,activated_at,sv_type\n")
	for line := range apply.Batch + 5 {
		fmt.Fprintf(&b, "U,%d,2025569000,3003,,2\n", 2025550000+line%10000)
	}
	good := b.String()
	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte(good+"A,2025550198,2025569000,ZZZZ,,\n"), 0o644))
	code, _, errs := runCmd(t, "apply", "--db", table, bad)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "unknown SPID")
	assert.Contains(t, errs, "nothing of this feed was applied")
	db, err := format.OpenWriter(table)
	require.NoError(t, err)
	assert.Zero(t, db.PendingUpdates(), "the updates before the refused row are not applied either")
	require.NoError(t, db.Close())
	_, err = os.Stat(stale)
	assert.ErrorIs(t, err, os.ErrNotExist, "the stale stage is removed")

	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	_, err = zw.Write([]byte(good))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	gz := filepath.Join(dir, "good.csv.gz")
	require.NoError(t, os.WriteFile(gz, z.Bytes(), 0o644))
	code, out, errs := runCmd(t, "apply", "--db", table, gz)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, fmt.Sprintf("applied %d updates", apply.Batch+5))
	db, err = format.OpenWriter(table)
	require.NoError(t, err)
	defer db.Close()
	assert.Equal(t, 10000, db.PendingUpdates())
	r, err := db.Get(2025550004, format.FieldPorted)
	require.NoError(t, err)
	assert.Equal(t, "12025569000", r.Ported.LRN)
	assert.Equal(t, format.SVTypeVoIP, r.Ported.SVType)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), ".apply-", "a finished apply leaves no stage")
	}
}

// TestApplyCompressed: apply reads a feed compressed as build reads a
// source file, by its suffix (.gz, .zst), and refuses one cut short.
func TestApplyCompressed(t *testing.T) {
	dir, table := miniTable(t)
	feed := "action,tn,lrn,spid,activated_at\nA,2025550199,2025569000,3003,20261121120000\n"
	zw, err := zstd.NewWriter(nil)
	require.NoError(t, err)
	zst := filepath.Join(dir, "feed.csv.zst")
	require.NoError(t, os.WriteFile(zst, zw.EncodeAll([]byte(feed), nil), 0o644))
	code, out, errs := runCmd(t, "apply", "--db", table, zst)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "applied 1 update in")

	var z bytes.Buffer
	gw := gzip.NewWriter(&z)
	_, err = gw.Write([]byte("action,tn,lrn,spid,activated_at\nA,2025550198,2025569000,3003,\n"))
	require.NoError(t, err)
	require.NoError(t, gw.Close())
	cut := filepath.Join(dir, "cut.csv.gz")
	require.NoError(t, os.WriteFile(cut, z.Bytes()[:z.Len()-6], 0o644))
	code, _, errs = runCmd(t, "apply", "--db", table, cut)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "unexpected EOF")
	db, err := format.OpenWriter(table)
	require.NoError(t, err)
	defer db.Close()
	assert.Equal(t, 1, db.PendingUpdates(), "the cut feed applied nothing")
}
