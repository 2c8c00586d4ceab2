package hugemem

import (
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReserveIsAligned(t *testing.T) {
	for _, size := range []int{1, PageSize, PageSize + 1, 5*PageSize - 7} {
		mem, b, err := Reserve(size)
		require.NoError(t, err)
		assert.Zero(t, uintptr(unsafe.Pointer(&b[0]))%PageSize, "size %d: start on a 2 MiB boundary", size)
		assert.Zero(t, len(b)%PageSize, "size %d: whole huge pages", size)
		assert.GreaterOrEqual(t, len(b), size)
		assert.Less(t, len(b)-size, PageSize)
		start := uintptr(unsafe.Pointer(&b[0])) - uintptr(unsafe.Pointer(&mem[0]))
		assert.LessOrEqual(t, int(start)+len(b), len(mem), "size %d: inside the mapping", size)
		b[0], b[len(b)-1] = 1, 2 // writable
		require.NoError(t, syscall.Munmap(mem))
	}
}
