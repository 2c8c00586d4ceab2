package memfloor

import (
	"runtime"
	"syscall"
	"unsafe"

	"github.com/lnpdb/lnpdb/internal/core/hugemem"
)

// buffer is a chain's words: on Linux, for a chain of a huge page or more,
// anonymous memory on 2 MiB boundaries advised MADV_HUGEPAGE before its
// first touch, so that its page faults allocate huge pages; unmapped when
// the last chain using it is unreachable.
type buffer struct {
	words []uint64
	huge  bool
}

func newBuffer(n int64) *buffer {
	if n*8 < hugemem.PageSize {
		return &buffer{words: make([]uint64, n)}
	}
	mem, b, err := hugemem.Reserve(int(n * 8))
	if err != nil {
		return &buffer{words: make([]uint64, n)}
	}
	buf := &buffer{
		words: unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), n),
		huge:  syscall.Madvise(b, syscall.MADV_HUGEPAGE) == nil,
	}
	runtime.AddCleanup(buf, func(mem []byte) { _ = syscall.Munmap(mem) }, mem)
	return buf
}
