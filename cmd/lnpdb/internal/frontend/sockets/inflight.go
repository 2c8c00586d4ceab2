package sockets

import (
	"context"
	"sync/atomic"
	"time"
)

// Inflight counts the requests a server is answering, for its Shutdown to
// wait for. Unlike a sync.WaitGroup it may be entered while Wait runs: a
// request read during Shutdown from a connection still open (its listener
// is closed, the connection not yet) is refused by Enter, and dropped,
// rather than counted from zero concurrently with the Wait. The zero value
// is open; Enter and Leave cost one atomic add each.
type Inflight struct {
	n atomic.Int64 // requests in flight, plus closing once Wait began
}

const closing = 1 << 62

// Enter counts one more request and reports true, or, once Wait has begun,
// counts nothing and reports false: the caller then drops the request.
func (f *Inflight) Enter() bool {
	if f.n.Add(1)&closing != 0 {
		f.n.Add(-1)
		return false
	}
	return true
}

// Leave ends a request Enter counted.
func (f *Inflight) Leave() { f.n.Add(-1) }

// Wait refuses new requests and waits for those in flight to leave, until
// ctx ends; it returns ctx's error when ctx ended first.
func (f *Inflight) Wait(ctx context.Context) error {
	for {
		n := f.n.Load()
		if n&closing != 0 || f.n.CompareAndSwap(n, n|closing) {
			break
		}
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for f.n.Load()&^closing != 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}
