//go:build unix

package format

import (
	"fmt"
	"os"
	"syscall"
)

// openRegion maps the table file at path; with huge, it puts the bytes on
// huge pages where the system can (see region).
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
		// mmap refuses a length of 0; there is nothing to map.
		return newRegion(make([]byte, 0), nil, placementEmpty), nil
	}
	if huge {
		return openHuge(f, path, int(size))
	}
	return mapFile(f, path, int(size), placementFile)
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
