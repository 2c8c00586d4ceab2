package memfloor

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestChainOnHugePages: a chain of 16 MiB gets huge pages wherever
// transparent huge pages are enabled, as a table's mapping does, and a
// chain of a few KiB stays on the Go heap.
func TestChainOnHugePages(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skipf("transparent huge pages are not enabled (%q, %v)", mode, err)
	}
	c := New(16<<20, 1)
	require.True(t, c.HugePages(), "MADV_HUGEPAGE refused")
	c.Step(c.Len()) // touch every page, as a benchmark's first walk does
	kb := anonHugeKB(t, uintptr(unsafe.Pointer(&c.next[0])))
	t.Logf("AnonHugePages of the chain's mapping: %d kB", kb)
	assert.GreaterOrEqual(t, kb, int64(8<<10), "at least half of 16 MiB on huge pages")
	assert.False(t, New(8*1000, 1).HugePages(), "a small chain stays on the heap")
}

// anonHugeKB returns the AnonHugePages of the mapping holding addr.
func anonHugeKB(t *testing.T, addr uintptr) int64 {
	f, err := os.Open("/proc/self/smaps")
	require.NoError(t, err)
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") {
			in = lo <= addr && addr < hi
			continue
		}
		var kb int64
		if in && strings.HasPrefix(line, "AnonHugePages:") {
			_, err := fmt.Sscanf(strings.TrimPrefix(line, "AnonHugePages:"), "%d", &kb)
			require.NoError(t, err)
			return kb
		}
	}
	require.NoError(t, sc.Err())
	t.Fatalf("no mapping holds %#x", addr)
	return 0
}
