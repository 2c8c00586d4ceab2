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
// another holds it, Claim returns an error matching ErrClaimed. Without
// advisory locks (outside unix) the file is opened and not locked.
func Claim(fs vfs.FS, path string) (vfs.File, error) {
	f, err := fs.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := lock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w (%v)", path, ErrClaimed, err)
	}
	return f, nil
}
