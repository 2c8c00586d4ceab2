package httpapi

import (
	"net/http"
	"sync"
)

// MaxInFlightPerKey is how many GraphQL and bulk requests one key may have
// running at once: their answers are the large ones, and one key must not
// take the server's memory.
const MaxInFlightPerKey = 16

// inflight counts the running requests of each key.
type inflight struct {
	mu sync.Mutex
	m  map[string]int
}

var errTooManyInFlight = &apiError{http.StatusTooManyRequests, errorBody{
	"Too many concurrent requests", CodeRateLimitExceeded,
	"This API key has too many GraphQL or bulk requests running; wait for one to finish"}}

// acquire counts a request of key as running, or answers 429 (with
// Retry-After: 1) when the key has MaxInFlightPerKey running already. The
// caller calls release when the request is done.
func (f *inflight) acquire(w http.ResponseWriter, key Key) (release func(), ok bool) {
	id := key.hexHash
	f.mu.Lock()
	if f.m == nil {
		f.m = make(map[string]int)
	}
	if f.m[id] >= MaxInFlightPerKey {
		f.mu.Unlock()
		w.Header()["Retry-After"] = intValue(1)
		writeError(w, errTooManyInFlight)
		return nil, false
	}
	f.m[id]++
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		if f.m[id]--; f.m[id] <= 0 {
			delete(f.m, id)
		}
		f.mu.Unlock()
	}, true
}
