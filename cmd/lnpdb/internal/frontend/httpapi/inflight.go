package httpapi

import (
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"net/http"
	"sync"
	"time"
)

// Per-key concurrency of GraphQL and bulk requests, whose answers are the
// large ones: one key must not take the server's memory. A request beyond
// MaxInFlightPerKey waits for a place, at most inFlightWait, and is then
// answered 429; a waiting request holds only its decoded body.
const (
	MaxInFlightPerKey = 32
	inFlightWait      = time.Second
)

// inflight bounds the running requests of each key.
type inflight struct {
	mu   sync.Mutex
	m    map[string]*keySlots
	wait time.Duration // inFlightWait when 0
}

// keySlots is one key's semaphore, kept while some request of the key
// holds or awaits a place, then pooled for the next key.
type keySlots struct {
	id    string
	slots chan struct{}
	users int
}

var slotPool = sync.Pool{New: func() any { return &keySlots{slots: make(chan struct{}, MaxInFlightPerKey)} }}

var errTooManyInFlight = &apiError{http.StatusTooManyRequests, errorBody{
	"Too many concurrent requests", CodeRateLimitExceeded,
	"This API key has too many GraphQL or bulk requests running; wait for one to finish"}}

// acquire takes a place for a request of key, waiting for one while the
// key has MaxInFlightPerKey running, or answers 429 (with Retry-After: 1)
// when none frees in time or the request is canceled. The caller calls
// release with the place when the request is done.
func (f *inflight) acquire(w http.ResponseWriter, r *http.Request, key auth.Key) (place *keySlots, ok bool) {
	id := key.HexHash()
	f.mu.Lock()
	if f.m == nil {
		f.m = make(map[string]*keySlots)
	}
	ks := f.m[id]
	if ks == nil {
		ks = slotPool.Get().(*keySlots)
		ks.id = id
		f.m[id] = ks
	}
	ks.users++
	f.mu.Unlock()

	select {
	case ks.slots <- struct{}{}:
	default:
		wait := f.wait
		if wait == 0 {
			wait = inFlightWait
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case ks.slots <- struct{}{}:
		case <-t.C:
			f.leave(ks)
			w.Header()["Retry-After"] = intValue(1)
			writeError(w, errTooManyInFlight)
			return nil, false
		case <-r.Context().Done():
			f.leave(ks)
			writeError(w, errTooManyInFlight)
			return nil, false
		}
	}
	return ks, true
}

// release gives back a place acquire took.
func (f *inflight) release(ks *keySlots) {
	<-ks.slots
	f.leave(ks)
}

// leave drops a user of ks, and ks once it has none: its slots are all
// free then.
func (f *inflight) leave(ks *keySlots) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ks.users--; ks.users == 0 {
		delete(f.m, ks.id)
		ks.id = ""
		slotPool.Put(ks)
	}
}
