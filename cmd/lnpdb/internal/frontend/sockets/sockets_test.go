package sockets

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestSet(t *testing.T) {
	var s Set[int]
	ran := 0
	assert.True(t, s.Add(1, func() { ran++ }))
	assert.True(t, s.Add(2, nil))
	assert.Equal(t, 1, ran, "then runs once x is tracked")
	assert.False(t, s.Remove(2), "a Serve that ends before Close keeps its error")

	assert.Equal(t, []int{1}, s.Close(), "Close returns what is still tracked")
	assert.False(t, s.Add(3, func() { ran++ }), "nothing is tracked after Close")
	assert.Equal(t, 1, ran, "then does not run for a refused Add")
	assert.True(t, s.Remove(1), "a Serve that ends after Close reports the server closed")
	assert.Empty(t, s.Close())
}

type closer struct{ closed *int }

func (c closer) Close() error {
	*c.closed++
	return errors.New("already closed")
}

func TestCloseAll(t *testing.T) {
	var s Set[closer]
	n := 0
	assert.True(t, s.Add(closer{&n}, nil))
	CloseAll(&s)
	assert.Equal(t, 1, n, "every tracked item closed, its error ignored")
	assert.False(t, s.Add(closer{&n}, nil), "and the set closed")
}

func TestWait(t *testing.T) {
	var wg sync.WaitGroup
	assert.NoError(t, Wait(context.Background(), &wg), "nothing to wait for")
	wg.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, Wait(ctx, &wg), context.DeadlineExceeded, "ctx ends first")
	go wg.Done()
	assert.NoError(t, Wait(context.Background(), &wg))
}
