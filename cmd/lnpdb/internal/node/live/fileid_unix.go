//go:build unix

package live

import (
	"io/fs"
	"syscall"
)

// devIno is the device and inode of the file fi describes, so that a
// replacement of the same size and modification time is still told apart.
func devIno(fi fs.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino
	}
	return 0, 0
}
