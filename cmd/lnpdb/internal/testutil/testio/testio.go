// Package testio holds what tests share to watch a running server's
// output: a buffer it writes while the test reads.
package testio

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer safe for concurrent use: a running command or
// handler writes to it while the test reads it. The zero value is empty
// and ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what has been written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
