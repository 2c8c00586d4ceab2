package atomicfile

import (
	"errors"
	"fmt"
	"os"

	"github.com/lnpdb/lnpdb/internal/core/vfs"
)

// ErrClaimed reports a lock file that another open file holds: another
// process (or another open of the same file in this one) is the writer.
var ErrClaimed = errors.New("held by another writer")

// Claim opens the lock file at path, creating it, and takes its exclusive
// advisory lock without waiting: the one writer of whatever the file
// guards holds it until it closes the file, and the kernel releases it
// when that process dies, however it dies. The file is never written,
// renamed or removed, so that every claimant locks the same inode. When
// another holds it, Claim returns an error matching ErrClaimed; when the
// file system refuses the lock itself, that error. Outside unix, without
// advisory locks, the file is opened and not locked.
func Claim(fs vfs.FS, path string) (vfs.File, error) {
	f, err := fs.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := lock(f); err != nil {
		f.Close()
		if held(err) {
			return nil, fmt.Errorf("%s: %w", path, ErrClaimed)
		}
		// A file system without advisory locks (some FUSE and network
		// ones) refuses the call itself: say so, not that a writer holds it.
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return f, nil
}
