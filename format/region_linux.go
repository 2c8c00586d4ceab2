package format

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/lnpdb/lnpdb/internal/core/hugemem"
)

// tmpfsMagic is TMPFS_MAGIC, the f_type statfs reports for tmpfs and shmem.
const tmpfsMagic = 0x01021994

// openHuge puts the size bytes of f on huge pages: a file on tmpfs is mapped
// as it is, any other is copied into anonymous memory.
func openHuge(f *os.File, path string, size int) (*region, error) {
	var st syscall.Statfs_t
	if err := syscall.Fstatfs(int(f.Fd()), &st); err != nil {
		return nil, fmt.Errorf("%s: statfs: %w", path, err)
	}
	if st.Type != tmpfsMagic {
		return copyHuge(f, path, size)
	}
	r, err := mapFile(f, path, size, placementHugeTmpfs)
	if err != nil {
		return nil, err
	}
	if err := adviseHuge(r.mem); err != nil {
		r.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// copyHuge reads size bytes of f into anonymous memory on 2 MiB boundaries,
// advised MADV_HUGEPAGE before the first touch so that the page faults of the
// copy allocate huge pages, and read-only once filled. It fails, leaving
// nothing mapped, if the file does not hold size bytes.
func copyHuge(f *os.File, path string, size int) (*region, error) {
	mem, huge, err := hugemem.Reserve(size)
	if err != nil {
		return nil, fmt.Errorf("%s: reserving %d bytes for a huge-page copy: %w", path, size, err)
	}
	fail := func(err error) (*region, error) {
		_ = syscall.Munmap(mem)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := adviseHuge(huge); err != nil {
		return fail(err)
	}
	b := huge[:size:size]
	for off := 0; off < size; off += hugeReadChunk {
		end := min(off+hugeReadChunk, size)
		if _, err := f.ReadAt(b[off:end], int64(off)); err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("file shorter than its %d bytes: %w", size, io.ErrUnexpectedEOF)
			}
			return fail(fmt.Errorf("reading into the huge-page copy at offset %d: %w", off, err))
		}
	}
	if err := syscall.Mprotect(mem, syscall.PROT_READ); err != nil {
		return fail(fmt.Errorf("making the huge-page copy read-only: %w", err))
	}
	return newRegion(b, mem, placementHugeCopy), nil
}

func adviseHuge(b []byte) error {
	if err := syscall.Madvise(b, syscall.MADV_HUGEPAGE); err != nil {
		return fmt.Errorf("madvise(MADV_HUGEPAGE): %w (is the kernel built without transparent huge pages?)", err)
	}
	return nil
}

// adviseFile asks for huge pages on a file mapping (MADV_HUGEPAGE): where
// the kernel and file system cache files in large folios (Linux 6.18 on
// ext4 does), readahead then reads the table into the page cache in 2 MiB
// folios, each mapped with one huge-page TLB entry, at no cost in memory. It is advice: a kernel that cannot follow it maps
// the file in small pages as before, so its error is of no consequence.
func adviseFile(b []byte) { _ = syscall.Madvise(b, syscall.MADV_HUGEPAGE) }
