package format

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/lnpdb/lnpdb/internal/core/hugemem"
)

// How a region holds a table's bytes, as Placement reports it.
const (
	placementFile      = "file mapping"
	placementHugeCopy  = "anonymous huge-page copy"
	placementHugeTmpfs = "huge-page tmpfs mapping"
	placementEmpty     = "empty"
	placementHeap      = "heap copy"
	placementBytes     = "memory given to OpenBytes"
)

// hugePageSize is the transparent huge page size the huge-page copy aligns
// to and the table writer writes in: 2 MiB on x86-64 and on arm64 with 4 KiB
// base pages.
const hugePageSize = hugemem.PageSize

// hugeReadChunk is the size of each pread that fills the huge-page copy: large
// enough that the system calls cost nothing beside the copy itself.
const hugeReadChunk = 16 << 20

var errRegionClosed = errors.New("format: region closed")

// region is a table file's bytes in memory, read-only.
//
// By default (openRegion with huge false) the file is mapped shared and
// read-only, exactly as before: the bytes are page cache, shared with every
// other process that maps the file, reclaimable by the kernel under memory
// pressure, and cost nothing to open. On systems without mmap (anything not
// unix) the file is read into the Go heap instead.
//
// With huge true, the table takes one TLB entry per 2 MiB instead of one per
// 4 KiB, which spares most random reads of a table much larger than the CPU
// caches a page-table walk:
//
//   - A file on tmpfs is mapped as it is and advised MADV_HUGEPAGE; nothing
//     is copied and no memory is added. On a tmpfs mounted huge=always (or
//     huge=within_size) the file's pages were allocated huge when it was
//     written, and the mapping uses them; on other tmpfs mounts the pages
//     stay small, and the advice at most lets khugepaged collapse them
//     later. Copy the table onto such a mount (mount -t tmpfs -o
//     huge=always) to get huge pages without a copy in every process.
//   - Any other file is copied into anonymous memory aligned to 2 MiB and
//     advised MADV_HUGEPAGE before it is first touched, so the kernel backs
//     it with huge pages as it is filled; the copy is then made read-only.
//
// The copy's cost: the whole table lives in anonymous memory, which is not
// page cache and cannot be reclaimed (without swap it is pinned like any
// heap); it is charged to this process and its cgroup, and the file's own
// page cache, read once to fill it, is reclaimable afterwards. While a
// reload or a compaction switches tables, old and new are both held, so
// count twice the table size. Opening costs one sequential read of the
// file into fresh memory. It only
// takes effect when transparent huge pages are enabled as "madvise" or
// "always" in /sys/kernel/mm/transparent_hugepage/enabled ("never" leaves
// the copy on 4 KiB pages: all of the cost, none of the gain); AnonHugePages
// in /proc/PID/smaps shows how much of it the kernel backed with huge pages.
// The plain mapping may be on huge pages already: where the file system
// keeps the page cache in large folios (ext4 and xfs on recent kernels), the
// kernel maps a file read or written in large chunks with 2 MiB entries too
// (FilePmdMapped in smaps), and the copy gains little over it. The
// huge-page option is for Linux; other unixes fall back to the plain
// mapping, and a kernel built without transparent huge pages makes the
// option an error rather than a silent copy.
//
// A region is safe for concurrent reads. Close must not run concurrently
// with reads, and the slice Bytes returns is valid only until Close: reading
// it afterwards faults. A region that becomes unreachable without Close is
// unmapped by the garbage collector, so keep the *region reachable for as
// long as its bytes are used, not only the slice.
type region struct {
	b         []byte // the file's bytes; nil once closed
	mem       []byte // the mapping to unmap at Close; nil when nothing is mapped
	placement string
	cleanup   runtime.Cleanup
}

// newRegion returns a region over b, which lies inside mem; mem, unless nil,
// is unmapped at Close or, failing that, when the region is collected.
func newRegion(b, mem []byte, placement string) *region {
	r := &region{b: b, mem: mem, placement: placement}
	if mem != nil {
		r.cleanup = runtime.AddCleanup(r, func(m []byte) { _ = unmap(m) }, mem)
	}
	return r
}

// Bytes returns the whole file. It is nil after Close.
func (r *region) Bytes() []byte { return r.b }

// Len returns the size of the file in bytes; 0 after Close.
func (r *region) Len() int { return len(r.b) }

// At returns the byte at index i. Like mmap.ReaderAt.At it panics when i is
// out of range, and after Close.
func (r *region) At(i int) byte { return r.b[i] }

// ReadAt implements io.ReaderAt with the semantics of mmap.ReaderAt.ReadAt:
// an offset below 0 or past the end is an error, a read that reaches the end
// short returns io.EOF with the bytes it got, and any read after Close is an
// error.
func (r *region) ReadAt(p []byte, off int64) (int, error) {
	if r.b == nil {
		return 0, errRegionClosed
	}
	if off < 0 || int64(len(r.b)) < off {
		return 0, fmt.Errorf("format: invalid ReadAt offset %d", off)
	}
	n := copy(p, r.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Placement says how the bytes are held: "file mapping", "anonymous
// huge-page copy", "huge-page tmpfs mapping", "heap copy" (systems without
// mmap) or "empty" (a file of 0 bytes, which nothing maps).
func (r *region) Placement() string { return r.placement }

// Close unmaps the region. It is idempotent.
func (r *region) Close() error {
	if r.b == nil {
		return nil
	}
	r.b = nil
	mem := r.mem
	r.mem = nil
	if mem == nil {
		return nil
	}
	r.cleanup.Stop()
	return unmap(mem)
}

// openRegion holds the table file at path in memory, as loadRegion does on
// this system; an empty file is an empty region (mmap refuses a length of
// 0, and there is nothing to read).
func openRegion(path string, huge bool) (*region, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if size < 0 || size != int64(int(size)) {
		return nil, fmt.Errorf("%s: size %d cannot be mapped", path, size)
	}
	if size == 0 {
		return newRegion(make([]byte, 0), nil, placementEmpty), nil
	}
	return loadRegion(f, path, int(size), huge)
}
