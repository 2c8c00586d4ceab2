package sockets

import (
	"testing"

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
