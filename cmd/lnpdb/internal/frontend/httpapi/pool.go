package httpapi

import "sync"

// statePool pools a handler's per-request state. release decides what
// goes back: it resets a state for its next request and reports whether
// the state is worth keeping (one that grew for an unusually large request
// is left to the collector).
type statePool[T any] struct {
	p       sync.Pool
	release func(*T) bool
}

func newStatePool[T any](release func(*T) bool) *statePool[T] {
	return &statePool[T]{p: sync.Pool{New: func() any { return new(T) }}, release: release}
}

func (sp *statePool[T]) get() *T { return sp.p.Get().(*T) }

// put returns st once nothing holds it or what it points to.
func (sp *statePool[T]) put(st *T) {
	if sp.release(st) {
		sp.p.Put(st)
	}
}
