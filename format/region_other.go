//go:build !unix

package format

import (
	"fmt"
	"os"
)

// openRegion reads the table file at path into the Go heap: systems that are
// not unix get no mapping, and huge is ignored. The table then costs its
// size in heap memory, and Open a full read of the file.
func openRegion(path string, huge bool) (*region, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return newRegion(make([]byte, 0), nil, placementEmpty), nil
	}
	return newRegion(b, nil, placementHeap), nil
}

// unmap is never called here: no region holds a mapping.
func unmap(mem []byte) error { return fmt.Errorf("format: no mapping to unmap") }
