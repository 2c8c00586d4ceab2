//go:build !unix

package atomicfile

import "github.com/lnpdb/lnpdb/internal/core/vfs"

// Without advisory locks a temporary file cannot be told from one being
// written: RemoveStale leaves them all.
func lock(vfs.File) error   { return nil }
func tryLock(vfs.File) bool { return false }

func held(error) bool { return false }
