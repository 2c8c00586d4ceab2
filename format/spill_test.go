package format_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/format/build"
	"github.com/lnpdb/lnpdb/internal/core/vfs"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spillFDs lists this process's open files that are spill files, where the
// system tells.
func spillFDs(t *testing.T) []string {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil
	}
	var open []string
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.Contains(l, ".lnpdb-spill-") {
			open = append(open, l)
		}
	}
	return open
}

func buildBytes(t *testing.T, src fs.FS, opt build.Options) ([]byte, *build.Report) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "t.lnpdb")
	opt.BuiltAt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rep, err := build.Build(context.Background(), src, out, opt)
	require.NoError(t, err)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	return b, rep
}

func TestSpilledBuildIsIdentical(t *testing.T) {
	want, rep := buildBytes(t, lnpdb.Sample(), build.Options{MaxMemory: -1})
	require.Zero(t, rep.Spilled)
	rows := 0
	for _, f := range []string{"ported.csv", "messaging.csv", "cnam.csv", "trust.csv"} {
		rows += rep.Rows[f]
	}
	for _, budget := range []int64{1, 4 << 10, 64 << 10} {
		tmp := t.TempDir()
		got, rep := buildBytes(t, lnpdb.Sample(), build.Options{MaxMemory: budget, TempDir: tmp})
		require.Equal(t, want, got, "budget %d: spilling does not change a byte", budget)
		assert.Positive(t, rep.Spilled, "budget %d spills", budget)
		assert.LessOrEqual(t, rep.Spilled, rows)
		if budget == 1 {
			assert.Equal(t, rows, rep.Spilled, "a budget of one byte spills every row")
		}
		ents, err := os.ReadDir(tmp)
		require.NoError(t, err)
		assert.Empty(t, ents, "no spill file is left behind")
	}
	assert.Empty(t, spillFDs(t), "no spill file is left open")
}

func TestSpilledDuplicates(t *testing.T) {
	src := testdb.Copy(t, lnpdb.Sample())
	ported := string(src["ported.csv"].Data)
	lines := strings.Split(strings.TrimSuffix(ported, "\n"), "\n")
	// The same number as the first row, on the last line: with a small
	// budget the two rows meet only when read back from the spill file.
	first := strings.SplitN(lines[1], ",", 2)
	dup := first[0] + "," + strings.SplitN(lines[len(lines)-1], ",", 2)[1]
	src["ported.csv"] = &fstest.MapFile{Data: []byte(ported + dup + "\n")}

	var msgs []string
	for _, budget := range []int64{-1, 1, 4 << 10} {
		tmp := t.TempDir()
		dir := t.TempDir()
		_, err := build.Build(context.Background(), src, filepath.Join(dir, "t.lnpdb"), build.Options{MaxMemory: budget, TempDir: tmp})
		require.Error(t, err)
		msgs = append(msgs, err.Error())
		for _, d := range []string{tmp, dir} {
			ents, err := os.ReadDir(d)
			require.NoError(t, err)
			assert.Empty(t, ents, "a failed build leaves nothing behind")
		}
	}
	assert.Contains(t, msgs[0], "listed twice (first on line 2)")
	assert.Contains(t, msgs[0], "ported.csv:"+strconv.Itoa(len(lines)+1)+":")
	assert.Equal(t, msgs[0], msgs[1], "the error names the same file and lines when spilled")
	assert.Equal(t, msgs[0], msgs[2])

	want, _ := buildBytes(t, src, build.Options{SkipBadRows: true, MaxMemory: -1})
	got, rep := buildBytes(t, src, build.Options{SkipBadRows: true, MaxMemory: 1, TempDir: t.TempDir()})
	require.Equal(t, want, got, "the first row of a duplicate is kept, spilled or not")
	assert.Equal(t, 1, rep.Skipped)
	assert.Empty(t, spillFDs(t))
}

// cancelOn cancels a build's context when it opens the named file.
type cancelOn struct {
	fs.FS
	name   string
	cancel context.CancelFunc
}

func (c cancelOn) Open(name string) (fs.File, error) {
	if name == c.name {
		c.cancel()
	}
	return c.FS.Open(name)
}

func TestSpillFilesRemovedOnFailure(t *testing.T) {
	for _, name := range []string{"messaging.csv", "trust.csv"} {
		t.Run("cancel at "+name, func(t *testing.T) {
			tmp, dir := t.TempDir(), t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			src := cancelOn{FS: lnpdb.Sample(), name: name, cancel: cancel}
			_, err := build.Build(ctx, src, filepath.Join(dir, "t.lnpdb"), build.Options{MaxMemory: 1, TempDir: tmp})
			require.ErrorIs(t, err, context.Canceled)
			for _, d := range []string{tmp, dir} {
				ents, err := os.ReadDir(d)
				require.NoError(t, err)
				assert.Empty(t, ents, "a cancelled build leaves nothing behind")
			}
		})
	}
	t.Run("bad row after spilling", func(t *testing.T) {
		src := testdb.Copy(t, lnpdb.Sample())
		src["trust.csv"] = &fstest.MapFile{Data: append(src["trust.csv"].Data, "12025550100,nonsense,1,,\n"...)}
		tmp, dir := t.TempDir(), t.TempDir()
		_, err := build.Build(context.Background(), src, filepath.Join(dir, "t.lnpdb"), build.Options{MaxMemory: 1, TempDir: tmp})
		require.Error(t, err)
		for _, d := range []string{tmp, dir} {
			ents, err := os.ReadDir(d)
			require.NoError(t, err)
			assert.Empty(t, ents)
		}
	})
	t.Run("no temporary directory", func(t *testing.T) {
		dir := t.TempDir()
		_, err := build.Build(context.Background(), lnpdb.Sample(), filepath.Join(dir, "t.lnpdb"), build.Options{MaxMemory: 1, TempDir: filepath.Join(dir, "nope")})
		require.ErrorContains(t, err, "spill file")
		ents, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, ents)
	})
	assert.Empty(t, spillFDs(t), "no spill file is left open")
}

