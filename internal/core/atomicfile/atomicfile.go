// Package atomicfile writes a file so that it appears at its path whole or
// not at all: into a temporary file beside it, fsync'd, checked, renamed over
// the path, and the directory fsync'd. Every durable file of the tree goes
// through it: tables built, compacted and installed, journal rewrites, the
// update log's recorded position and a fetched table's ETag. It imports only
// the standard library and vfs, so that format and the server share it.
//
// A temporary file is named "." + the path's base name + ".tmp-" and a random
// suffix, and holds an exclusive advisory lock while it is written, so that
// RemoveStale can tell the leftovers of a killed writer (whose lock the kernel
// released) from a file another process is still writing. The same kind
// of lock, on a file of its own that is never replaced (Claim), makes one
// process the writer of what that file guards: a table and its journal.
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lnpdb/lnpdb/internal/core/vfs"
)

// Options refine Write.
type Options struct {
	// Perm is the file's mode; 0644 if zero.
	Perm os.FileMode
	// Check, if set, runs on the written and fsync'd temporary file (by
	// its name) before the rename; an error leaves the path untouched.
	Check func(tmp string) error
	// BeforeRename, if set, runs last, right before the rename; an error
	// leaves the path untouched.
	BeforeRename func() error
}

// Write creates path's content with fill, then renames it into place. On
// any error the temporary file is removed and path is as it was.
func Write(fs vfs.FS, path string, fill func(f vfs.File) error, opt Options) (err error) {
	dir := filepath.Dir(path)
	f, err := fs.CreateTemp(dir, tempPrefix(path)+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	renamed := false
	defer func() {
		if !renamed {
			fs.Remove(tmp)
		}
		if cerr := f.Close(); err == nil && !renamed {
			err = cerr
		}
	}()
	if err := lock(f); err != nil {
		return err
	}
	if err := fill(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	perm := opt.Perm
	if perm == 0 {
		perm = 0o644
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if opt.Check != nil {
		if err := opt.Check(tmp); err != nil {
			return err
		}
	}
	if opt.BeforeRename != nil {
		if err := opt.BeforeRename(); err != nil {
			return err
		}
	}
	if err := fs.Rename(tmp, path); err != nil {
		return err
	}
	renamed = true
	if err := fs.SyncDir(dir); err != nil {
		return fmt.Errorf("%w: %w", ErrDirSync, err)
	}
	return nil
}

// ErrDirSync reports a Write whose rename was done but whose directory
// fsync failed: the new file is in place, but a power loss may still bring
// the old one back. A caller that tracks the file's state must take the new
// file as the current one.
var ErrDirSync = errors.New("atomicfile: renamed, but the directory sync failed")

// tempPrefix is the name every temporary file of path starts with.
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp-" }

// IsTemp reports whether name (a base name) is a temporary file of path.
func IsTemp(path, name string) bool { return strings.HasPrefix(name, tempPrefix(path)) }

// RemoveStale removes the temporary files of path that no process is
// writing — the leftovers of a writer killed before it renamed — and
// returns their names. A temporary file whose lock another process holds is
// left alone.
func RemoveStale(fs vfs.FS, path string) ([]string, error) {
	dir := filepath.Dir(path)
	entries, err := fs.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if !e.Type().IsRegular() || !IsTemp(path, e.Name()) {
			continue
		}
		name := filepath.Join(dir, e.Name())
		f, err := fs.OpenFile(name, os.O_RDWR, 0)
		if err != nil {
			continue // gone meanwhile, or not ours to open
		}
		if tryLock(f) {
			if err := fs.Remove(name); err == nil {
				removed = append(removed, name)
			}
		}
		f.Close()
	}
	if len(removed) > 0 {
		fs.SyncDir(dir)
	}
	return removed, nil
}
