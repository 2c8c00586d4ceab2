package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/apply"
	"github.com/lnpdb/lnpdb/format"
)

// TestApplyLatestViewKill9 applies an NPAC latest-view file (every ported
// number of a generated world modified, download reason 2), larger than a
// batch of apply.Batch updates, with lnpdb apply as a child process, killed
// with SIGKILL at a different moment each time: on reopening, either every
// update of the file is visible or none is.
func TestApplyLatestViewKill9(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	code, _, errs := runCmd(t, "gen", "--seed", "5", "--ported", "24000", "--codes", "300", "--carriers", "40",
		"--messaging-share", "0", "--cnam", "0", "--trust", "0", src)
	require.Equal(t, 0, code, errs)
	base := filepath.Join(dir, "base.lnpdb")
	code, _, errs = runCmd(t, "build", "--db", base, src)
	require.Equal(t, 0, code, errs)

	rows := readCSV(t, os.DirFS(src), "ported.csv")[1:] // tn,lrn,spid,activated_at,sv_type
	var feed strings.Builder
	want := map[uint64]string{}
	for i, r := range rows {
		next := rows[(i+1)%len(rows)]
		if next[1] == r[1] {
			continue // the same LRN: the update would not show
		}
		fmt.Fprintf(&feed, "%d|%s|%s|%s|20261126000000||||||||||||0|2|||1\r", i+1, r[0], next[1], next[2])
		var tn uint64
		_, err := fmt.Sscan(strings.TrimPrefix(r[0], "1"), &tn)
		require.NoError(t, err)
		want[tn] = "1" + strings.TrimPrefix(next[1], "1")
	}
	require.Greater(t, len(want), apply.Batch, "more than one batch: the file is still applied all or nothing")
	feedPath := filepath.Join(dir, "LATEST.20261126.dat")
	require.NoError(t, os.WriteFile(feedPath, []byte(feed.String()), 0o644))

	// applied counts the numbers of the feed whose LRN is the feed's.
	applied := func(table string) int {
		db, err := format.OpenWriter(table)
		require.NoError(t, err)
		defer db.Close()
		n := 0
		for tn, lrn := range want {
			r, err := db.Get(tn, format.FieldPorted)
			require.NoError(t, err)
			if r.Ported.LRN == lrn {
				n++
			}
		}
		return n
	}
	require.Zero(t, applied(base))

	// How long a whole apply takes as a child process here: the kills are
	// spread over it.
	run := func(table string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "apply", "--db", table, feedPath)
		cmd.Env = append(os.Environ(), asLnpdbEnv+"=1")
		require.NoError(t, cmd.Start())
		return cmd
	}
	timed := filepath.Join(dir, "timed.lnpdb")
	copyFile(t, base, timed)
	start := time.Now()
	require.NoError(t, run(timed).Wait())
	whole := time.Since(start)
	require.Equal(t, len(want), applied(timed))

	var none, all int
	for i := range 16 {
		table := filepath.Join(dir, fmt.Sprintf("t%d.lnpdb", i))
		copyFile(t, base, table)
		cmd := run(table)
		after := whole * time.Duration(i) / 12
		time.Sleep(after)
		_ = cmd.Process.Kill() // SIGKILL; it may have finished already
		_ = cmd.Wait()
		switch n := applied(table); n {
		case 0:
			none++
		case len(want):
			all++
		default:
			t.Fatalf("kill after %s: %d of %d updates visible", after, n, len(want))
		}
	}
	t.Logf("a whole apply took %s; 16 kills spread over it: %d left none of the file, %d all of it", whole, none, all)
	// Not killed: all of it, and the output says how many.
	table := filepath.Join(dir, "whole.lnpdb")
	copyFile(t, base, table)
	code, out, errs := runCmd(t, "apply", "--db", table, feedPath)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, fmt.Sprintf("applied %d updates", len(want)))
	assert.Equal(t, len(want), applied(table))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), "whole.lnpdb.apply-", "a finished apply leaves no stage")
	}
}
