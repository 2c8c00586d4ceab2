package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/lnpdb/lnpdb/internal/core/vfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func write(fs vfs.FS, path, content string, opt Options) error {
	return Write(fs, path, func(f vfs.File) error {
		_, err := f.Write([]byte(content))
		return err
	}, opt)
}

func temps(t *testing.T, path string) []string {
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if IsTemp(path, e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestWriteReplacesWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.lnpdb")
	require.NoError(t, write(vfs.Default, path, "one", Options{}))
	require.NoError(t, write(vfs.Default, path, "two", Options{}))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "two", string(b))
	assert.Empty(t, temps(t, path))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
}

// Every failing step leaves the old file and no temporary file.
func TestWriteFailuresLeaveOldFile(t *testing.T) {
	for _, op := range []vfs.Op{vfs.OpCreate, vfs.OpWrite, vfs.OpSync, vfs.OpRename} {
		t.Run(op.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.lnpdb")
			require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
			fs := vfs.NewFaulty(vfs.Default, func(o vfs.Op, _ string) error {
				if o == op {
					return syscall.ENOSPC
				}
				return nil
			})
			err := write(fs, path, "new", Options{})
			require.ErrorIs(t, err, syscall.ENOSPC)
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, "old", string(b))
			assert.Empty(t, temps(t, path))
		})
	}
	for name, opt := range map[string]Options{
		"check":        {Check: func(string) error { return errors.New("bad") }},
		"beforeRename": {BeforeRename: func() error { return errors.New("replaced") }},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.lnpdb")
			require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
			require.Error(t, write(vfs.Default, path, "new", opt))
			b, _ := os.ReadFile(path)
			assert.Equal(t, "old", string(b))
			assert.Empty(t, temps(t, path))
		})
	}
}

// RemoveStale removes a killed writer's leftovers but not a file another
// writer holds, nor anything that is not a temporary file of the path.
func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.lnpdb")
	stale := filepath.Join(dir, ".t.lnpdb.tmp-123")
	other := filepath.Join(dir, ".u.lnpdb.tmp-123")
	require.NoError(t, os.WriteFile(stale, []byte("x"), 0o600))
	require.NoError(t, os.WriteFile(other, []byte("x"), 0o600))
	require.NoError(t, os.WriteFile(path, []byte("table"), 0o644))

	var inWrite []string
	err := Write(vfs.Default, path, func(f vfs.File) error {
		removed, err := RemoveStale(vfs.Default, path)
		inWrite = removed
		return err
	}, Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{stale}, inWrite, "the file being written is locked and stays")
	for _, p := range []string{path, other} {
		_, err := os.Stat(p)
		assert.NoError(t, err, p)
	}
	_, err = os.Stat(stale)
	assert.ErrorIs(t, err, os.ErrNotExist)
}
