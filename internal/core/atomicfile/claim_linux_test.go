//go:build linux && (amd64 || arm64)

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

func TestClaim(t *testing.T) {
	path := filepath.Join(t.TempDir(), "table.lock")
	f, err := Claim(vfs.Default, path)
	require.NoError(t, err)
	_, err = Claim(vfs.Default, path)
	require.ErrorIs(t, err, ErrClaimed, "a second claim while the first is held")
	require.NoError(t, f.Close())
	g, err := Claim(vfs.Default, path)
	require.NoError(t, err, "closing the holder hands the claim on")
	require.NoError(t, g.Close())
}

// oPath is Linux's O_PATH on amd64 and arm64 (syscall does not name it).
const oPath = 0x200000

// noFlockFS opens files whose descriptor the kernel refuses to flock (an
// O_PATH descriptor of the same file: EBADF), as a file system without
// advisory locks refuses the call itself.
type noFlockFS struct{ vfs.FS }

type noFlockFile struct {
	vfs.File
	fd int
}

func (f *noFlockFile) Fd() uintptr { return uintptr(f.fd) }

func (f *noFlockFile) Close() error {
	return errors.Join(syscall.Close(f.fd), f.File.Close())
}

func (fs noFlockFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	f, err := fs.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	fd, err := syscall.Open(name, oPath|syscall.O_CLOEXEC, 0)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &noFlockFile{f, fd}, nil
}

// A file system that refuses flock is not reported as a holder that does
// not exist: the error is the lock call's own, and not ErrClaimed.
func TestClaimRefusedByFileSystem(t *testing.T) {
	path := filepath.Join(t.TempDir(), "table.lock")
	_, err := Claim(noFlockFS{vfs.Default}, path)
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrClaimed)
	assert.ErrorIs(t, err, syscall.EBADF)
	assert.Contains(t, err.Error(), "locking "+path)
	// Nothing is left holding it: a real claim succeeds.
	f, err := Claim(vfs.Default, path)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}
