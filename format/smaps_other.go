//go:build !linux

package format

// hugePageBytes is -1: only Linux says which pages are huge.
func (r *region) hugePageBytes() int64 { return -1 }
