//go:build unix

package format

import (
	"fmt"
	"os"
	"syscall"
)

// loadRegion maps the size bytes (more than 0) of the table file f; with
// huge, it puts them on huge pages where the system can (see region).
func loadRegion(f *os.File, path string, size int, huge bool) (*region, error) {
	if huge {
		return openHuge(f, path, size)
	}
	r, err := mapFile(f, path, size, placementFile)
	if err == nil {
		adviseFile(r.mem)
	}
	return r, err
}

// mapFile maps size bytes of f shared and read-only.
func mapFile(f *os.File, path string, size int, placement string) (*region, error) {
	b, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("%s: mmap: %w", path, err)
	}
	return newRegion(b, b, placement), nil
}

func unmap(mem []byte) error { return syscall.Munmap(mem) }
