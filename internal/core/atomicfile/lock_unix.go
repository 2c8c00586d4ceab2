//go:build unix

package atomicfile

import (
	"syscall"

	"github.com/lnpdb/lnpdb/internal/core/vfs"
)

func lock(f vfs.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

func tryLock(f vfs.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
