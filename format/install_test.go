package format

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/lnpdb/lnpdb/internal/core/atomicfile"
	"github.com/lnpdb/lnpdb/internal/core/vfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeTiny writes a table of one code and one ported number (format's own
// tests cannot import format/build, which imports format).
func writeTiny(t *testing.T, path string, builtAt time.Time) {
	t.Helper()
	w := NewWriter()
	c, _ := w.AddCarrier(Carrier{OCN: "2002", Name: "Capital Wireless", Type: "WIRELESS"})
	rc := w.AddRateCenter(RateCenter{State: "DC", Name: "WASHINGTON", TimeZone: "America/New_York", UTCOffset: "-0500"})
	require.True(t, w.AddBlock(202, 555, -1, BlockRow{Carrier: c, RateCenter: rc}))
	require.NoError(t, w.AddPorted(2025550123, 1, 2025569000, c, 1552575766, SVTypeNone))
	_, err := w.WriteFile(context.Background(), path, WriteOptions{BuiltAt: builtAt})
	require.NoError(t, err)
}

// The zero WriteOptions records the time of the write, as the zero
// build.Options does, not the zero time.
func TestWriteFileZeroBuiltAtIsNow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.lnpdb")
	before := time.Now().Truncate(time.Second)
	writeTiny(t, path, time.Time{})
	after := time.Now()
	db, err := Open(path)
	require.NoError(t, err)
	defer db.Close()
	got := db.Info().BuiltAt
	assert.False(t, got.Before(before), "BuiltAt %v before the write (%v)", got, before)
	assert.False(t, got.After(after), "BuiltAt %v after the write (%v)", got, after)
}

// installFixture is a directory holding an installed table ("old") and the
// bytes of another, newer table.
func installFixture(t *testing.T) (path string, old, newer []byte) {
	t.Helper()
	dir := t.TempDir()
	path = filepath.Join(dir, "us.lnpdb")
	writeTiny(t, path, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var err error
	old, err = os.ReadFile(path)
	require.NoError(t, err)
	other := filepath.Join(t.TempDir(), "new.lnpdb")
	writeTiny(t, other, time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
	newer, err = os.ReadFile(other)
	require.NoError(t, err)
	require.NotEqual(t, old, newer)
	return path, old, newer
}

// assertUntouched checks that path still holds want and that no temporary
// file is left beside it.
func assertUntouched(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, got), "the installed table was replaced")
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, atomicfile.IsTemp(path, e.Name()), "temporary file left: %s", e.Name())
	}
}

func TestInstall(t *testing.T) {
	path, _, newer := installFixture(t)
	info, err := InstallFrom(path, bytes.NewReader(newer), InstallOptions{})
	require.NoError(t, err)
	assert.Equal(t, path, info.Path)
	assert.Equal(t, int64(len(newer)), info.Size)
	assert.Equal(t, time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), info.BuiltAt)
	assert.Positive(t, info.Counts.Ported)
	assertUntouched(t, path, newer)

	// Into an empty place, too.
	fresh := filepath.Join(t.TempDir(), "fresh.lnpdb")
	_, err = InstallFrom(fresh, bytes.NewReader(newer), InstallOptions{})
	require.NoError(t, err)
	assertUntouched(t, fresh, newer)
}

// A table that is cut short, damaged, extended or not a table at all is
// refused, and so is a stream that fails: the installed table stays.
func TestInstallRefusesBadStreams(t *testing.T) {
	path, old, newer := installFixture(t)
	flipped := bytes.Clone(newer)
	flipped[len(flipped)*2/3] ^= 0x40 // inside a large section: only a full verify finds it
	for name, tc := range map[string]struct {
		r    io.Reader
		want error
	}{
		"truncated":     {bytes.NewReader(newer[:len(newer)/2]), ErrCorrupt},
		"last byte cut": {bytes.NewReader(newer[:len(newer)-1]), ErrCorrupt},
		"one bit wrong": {bytes.NewReader(flipped), ErrCorrupt},
		"extended":      {io.MultiReader(bytes.NewReader(newer), strings.NewReader("x")), ErrCorrupt},
		"empty":         {strings.NewReader(""), ErrCorrupt},
		"not a table":   {strings.NewReader(strings.Repeat("<html>gateway timeout</html>\n", 100)), ErrFormat},
		"read fails":    {io.MultiReader(bytes.NewReader(newer[:4096]), iotest.ErrReader(io.ErrUnexpectedEOF)), io.ErrUnexpectedEOF},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := InstallFrom(path, tc.r, InstallOptions{})
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), path)
			assertUntouched(t, path, old)
		})
	}
}

// A full disk at any step leaves the installed table and no temporary file.
func TestInstallFileSystemFaults(t *testing.T) {
	for _, op := range []vfs.Op{vfs.OpCreate, vfs.OpWrite, vfs.OpSync, vfs.OpRename} {
		t.Run(op.String(), func(t *testing.T) {
			path, old, newer := installFixture(t)
			fs := vfs.NewFaulty(vfs.Default, func(o vfs.Op, _ string) error {
				if o == op {
					return syscall.ENOSPC
				}
				return nil
			})
			_, err := install(fs, path, bytes.NewReader(newer), InstallOptions{})
			require.ErrorIs(t, err, syscall.ENOSPC)
			assertUntouched(t, path, old)
		})
	}
}

// The leftover of an install killed before its rename is removed by the
// next one.
func TestInstallRemovesStaleTemporaryFiles(t *testing.T) {
	path, _, newer := installFixture(t)
	stale := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-12345")
	require.NoError(t, os.WriteFile(stale, newer[:100], 0o600))
	_, err := InstallFrom(path, bytes.NewReader(newer), InstallOptions{})
	require.NoError(t, err)
	_, err = os.Stat(stale)
	assert.True(t, errors.Is(err, os.ErrNotExist), "stale temporary file still there: %v", err)
	assertUntouched(t, path, newer)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// The stream is judged as it arrives: a stream that is not a table is
// refused within its header, and a table followed by anything is refused
// at the first byte past the size its header declares; neither reads (so
// writes) more. A table larger than MaxBytes is refused at its header.
func TestInstallStopsAtTheDeclaredSize(t *testing.T) {
	path, old, newer := installFixture(t)
	const garbage = 300 << 20
	zeros := func() io.Reader { return io.LimitReader(zeroReader{}, garbage) }
	for name, tc := range map[string]struct {
		r        io.Reader
		opt      InstallOptions
		want     error
		maxRead  int64
		contains string
	}{
		"trailing zeros": {io.MultiReader(bytes.NewReader(newer), zeros()), InstallOptions{}, ErrCorrupt, int64(len(newer)) + 1, "goes on past"},
		"not a table":    {zeros(), InstallOptions{}, ErrFormat, headerSize, "bad magic"},
		"over MaxBytes":  {bytes.NewReader(newer), InstallOptions{MaxBytes: int64(len(newer)) - 1}, ErrTooLarge, headerSize, "declares"},
	} {
		t.Run(name, func(t *testing.T) {
			cr := &countingReader{r: tc.r}
			_, err := InstallFrom(path, cr, tc.opt)
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.contains)
			assert.LessOrEqual(t, cr.n, tc.maxRead, "bytes read (and so at most written) before the refusal")
			t.Logf("%s: refused after reading %d bytes: %v", name, cr.n, err)
			assertUntouched(t, path, old)
		})
	}
	_, err := InstallFrom(path, bytes.NewReader(newer), InstallOptions{MaxBytes: int64(len(newer))})
	require.NoError(t, err, "a table of exactly MaxBytes")
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
