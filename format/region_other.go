//go:build !unix

package format

import (
	"fmt"
	"io"
	"os"
)

// loadRegion reads the size bytes of the table file f into the Go heap:
// systems that are not unix get no mapping, and huge is ignored. The table
// then costs its size in heap memory, and Open a full read of the file.
func loadRegion(f *os.File, path string, size int, huge bool) (*region, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return newRegion(b, nil, placementHeap), nil
}

// unmap is never called here: no region holds a mapping.
func unmap(mem []byte) error { return fmt.Errorf("format: no mapping to unmap") }
