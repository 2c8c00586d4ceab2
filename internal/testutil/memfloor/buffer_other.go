//go:build !linux

package memfloor

// buffer is a chain's words, on the Go heap.
type buffer struct {
	words []uint64
	huge  bool
}

func newBuffer(n int64) *buffer { return &buffer{words: make([]uint64, n)} }
