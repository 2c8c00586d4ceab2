// Package ratelimit owns the per-key limits of every front end: the Limiter
// interface (a fixed window of lookups per key; a request of n lookups is
// allowed whole or refused whole) and MemoryLimiter, its in-process
// implementation. The implementation shared by several nodes, over Redis,
// is internal/access/redislimit's. The headers that report a Decision are the
// front end's.
package ratelimit

import (
	"context"
	"hash/maphash"
	"sync"
	"time"
)

// Default rate limit (CONTRACT §7): requests per key per window.
const (
	DefaultLimit  = 200
	DefaultWindow = 60 * time.Second
)

// Decision is a Limiter's answer for one request.
type Decision struct {
	// Allowed reports whether the request may proceed.
	Allowed bool
	// Limit is the key's budget per window; Remaining what is left of it
	// after this request.
	Limit, Remaining int
	// Reset is the time until the current window ends.
	Reset time.Duration
}

// Limiter counts lookups per key. The in-memory [MemoryLimiter] serves one
// process; internal/access/redislimit's, over Redis, shares the counts between
// nodes.
type Limiter interface {
	// AllowN counts the n lookups of one request of keyID, whose budget is
	// limit lookups per window, and says whether the request may proceed.
	// A request whose n exceeds what is left is refused whole and counts
	// nothing. An error means the limiter could not decide; the handler
	// then lets the request through.
	AllowN(ctx context.Context, keyID string, limit, n int) (Decision, error)
}

const limiterShards = 32

// MemoryLimiter is a fixed-window Limiter kept in memory: a key's window
// starts with its first request and lasts the configured duration. It is
// safe for concurrent use; keys are spread over mutexed shards.
type MemoryLimiter struct {
	window time.Duration
	now    func() time.Time
	seed   maphash.Seed
	shards [limiterShards]limiterShard
}

type limiterShard struct {
	mu        sync.Mutex
	m         map[string]window
	lastSweep time.Time
	_         [64]byte // keep shards on separate cache lines
}

type window struct {
	start time.Time
	n     int
}

// sweepAt is the shard size above which Allow drops expired windows (at most
// once per window), so that the map does not grow with keys long unused.
const sweepAt = 1024

// NewMemoryLimiter returns a MemoryLimiter with windows of the given length
// (DefaultWindow when 0) reading the time from now (time.Now when nil).
func NewMemoryLimiter(length time.Duration, now func() time.Time) *MemoryLimiter {
	if length <= 0 {
		length = DefaultWindow
	}
	if now == nil {
		now = time.Now
	}
	l := &MemoryLimiter{window: length, now: now, seed: maphash.MakeSeed()}
	for i := range l.shards {
		l.shards[i].m = make(map[string]window)
	}
	return l
}

// Window returns the length of a window, which the RateLimit-Policy header
// states.
func (l *MemoryLimiter) Window() time.Duration { return l.window }

// Allow counts one lookup: AllowN with n = 1.
func (l *MemoryLimiter) Allow(ctx context.Context, keyID string, limit int) (Decision, error) {
	return l.AllowN(ctx, keyID, limit, 1)
}

// AllowN implements [Limiter]. It never fails. A limit below 1 allows
// nothing; n below 1 counts as 1.
func (l *MemoryLimiter) AllowN(_ context.Context, keyID string, limit, n int) (Decision, error) {
	n = max(n, 1)
	s := &l.shards[maphash.String(l.seed, keyID)%limiterShards]
	s.mu.Lock()
	// The time is read under the lock: read before it, a request that
	// waited for the lock held a time before the start of the window
	// that the request ahead of it had just begun, and started it over,
	// forgetting what it had counted (a node over Redis that went down
	// let a key through 3–6 over its limit, 12 requests at once).
	now := l.now()
	w, ok := s.m[keyID]
	if !ok || now.Sub(w.start) >= l.window || now.Before(w.start) {
		w = window{start: now}
		if !ok && len(s.m) >= sweepAt {
			s.sweep(now, l.window)
		}
	}
	allowed := w.n+n <= limit
	if allowed {
		w.n += n
	}
	s.m[keyID] = w
	s.mu.Unlock()
	return Decision{
		Allowed:   allowed,
		Limit:     limit,
		Remaining: max(limit-w.n, 0),
		Reset:     w.start.Add(l.window).Sub(now),
	}, nil
}

func (s *limiterShard) sweep(now time.Time, length time.Duration) {
	if now.Sub(s.lastSweep) < length {
		return
	}
	s.lastSweep = now
	for k, w := range s.m {
		if now.Sub(w.start) >= length {
			delete(s.m, k)
		}
	}
}

// ceilSeconds returns d in whole seconds, rounded up, at least 1: what
// X-RateLimit-Reset and Retry-After carry.
// CeilSeconds is d in whole seconds, rounded up, at least 1: what a
// Retry-After or a reset header says.
func CeilSeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	return max(s, 1)
}
