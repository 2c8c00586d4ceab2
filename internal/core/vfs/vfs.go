// Package vfs is the file-system seam of the durable writes: every file the
// format package creates, writes, syncs, renames or removes — the table files
// it builds and compacts, the spill files of a build, the journal, its
// rewrites — and the server's own durable files (through atomicfile) go
// through an FS.
// Production code uses Default, the operating system; tests wrap it in
// Faulty to inject ENOSPC, EIO, short writes and crashes between an fsync and
// a rename through the very same calls. (Mapping a table for reading is not
// part of the seam: a mapping needs a real file.)
package vfs

import (
	"io"
	"os"
)

// File is an open file.
type File interface {
	io.Reader
	io.Writer
	io.ReaderAt
	io.WriterAt
	io.Seeker
	Sync() error
	Truncate(size int64) error
	Stat() (os.FileInfo, error)
	Chmod(mode os.FileMode) error
	Close() error
	Name() string
	Fd() uintptr
}

// FS is the set of file-system calls the durable writes make.
type FS interface {
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	// CreateTemp is os.CreateTemp.
	CreateTemp(dir, pattern string) (File, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
	Link(oldname, newname string) error
	Stat(name string) (os.FileInfo, error)
	ReadDir(dir string) ([]os.DirEntry, error)
	// SyncDir makes the directory's entries (creations, renames,
	// removals) durable.
	SyncDir(dir string) error
}

// Default is the operating system's file system.
var Default FS = osFS{}

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (osFS) CreateTemp(dir, pattern string) (File, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (osFS) Rename(oldpath, newpath string) error      { return os.Rename(oldpath, newpath) }
func (osFS) Remove(name string) error                  { return os.Remove(name) }
func (osFS) Link(oldname, newname string) error        { return os.Link(oldname, newname) }
func (osFS) Stat(name string) (os.FileInfo, error)     { return os.Stat(name) }
func (osFS) ReadDir(dir string) ([]os.DirEntry, error) { return os.ReadDir(dir) }

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadFile reads the whole file at name through fs.
func ReadFile(fs FS, name string) ([]byte, error) {
	f, err := fs.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
