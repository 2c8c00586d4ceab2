package vfs

import (
	"os"
	"sync"
)

// Op names a file-system call that Faulty can fail.
type Op int

// The calls Faulty can fail.
const (
	OpCreate   Op = iota // OpenFile with O_CREATE, CreateTemp
	OpWrite              // Write, WriteAt
	OpSync               // File.Sync
	OpTruncate           // File.Truncate
	OpRename             // Rename
	OpRemove             // Remove
	OpLink               // Link
	OpSyncDir            // SyncDir
)

var opNames = [...]string{"create", "write", "sync", "truncate", "rename", "remove", "link", "syncdir"}

func (o Op) String() string { return opNames[o] }

// Faulty is an FS that asks Inject before each call it can fail; a non-nil
// answer fails the call with that error. A failed write first writes half of
// its bytes, as a write cut short by a full disk does. Everything else goes
// to the FS underneath.
type Faulty struct {
	FS     FS
	mu     sync.Mutex
	inject func(op Op, name string) error
}

// NewFaulty returns a Faulty over fs that fails the calls inject says.
func NewFaulty(fs FS, inject func(op Op, name string) error) *Faulty {
	return &Faulty{FS: fs, inject: inject}
}

// SetInject replaces the injection function; nil fails nothing.
func (f *Faulty) SetInject(inject func(op Op, name string) error) {
	f.mu.Lock()
	f.inject = inject
	f.mu.Unlock()
}

func (f *Faulty) fail(op Op, name string) error {
	f.mu.Lock()
	inject := f.inject
	f.mu.Unlock()
	if inject == nil {
		return nil
	}
	return inject(op, name)
}

func (f *Faulty) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	if flag&os.O_CREATE != 0 {
		if err := f.fail(OpCreate, name); err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
	}
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultyFile{File: file, fs: f}, nil
}

func (f *Faulty) CreateTemp(dir, pattern string) (File, error) {
	if err := f.fail(OpCreate, dir); err != nil {
		return nil, &os.PathError{Op: "createtemp", Path: dir, Err: err}
	}
	file, err := f.FS.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return &faultyFile{File: file, fs: f}, nil
}

func (f *Faulty) Rename(oldpath, newpath string) error {
	if err := f.fail(OpRename, newpath); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return f.FS.Rename(oldpath, newpath)
}

func (f *Faulty) Remove(name string) error {
	if err := f.fail(OpRemove, name); err != nil {
		return &os.PathError{Op: "remove", Path: name, Err: err}
	}
	return f.FS.Remove(name)
}

func (f *Faulty) Link(oldname, newname string) error {
	if err := f.fail(OpLink, newname); err != nil {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: err}
	}
	return f.FS.Link(oldname, newname)
}

func (f *Faulty) Stat(name string) (os.FileInfo, error)     { return f.FS.Stat(name) }
func (f *Faulty) ReadDir(dir string) ([]os.DirEntry, error) { return f.FS.ReadDir(dir) }

func (f *Faulty) SyncDir(dir string) error {
	if err := f.fail(OpSyncDir, dir); err != nil {
		return &os.PathError{Op: "sync", Path: dir, Err: err}
	}
	return f.FS.SyncDir(dir)
}

type faultyFile struct {
	File
	fs *Faulty
}

func (f *faultyFile) Write(b []byte) (int, error) {
	if err := f.fs.fail(OpWrite, f.Name()); err != nil {
		n, _ := f.File.Write(b[:len(b)/2])
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: err}
	}
	return f.File.Write(b)
}

func (f *faultyFile) WriteAt(b []byte, off int64) (int, error) {
	if err := f.fs.fail(OpWrite, f.Name()); err != nil {
		n, _ := f.File.WriteAt(b[:len(b)/2], off)
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: err}
	}
	return f.File.WriteAt(b, off)
}

func (f *faultyFile) Sync() error {
	if err := f.fs.fail(OpSync, f.Name()); err != nil {
		return &os.PathError{Op: "sync", Path: f.Name(), Err: err}
	}
	return f.File.Sync()
}

func (f *faultyFile) Truncate(size int64) error {
	if err := f.fs.fail(OpTruncate, f.Name()); err != nil {
		return &os.PathError{Op: "truncate", Path: f.Name(), Err: err}
	}
	return f.File.Truncate(size)
}
