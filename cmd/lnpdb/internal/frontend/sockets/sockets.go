// Package sockets tracks what a softswitch front end's server serves on —
// sockets, listeners, a library's per-socket servers — so that Shutdown
// reaches every one, a Serve that starts after it refuses, and a Serve
// that ends because of it reports the server closed rather than the error
// closing its socket caused. The ENUM, pdb and SIP redirect servers share
// it, and [Inflight], the requests a Shutdown waits for while their
// connections may still deliver more.
//
// It also owns what every TCP listener of the server admits ([Gate]): a
// connection cap, an idle lifetime, an allow-list applied at accept, and
// the rule that an accept error (descriptors run out) is retried, never
// fatal. The HTTP, SIP and DNS listeners are all served through a Gate.
package sockets

import (
	"context"
	"io"
	"sync"
)

// Set is what one server serves on. The zero value is empty and open; a
// Set is safe for concurrent use.
type Set[T comparable] struct {
	mu     sync.Mutex
	items  map[T]struct{}
	closed bool
}

// Add tracks x and reports true; after Close it tracks nothing and reports
// false, and the caller closes x and returns its ErrServerClosed. then, if
// not nil, runs once x is tracked, before a Close can return: where a
// Serve counts the goroutines that Shutdown waits for.
func (s *Set[T]) Add(x T, then func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.items == nil {
		s.items = make(map[T]struct{})
	}
	s.items[x] = struct{}{}
	if then != nil {
		then()
	}
	return true
}

// Remove stops tracking x, whose Serve has ended, and reports whether Close
// has been called: that Serve then returns its ErrServerClosed.
func (s *Set[T]) Remove(x T) (closed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.items, x)
	return s.closed
}

// Close marks the set closed and returns what it tracks, for the caller to
// close or shut down.
func (s *Set[T]) Close() []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	out := make([]T, 0, len(s.items))
	for x := range s.items {
		out = append(out, x)
	}
	return out
}

// CloseAll closes s and everything it tracks: how a Shutdown stops the
// Serves reading from s's sockets.
func CloseAll[T interface {
	comparable
	io.Closer
}](s *Set[T]) {
	for _, x := range s.Close() {
		x.Close()
	}
}

// Wait waits for wg, the requests or readers a Shutdown lets finish, until
// ctx ends; it returns ctx's error when ctx ended first.
func Wait(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
