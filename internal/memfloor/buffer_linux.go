package memfloor

import (
	"runtime"
	"syscall"
	"unsafe"
)

const hugePageSize = 2 << 20

// buffer is a chain's words: on Linux, for a chain of a huge page or more,
// anonymous memory aligned to 2 MiB and advised MADV_HUGEPAGE before its
// first touch, so that its page faults allocate huge pages; unmapped when
// the last chain using it is unreachable.
type buffer struct {
	words []uint64
	huge  bool
}

func newBuffer(n int64) *buffer {
	size := int(n * 8)
	if size < hugePageSize {
		return &buffer{words: make([]uint64, n)}
	}
	size = (size + hugePageSize - 1) &^ (hugePageSize - 1)
	// One huge page more than needed, so that a 2 MiB boundary falls within
	// the first one wherever the kernel puts the mapping.
	mem, err := syscall.Mmap(-1, 0, size+hugePageSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return &buffer{words: make([]uint64, n)}
	}
	start := int(-uintptr(unsafe.Pointer(unsafe.SliceData(mem))) & (hugePageSize - 1))
	b := &buffer{
		words: unsafe.Slice((*uint64)(unsafe.Pointer(&mem[start])), n),
		huge:  syscall.Madvise(mem[start:start+size], syscall.MADV_HUGEPAGE) == nil,
	}
	runtime.AddCleanup(b, func(mem []byte) { _ = syscall.Munmap(mem) }, mem)
	return b
}
