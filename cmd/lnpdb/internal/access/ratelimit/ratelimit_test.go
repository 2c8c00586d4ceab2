package ratelimit

import (
	"context"
	"fmt"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testclock"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMemoryLimiterConcurrent(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	l := NewMemoryLimiter(time.Minute, func() time.Time { return now })
	const workers, each, limit = 8, 500, 1000
	var mu sync.Mutex
	allowed := map[string]int{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				// Every request on the hot key, every tenth also on a cold one.
				keys := []string{"hot"}
				if i%10 == 0 {
					keys = append(keys, fmt.Sprintf("cold-%d", w))
				}
				for _, key := range keys {
					d, err := l.Allow(context.Background(), key, limit)
					if err == nil && d.Allowed {
						mu.Lock()
						allowed[key]++
						mu.Unlock()
					}
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, limit, allowed["hot"], "exactly the limit, however the requests interleave")
	for w := range workers {
		assert.Equal(t, each/10, allowed[fmt.Sprintf("cold-%d", w)])
	}

	d, err := l.Allow(context.Background(), "solo", 2)
	require.NoError(t, err)
	assert.Equal(t, Decision{Allowed: true, Limit: 2, Remaining: 1, Reset: time.Minute}, d)
	d, _ = l.Allow(context.Background(), "hot", limit)
	assert.Equal(t, Decision{Allowed: false, Limit: limit, Remaining: 0, Reset: time.Minute}, d)
}

// TestMemoryLimiterMovingClock: on a clock that moves, as time.Now does,
// requests racing for a key's new window are still counted exactly. The
// clock sleeps after it is read, so that a request that read it may be
// overtaken by one that read it later, as on a busy machine.
func TestMemoryLimiterMovingClock(t *testing.T) {
	for range 5 {
		l := NewMemoryLimiter(time.Minute, func() time.Time {
			now := time.Now()
			time.Sleep(time.Microsecond)
			return now
		})
		const workers, each, limit = 12, 50, 100
		var allowed atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for range each {
					if d, _ := l.Allow(context.Background(), "key", limit); d.Allowed {
						allowed.Add(1)
					}
				}
			})
		}
		wg.Wait()
		require.EqualValues(t, limit, allowed.Load(), "exactly the limit in one window")
	}
}

func TestMemoryLimiterSweeps(t *testing.T) {
	c := testclock.New(time.Unix(1_800_000_000, 0))
	l := NewMemoryLimiter(time.Second, c.Now)
	for i := range limiterShards * sweepAt * 2 {
		_, _ = l.Allow(context.Background(), strconv.Itoa(i), 1)
	}
	c.Advance(2 * time.Second)
	for i := range limiterShards * sweepAt {
		_, _ = l.Allow(context.Background(), "new"+strconv.Itoa(i), 1)
	}
	n := 0
	for i := range l.shards {
		n += len(l.shards[i].m)
	}
	assert.Less(t, n, limiterShards*sweepAt*2, "expired windows are dropped")
}

func TestCeilSeconds(t *testing.T) {
	for d, want := range map[time.Duration]int{0: 1, time.Millisecond: 1, time.Second: 1, time.Second + 1: 2, time.Minute: 60} {
		assert.Equal(t, want, CeilSeconds(d), d)
	}
}