// Ported and the other per-number files are read side by side; errors and
// skipped rows are still reported as if they were read in file order.
func TestPerNumberErrorsInFileOrder(t *testing.T) {
	src := testdb.Copy(t, mini)
	add := func(name, row string) {
		src[name] = &fstest.MapFile{Data: append(append([]byte(nil), src[name].Data...), row...)}
	}
	add("ported.csv", "2025570001,2025569000,2002,\n")
	add("messaging.csv", "12025570002,Capital Messaging,true,US,1,\n")
	add("cnam.csv", "12025570003,NOBODY\n")
	for _, budget := range []int64{-1, 1} {
		dir := t.TempDir()
		_, err := build.Build(context.Background(), src, filepath.Join(dir, "t.lnpdb"), build.Options{MaxMemory: budget, TempDir: dir})
		require.ErrorContains(t, err, "ported.csv:6: column tn: 12025570001 is in no assigned code")
		ents, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, ents)

		rep, err := build.Build(context.Background(), src, filepath.Join(dir, "t.lnpdb"), build.Options{SkipBadRows: true, MaxMemory: budget, TempDir: dir})
		require.NoError(t, err)
		assert.Equal(t, 3, rep.Skipped)
		require.Len(t, rep.SkippedSample, 3)
		assert.Contains(t, rep.SkippedSample[0], "ported.csv:6:")
		assert.Contains(t, rep.SkippedSample[1], "messaging.csv:4:")
		assert.Contains(t, rep.SkippedSample[2], "cnam.csv:4:")
		assert.Equal(t, 4, rep.Rows["ported.csv"])
		assert.Equal(t, 2, rep.Rows["messaging.csv"])
	}

	delete(src, "ported.csv")
	_, err := build.Build(context.Background(), src, filepath.Join(t.TempDir(), "t.lnpdb"), build.Options{})
	require.ErrorContains(t, err, "messaging.csv:4: column tn: 12025570002 is in no assigned code", "without ported data, messaging's error is the first")
}

// A spill file the disk refuses — its creation failing with EIO, or its
// writes with ENOSPC — fails the build with an error that names the spill
// file and the cause, and leaves no table, no temporary file and no spill
// file behind.
func TestSpillFileFaults(t *testing.T) {
	for _, tc := range []struct {
		op  vfs.Op
		err error
	}{{vfs.OpCreate, syscall.EIO}, {vfs.OpWrite, syscall.ENOSPC}} {
		t.Run(tc.op.String(), func(t *testing.T) {
			dir, spillDir := t.TempDir(), t.TempDir()
			path := filepath.Join(dir, "t.lnpdb")
			failed := 0
			fs := vfs.NewFaulty(vfs.Default, func(op vfs.Op, name string) error {
				if op == tc.op && (name == spillDir || strings.Contains(name, ".lnpdb-spill-")) {
					failed++
					return tc.err
				}
				return nil
			})
			w := format.NewWriter()
			defer w.Close()
			w.SetFS(fs)
			w.SetMemory(64<<10, 64<<10, spillDir)
			c, _ := w.AddCarrier(format.Carrier{OCN: "2002", Name: "Capital Wireless", Type: "WIRELESS"})
			rc := w.AddRateCenter(format.RateCenter{State: "DC", Name: "WASHINGTON", TimeZone: "America/New_York", UTCOffset: "-0500"})
			require.True(t, w.AddBlock(202, 555, -1, format.BlockRow{Carrier: c, RateCenter: rc}))
			var err error
			for i := range 10000 {
				if err = w.AddPorted(2025550000+uint64(i), i+1, 2025569000, c, 1552575766, format.SVTypeNone); err != nil {
					break
				}
			}
			if err == nil {
				_, err = w.WriteFile(context.Background(), path, format.WriteOptions{})
			}
			require.Error(t, err, "the build fails")
			require.Positive(t, failed, "the fault was injected into a spill file")
			assert.ErrorIs(t, err, tc.err)
			assert.Contains(t, err.Error(), "spill file")
			t.Logf("%s: %v", tc.op, err)
			for _, d := range []string{dir, spillDir} {
				ents, err := os.ReadDir(d)
				require.NoError(t, err)
				assert.Empty(t, ents, "nothing left in %s", d)
			}
			assert.Empty(t, spillFDs(t), "no spill file left open")
		})
	}
}
