package hugemem

import (
	"syscall"
	"unsafe"
)

// Reserve maps size bytes, rounded up to whole huge pages, of private
// anonymous memory, read-write and starting on a 2 MiB boundary: b. mem is
// the whole mapping, one huge page larger so that the boundary falls within
// it wherever the kernel puts it; unmap mem, not b.
func Reserve(size int) (mem, b []byte, err error) {
	n := (size + PageSize - 1) &^ (PageSize - 1)
	mem, err = syscall.Mmap(-1, 0, n+PageSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, nil, err
	}
	start := int(-uintptr(unsafe.Pointer(unsafe.SliceData(mem))) & (PageSize - 1))
	return mem, mem[start : start+n : start+n], nil
}
