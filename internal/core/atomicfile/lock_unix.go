//go:build unix

package atomicfile

import (
	"errors"
	"syscall"

	"github.com/lnpdb/lnpdb/internal/core/vfs"
)

func lock(f vfs.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

func tryLock(f vfs.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

// held reports whether lock's error says another holds the lock.
func held(err error) bool { return errors.Is(err, syscall.EWOULDBLOCK) }
