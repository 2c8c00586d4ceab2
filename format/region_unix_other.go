//go:build unix && !linux

package format

import "os"

// openHuge maps the file as usual: the huge-page advice and the statfs
// magic number it relies on are Linux's.
func openHuge(f *os.File, path string, size int) (*region, error) {
	return mapFile(f, path, size, placementFile)
}

// adviseFile does nothing: the huge-page advice is Linux's.
func adviseFile([]byte) {}
