package sockets

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A request in flight holds Wait until it leaves; once Wait has begun, a
// request is refused, and a Wait whose context ends first says so.
func TestInflightWaits(t *testing.T) {
	var f Inflight
	require.True(t, f.Enter())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, f.Wait(ctx), context.DeadlineExceeded, "a request is still in flight")
	assert.False(t, f.Enter(), "Wait has begun: no new request")

	done := make(chan error, 1)
	go func() { done <- f.Wait(context.Background()) }()
	select {
	case err := <-done:
		t.Fatalf("Wait returned %v with a request in flight", err)
	case <-time.After(20 * time.Millisecond):
	}
	f.Leave()
	require.NoError(t, <-done)
	assert.False(t, f.Enter())
}

// Requests that keep arriving while Shutdown waits (read from connections
// whose listener is closed) are each either counted and waited for or
// refused: never counted after Wait returned. Under -race, the
// sync.WaitGroup this replaces reports its Add from zero racing its Wait.
func TestInflightEnterDuringWait(t *testing.T) {
	for range 10 {
		var f Inflight
		var stop atomic.Bool
		var after atomic.Int64 // requests counted once Wait had returned
		var waited atomic.Bool
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					if f.Enter() {
						if waited.Load() {
							after.Add(1)
						}
						f.Leave()
					}
				}
			}()
		}
		time.Sleep(time.Millisecond)
		require.NoError(t, f.Wait(context.Background()))
		waited.Store(true)
		time.Sleep(time.Millisecond)
		stop.Store(true)
		wg.Wait()
		assert.Zero(t, after.Load(), "a request counted after Wait returned")
	}
}
