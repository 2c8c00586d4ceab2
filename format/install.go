package format

import (
	"errors"
	"fmt"
	"io"

	"github.com/lnpdb/lnpdb/internal/core/atomicfile"
	"github.com/lnpdb/lnpdb/internal/core/vfs"
)

// Install puts the table read from r at path, the way a table fetched from
// elsewhere (a download, a pipe) must arrive: r is written to a temporary
// file beside path, fsync'd, verified as WithVerify verifies (every
// section's checksum and structure), and only then renamed over path and
// the directory fsync'd. A stream that fails, ends early or holds anything
// but a whole, valid table leaves path as it was and no temporary file.
//
// It returns the installed table's Info, with Path set to path (also when
// only the final directory fsync failed: the table is in place then, and
// the error says so). A server
// mapping path picks the new file up with Reload; lookups on the old
// mapping are unaffected by the rename.
func Install(path string, r io.Reader) (Info, error) {
	return install(vfs.Default, path, r)
}

func install(fs vfs.FS, path string, r io.Reader) (Info, error) {
	// Leftovers of an install killed before its rename.
	atomicfile.RemoveStale(fs, path)
	var info Info
	var n int64
	err := atomicfile.Write(fs, path, func(f vfs.File) error {
		var err error
		// Through a chunkWriter, so that the new table is cached in huge
		// pages whatever sizes r reads in.
		cw := newChunkWriter(f)
		n, err = io.CopyBuffer(cw, r, make([]byte, 1<<20))
		if err != nil {
			return fmt.Errorf("reading the table after %d bytes: %w", n, err)
		}
		return cw.Flush()
	}, atomicfile.Options{
		Check: func(tmp string) error {
			db, err := Open(tmp, WithVerify(), ReadOnly())
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
