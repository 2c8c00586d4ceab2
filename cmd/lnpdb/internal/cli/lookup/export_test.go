package lookup

import "github.com/lnpdb/lnpdb/internal/core/vfs"

// SetOutFS makes --out written through fs until the returned function
// restores the real file system.
func SetOutFS(fs vfs.FS) (restore func()) {
	old := outFS
	outFS = fs
	return func() { outFS = old }
}
