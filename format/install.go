package format

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/lnpdb/lnpdb/internal/core/atomicfile"
	"github.com/lnpdb/lnpdb/internal/core/vfs"
)

// InstallFrom puts the table read from r at path, the way a table fetched from
// elsewhere (a download, a pipe) must arrive: r is written to a temporary
// file beside path, fsync'd, verified as the Verify option verifies (every
// section's checksum and structure), and only then renamed over path and
// the directory fsync'd. A stream that fails, ends early or holds anything
// but a whole, valid table leaves path as it was and no temporary file.
//
// The stream is judged as it arrives: its first 64 bytes must be a table
// header of this version (magic, version, checksum), and exactly the
// number of bytes the header declares is read and written, no more — a
// stream that goes on past them is refused at the first byte beyond. So a
// stream that is not a table writes nothing, and one with trailing bytes
// writes at most the declared size. opt refines it; its zero value
// installs a table of any size.
//
// It returns the installed table's Info, with Path set to path (also when
// only the final directory fsync failed: the table is in place then, and
// the error says so). A server
// mapping path picks the new file up with Reload; lookups on the old
// mapping are unaffected by the rename.
func InstallFrom(path string, r io.Reader, opt InstallOptions) (Info, error) {
	return install(vfs.Default, path, r, opt)
}

// Install is InstallFrom with the zero InstallOptions.
//
// Deprecated: use InstallFrom(path, r, InstallOptions{}).
func Install(path string, r io.Reader) (Info, error) {
	return InstallFrom(path, r, InstallOptions{})
}

// InstallOptions refine InstallFrom.
type InstallOptions struct {
	// MaxBytes, when positive, refuses a table whose header declares more
	// bytes, before anything is written.
	MaxBytes int64
}

// ErrTooLarge reports a table larger than InstallOptions.MaxBytes allows.
var ErrTooLarge = errors.New("format: table larger than allowed")

// InstallWith is InstallFrom.
//
// Deprecated: use InstallFrom, which is the same call under the name of
// what it does.
func InstallWith(path string, r io.Reader, opt InstallOptions) (Info, error) {
	return InstallFrom(path, r, opt)
}

// maxDeclared bounds the size a header may declare (an int64, with room).
const maxDeclared = 1 << 62

// readDeclared reads a table header from r and returns it with the file
// size it declares, refusing a header that is not one of this version's.
func readDeclared(r io.Reader, opt InstallOptions) ([]byte, int64, error) {
	head := make([]byte, headerSize)
	for n := 0; n < headerSize; {
		k, err := r.Read(head[n:])
		n += k
		switch {
		case n == headerSize:
		case err == io.EOF:
			return nil, 0, fmt.Errorf("%w: the stream ended after %d bytes, within the %d-byte header", ErrCorrupt, n, headerSize)
		case err != nil:
			return nil, 0, fmt.Errorf("reading the table's header after %d bytes: %w", n, err)
		}
	}
	declared := binary.LittleEndian.Uint64(head[24:])
	if string(head[:8]) == magic && (declared < headerSize || declared > maxDeclared) {
		return nil, 0, corrupt("header", "declared file size %d out of range", declared)
	}
	if _, err := decodeHeader(head, int64(declared)); err != nil {
		return nil, 0, err
	}
	if opt.MaxBytes > 0 && int64(declared) > opt.MaxBytes {
		return nil, 0, fmt.Errorf("%w: the header declares %d bytes, the limit is %d", ErrTooLarge, declared, opt.MaxBytes)
	}
	return head, int64(declared), nil
}

func install(fs vfs.FS, path string, r io.Reader, opt InstallOptions) (Info, error) {
	// Leftovers of an install killed before its rename.
	atomicfile.RemoveStale(fs, path)
	var info Info
	var n int64
	err := atomicfile.Write(fs, path, func(f vfs.File) error {
		head, size, err := readDeclared(r, opt)
		if err != nil {
			return err
		}
		// Through a chunkWriter, so that the new table is cached in huge
		// pages whatever sizes r reads in.
		cw := newChunkWriter(f)
		if _, err := cw.Write(head); err != nil {
			return err
		}
		n, err = io.CopyBuffer(cw, io.LimitReader(r, size-headerSize), make([]byte, 1<<20))
		n += headerSize
		if err != nil {
			return fmt.Errorf("reading the table after %d bytes: %w", n, err)
		}
		if n < size {
			return fmt.Errorf("%w: the stream ended after %d of the %d bytes the header declares (truncated)", ErrCorrupt, n, size)
		}
		// Anything past the declared size: refused at its first byte.
		var one [1]byte
		if k, err := io.ReadFull(r, one[:]); k > 0 {
			return fmt.Errorf("%w: the stream goes on past the %d bytes the header declares (extended)", ErrCorrupt, size)
		} else if !errors.Is(err, io.EOF) {
			return fmt.Errorf("reading the table after %d bytes: %w", n, err)
		}
		return cw.Flush()
	}, atomicfile.Options{
		Check: func(tmp string) error {
			db, err := Open(tmp, Verify(), IgnoreJournal())
			if err != nil {
				return fmt.Errorf("the %d bytes received are not a valid table: %w", n, err)
			}
			info = db.Info()
			return db.Close()
		},
	})
	if err != nil && !errors.Is(err, atomicfile.ErrDirSync) {
		return Info{}, fmt.Errorf("format: installing %s: %w", path, err)
	}
	// After ErrDirSync the new table is in place, but a power loss may
	// still bring the old one back.
	info.Path = path
	if err != nil {
		return info, fmt.Errorf("format: installing %s: %w", path, err)
	}
	return info, nil
}
