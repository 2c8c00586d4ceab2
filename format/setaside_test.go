package format_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withoutCarrier3003 is the mini source less carrier 3003 and every row
// naming it.
func withoutCarrier3003(t *testing.T) fs.FS {
	out := fstest.MapFS{}
	require.NoError(t, fs.WalkDir(mini, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(mini, p)
		require.NoError(t, err)
		var keep []string
		for _, line := range strings.SplitAfter(string(b), "\n") {
			if !strings.Contains(line, "3003") && !strings.HasPrefix(line, "602,300,") && !strings.Contains(line, "602300") {
				keep = append(keep, line)
			}
		}
		out[p] = &fstest.MapFile{Data: []byte(strings.Join(keep, ""))}
		return nil
	}))
	return out
}

// A pending update naming an SPID that a replacement table lacks is set
// aside — written to the .setaside file, out of the overlay and the
// journal — so that lookups never answer an empty carrier and compaction
// goes on; the other pending updates stay.
func TestReloadSetsAsideUnknownSPID(t *testing.T) {
	db, path := openMini(t)
	require.NoError(t, db.Apply([]format.Update{
		{Action: format.Add, TN: 2025550150, LRN: 6023009999, SPID: "3003", SVType: format.SVTypeVoWiFi},
		{Action: format.Add, TN: 2025550151, LRN: 2025569000, SPID: "2002"},
	}))
	replacement := testdb.Build(t, withoutCarrier3003(t))
	b, err := os.ReadFile(replacement)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path+".incoming", b, 0o644))
	require.NoError(t, os.Rename(path+".incoming", path))

	require.NoError(t, db.Reload())
	assert.Equal(t, 1, db.Recovery().SetAside)
	assert.Equal(t, 1, db.PendingUpdates())
	r, err := db.Get(2025550150, format.FieldPorted)
	require.NoError(t, err)
	assert.False(t, r.Ported.OK, "set aside: the number routes by its block again")
	assert.Equal(t, "12025569000", ported(t, db, 2025550151).LRN)
	aside, err := os.ReadFile(format.SetAsidePath(path))
	require.NoError(t, err)
	assert.Contains(t, string(aside), "A,2025550150,6023009999,3003,")
	assert.Contains(t, string(aside), `SPID "3003" not in the table`)
	lines := strings.Split(strings.TrimSpace(string(aside)), "\n")
	require.Len(t, lines, 2)
	assert.Equal(t, "action,tn,lrn,spid,activated_at,seq,set_aside_at,reason,sv_type", lines[0])
	assert.True(t, strings.HasSuffix(lines[1], `not in the table,3`), "the SV Type goes with it (NPAC 3, VoWiFi): %s", lines[1])

	require.NoError(t, db.Compact(context.Background()), "compaction is not blocked")
	assert.Zero(t, db.PendingUpdates())
	require.NoError(t, db.Close())

	db, err = format.OpenWriter(path)
	require.NoError(t, err)
	defer db.Close()
	assert.Zero(t, db.Recovery().SetAside, "the journal no longer holds it")
	assert.Equal(t, "12025569000", ported(t, db, 2025550151).LRN)
}

// The same when the table was replaced while no server ran: Open sets the
// update aside instead of answering a carrier with no name.
func TestOpenSetsAsideUnknownSPID(t *testing.T) {
	db, path := openMini(t)
	require.NoError(t, db.Apply([]format.Update{{Action: format.Add, TN: 2025550150, LRN: 6023009999, SPID: "3003"}}))
	require.NoError(t, db.Close())
	replacement := testdb.Build(t, withoutCarrier3003(t))
	b, err := os.ReadFile(replacement)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(path), "x"), b, 0o644))
	require.NoError(t, os.Rename(filepath.Join(filepath.Dir(path), "x"), path))

	db, err = format.OpenWriter(path)
	require.NoError(t, err)
	defer db.Close()
	assert.Equal(t, 1, db.Recovery().SetAside)
	r, err := db.Get(2025550150, format.FieldPorted)
	require.NoError(t, err)
	assert.False(t, r.Ported.OK)
	assert.NotEmpty(t, r.Block.Carrier.Name)
}

// TestSetAsideKeepsAnOlderFilesColumns: a set-aside file begun before it
// had the sv_type column goes on without it, so that every row matches its
// header.
func TestSetAsideKeepsAnOlderFilesColumns(t *testing.T) {
	db, path := openMini(t)
	const old = "action,tn,lrn,spid,activated_at,seq,set_aside_at,reason\n"
	require.NoError(t, os.WriteFile(format.SetAsidePath(path), []byte(old), 0o644))
	require.NoError(t, db.Apply([]format.Update{{Action: format.Add, TN: 2025550150, LRN: 6023009999, SPID: "3003", SVType: format.SVTypeVoIP}}))
	b, err := os.ReadFile(testdb.Build(t, withoutCarrier3003(t)))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path+".incoming", b, 0o644))
	require.NoError(t, os.Rename(path+".incoming", path))
	require.NoError(t, db.Reload())
	aside, err := os.ReadFile(format.SetAsidePath(path))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(aside)), "\n")
	require.Len(t, lines, 2)
	assert.Equal(t, strings.Count(lines[0], ","), strings.Count(lines[1], ","), "%s", aside)
	assert.True(t, strings.HasSuffix(lines[1], `not in the table`), lines[1])
}
