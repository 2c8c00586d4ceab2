package journal

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/lnpdb/lnpdb/internal/core/atomicfile"
	"github.com/lnpdb/lnpdb/internal/core/vfs"
)

// ErrBroken reports a journal that a failed append left in a state that
// could not be brought back to its last commit: it accepts nothing more
// until it is reopened.
var ErrBroken = errors.New("journal: broken by a failed append that could not be undone")

// Writer appends batches to an open journal.
type Writer struct {
	fs     vfs.FS
	f      vfs.File
	path   string
	size   int64 // through the last commit record
	buf    []byte
	broken error
}

// OpenWriter opens the journal at path for appending after its first good
// bytes (Replay.Good; 0 for a journal that does not exist or has no
// header), cutting off whatever follows them: an incomplete batch that was
// never acknowledged.
func OpenWriter(fs vfs.FS, path string, good int64) (*Writer, error) {
	f, err := fs.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	w := &Writer{fs: fs, f: f, path: path, size: good}
	if err := w.prepare(); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

func (w *Writer) prepare() error {
	st, err := w.f.Stat()
	if err != nil {
		return err
	}
	created := false
	if w.size < HeaderSize {
		if err := w.f.Truncate(0); err != nil {
			return err
		}
		if _, err := w.f.WriteAt(Header(), 0); err != nil {
			return err
		}
		w.size, created = HeaderSize, true
	} else if st.Size() < w.size {
		// Never extend it with zeros: the file is not the one replayed.
		return fmt.Errorf("journal: %s is %d bytes, shorter than its last commit at %d; it changed since it was read", w.path, st.Size(), w.size)
	} else if st.Size() != w.size {
		if err := w.f.Truncate(w.size); err != nil {
			return err
		}
	}
	if err := w.f.Sync(); err != nil {
		return err
	}
	if _, err := w.f.Seek(w.size, io.SeekStart); err != nil {
		return err
	}
	if created || st.Size() == 0 {
		return w.fs.SyncDir(filepath.Dir(w.path))
	}
	return nil
}

// Size is the journal's length through its last commit record.
func (w *Writer) Size() int64 { return w.size }

// Append writes a batch — its updates and its commit record — and fsyncs
// it. When it returns nil the batch survives a crash. When it fails, what
// it wrote is cut off again before it returns, so that the journal on disk
// ends at its last commit, as the caller's state does; if that cannot be
// done, the error wraps ErrBroken and the Writer refuses every later
// Append.
func (w *Writer) Append(ups []Update, c *Commit) error {
	if w.broken != nil {
		return w.broken
	}
	w.buf = AppendBatch(w.buf[:0], ups, c)
	_, err := w.f.Write(w.buf)
	if err == nil {
		err = w.f.Sync()
	}
	if err == nil {
		w.size += int64(len(w.buf))
		return nil
	}
	if uerr := w.undo(); uerr != nil {
		w.broken = fmt.Errorf("%w: %s: append failed (%v), and cutting it off failed: %v", ErrBroken, w.path, err, uerr)
		return w.broken
	}
	return fmt.Errorf("journal: %s: append failed and was cut off: %w", w.path, err)
}

// undo cuts the journal back to its last commit record and makes that
// durable.
func (w *Writer) undo() error {
	if err := w.f.Truncate(w.size); err != nil {
		return err
	}
	if err := w.f.Sync(); err != nil {
		return err
	}
	_, err := w.f.Seek(w.size, io.SeekStart)
	return err
}

// Broken returns the error that broke the journal, or nil.
func (w *Writer) Broken() error { return w.broken }

// Close closes the journal file.
func (w *Writer) Close() error { return w.f.Close() }

// Rewrite replaces the journal at path with one holding exactly these
// batches (their updates re-encoded; each Commit's Count, Seq and Sum are
// recomputed), atomically: a crash leaves the old journal or the new one.
// An error wrapping atomicfile.ErrDirSync means the new journal is in place
// (its size is returned) but may not survive a power loss.
func Rewrite(fs vfs.FS, path string, batches []Batch) (size int64, err error) {
	buf := Header()
	for i := range batches {
		buf = AppendBatch(buf, batches[i].Updates, &batches[i].Commit)
	}
	err = atomicfile.Write(fs, path, func(f vfs.File) error {
		_, err := f.Write(buf)
		return err
	}, atomicfile.Options{})
	return int64(len(buf)), err
}
