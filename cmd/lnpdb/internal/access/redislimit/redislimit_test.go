package redislimit

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/ratelimit"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testio"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testredis"
)

// bothModes runs test with decisions pipelined and not.
func bothModes(t *testing.T, test func(*testing.T, bool)) {
	t.Run("pipelined", func(t *testing.T) { test(t, true) })
	t.Run("unpipelined", func(t *testing.T) { test(t, false) })
}

// mode sets Config.NoPipeline for pipeline.
func mode(pipeline bool, then func(*Config)) func(*Config) {
	return func(c *Config) {
		c.NoPipeline = !pipeline
		if then != nil {
			then(c)
		}
	}
}

func newLimiter(t testing.TB, url string, mod func(*Config)) *Limiter {
	t.Helper()
	// A generous timeout: a busy test machine must not look like a Redis
	// outage (a killed Redis fails at once; TestRedisHangs sets its own).
	cfg := Config{URL: url, Window: time.Minute, ProbeEvery: 20 * time.Millisecond, Timeout: 2 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	l, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return l
}

// TestSameDecisionsAsMemory runs one random sequence of requests (limits,
// sizes, keys) through the Redis limiter and the in-memory one: every
// decision is the same, but for Reset, which Redis counts down in its own
// clock.
func TestSameDecisionsAsMemory(t *testing.T) {
	srv := testredis.Start(t)
	l := newLimiter(t, srv.URL(), nil)
	now := time.Unix(1_800_000_000, 0)
	mem := ratelimit.NewMemoryLimiter(time.Minute, func() time.Time { return now })
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		key := fmt.Sprintf("k%d", rng.IntN(20))
		limit := []int{0, 1, 5, 50}[rng.IntN(4)]
		n := rng.IntN(7) // 0 counts as 1
		got, err := l.AllowN(ctx, key, limit, n)
		require.NoError(t, err)
		want, _ := mem.AllowN(ctx, key, limit, n)
		assert.Equal(t, want.Allowed, got.Allowed, "request %d: %s limit %d n %d", i, key, limit, n)
		assert.Equal(t, want.Limit, got.Limit)
		assert.Equal(t, want.Remaining, got.Remaining, "request %d", i)
		assert.True(t, got.Reset > 0 && got.Reset <= time.Minute, "reset %v", got.Reset)
	}
	assert.Zero(t, l.Status().Fallbacks)
	assert.Equal(t, time.Minute, l.Window())
}

func TestWindow(t *testing.T) {
	srv := testredis.Start(t)
	// A window no stall of a busy machine outlasts between two requests;
	// its end is brought forward in Redis below, not waited for.
	const window = time.Minute
	l := newLimiter(t, srv.URL(), func(c *Config) { c.Window = window })
	ctx := context.Background()

	// A first request refused whole still starts the window.
	d, err := l.AllowN(ctx, "a", 5, 6)
	require.NoError(t, err)
	assert.Equal(t, ratelimit.Decision{Allowed: false, Limit: 5, Remaining: 5, Reset: window}, d)
	d, _ = l.AllowN(ctx, "a", 5, 3)
	assert.True(t, d.Allowed)
	assert.Equal(t, 2, d.Remaining)
	assert.LessOrEqual(t, d.Reset, window)
	d, _ = l.AllowN(ctx, "a", 5, 3)
	assert.False(t, d.Allowed, "3 of 2 left: refused whole")
	assert.Equal(t, 2, d.Remaining, "and nothing counted")
	d, _ = l.AllowN(ctx, "a", 5, 2)
	assert.True(t, d.Allowed)
	assert.Equal(t, 0, d.Remaining)
	d, _ = l.AllowN(ctx, "a", 5, 1)
	assert.False(t, d.Allowed)

	// The counter expires with the window.
	counter := DefaultPrefix + "a"
	ttl, err := l.client.PTTL(ctx, counter).Result()
	require.NoError(t, err)
	assert.True(t, ttl > 0 && ttl <= window, "the counter expires in %v", ttl)

	// After Reset (the counter expired), a new window with the whole budget.
	require.NoError(t, l.client.PExpire(ctx, counter, time.Millisecond).Err())
	require.Eventually(t, func() bool {
		n, err := l.client.Exists(ctx, counter).Result()
		return err == nil && n == 0
	}, time.Minute, time.Millisecond, "the counter expires")
	d, _ = l.AllowN(ctx, "a", 5, 5)
	assert.Equal(t, ratelimit.Decision{Allowed: true, Limit: 5, Remaining: 0, Reset: window}, d)
}

// TestConcurrent: many goroutines on one key never get more than the
// limit, and with single lookups exactly the limit.
func TestConcurrent(t *testing.T) { bothModes(t, testConcurrent) }

func testConcurrent(t *testing.T, pipeline bool) {
	srv := testredis.Start(t)
	l := newLimiter(t, srv.URL(), mode(pipeline, nil))
	const workers, each, limit = 16, 150, 1000
	var single, sized atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				d, err := l.AllowN(context.Background(), "hot", limit, 1)
				if assert.NoError(t, err) && d.Allowed {
					single.Add(1)
				}
				n := 1 + (w+i)%5
				if d, _ := l.AllowN(context.Background(), "sized", limit, n); d.Allowed {
					sized.Add(int64(n))
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int64(limit), single.Load(), "exactly the limit, however the requests interleave")
	assert.LessOrEqual(t, sized.Load(), int64(limit))
	assert.Greater(t, sized.Load(), int64(limit-5), "refused only what did not fit")
	assert.Zero(t, l.Status().Fallbacks)
}

// allowedInTurn asks a and b in turn, n times in all, for one request on
// key with limit, and returns how many were allowed.
func allowedInTurn(a, b *Limiter, n int, key string, limit int) int {
	allowed := 0
	for i := range n {
		l := a
		if i%2 == 1 {
			l = b
		}
		if d, _ := l.AllowN(context.Background(), key, limit, 1); d.Allowed {
			allowed++
		}
	}
	return allowed
}

// TestTwoNodesShareOneBudget: two limiters (two nodes) on one Redis share a
// key's budget; another prefix is another budget.
func TestTwoNodesShareOneBudget(t *testing.T) { bothModes(t, testTwoNodesShareOneBudget) }

func testTwoNodesShareOneBudget(t *testing.T, pipeline bool) {
	srv := testredis.Start(t)
	a := newLimiter(t, srv.URL(), mode(pipeline, nil))
	b := newLimiter(t, srv.URL(), mode(pipeline, nil))
	other := newLimiter(t, srv.URL(), mode(pipeline, func(c *Config) { c.Prefix = "other:" }))
	assert.Equal(t, 100, allowedInTurn(a, b, 300, "k", 100))
	d, _ := a.AllowN(context.Background(), "k", 100, 1)
	assert.Equal(t, 0, d.Remaining)
	d, _ = other.AllowN(context.Background(), "k", 100, 1)
	assert.True(t, d.Allowed)
	assert.Equal(t, 99, d.Remaining)
}

// logCounter counts the log lines that contain a word.
type logCounter struct{ testio.Buffer }

func (c *logCounter) count(s string) int { return strings.Count(c.String(), s) }

// TestRedisStoppedMidRun stops Redis while two nodes decide without pause:
// every request keeps its answer (no error, none stuck), the nodes fall
// back to local limits (health and metrics say so, one log line each), and
// once Redis is back they share the count again, without a restart.
func TestRedisStoppedMidRun(t *testing.T) { bothModes(t, testRedisStoppedMidRun) }

func testRedisStoppedMidRun(t *testing.T, pipeline bool) {
	srv := testredis.Start(t)
	logs := new(logCounter)
	reg := prometheus.NewRegistry()
	// A stopped Redis refuses at once: a decision that waited for this
	// timeout would show as the slowest, far above any stall of a busy
	// machine.
	const timeout = 10 * time.Second
	a := newLimiter(t, srv.URL(), mode(pipeline, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
		c.Registerer = reg
		c.Timeout = timeout
	}))
	b := newLimiter(t, srv.URL(), mode(pipeline, func(c *Config) { c.Timeout = timeout }))

	var stop atomic.Bool
	var decided, failed atomic.Int64
	var slowest atomic.Int64
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			l := a
			if w%2 == 1 {
				l = b
			}
			for i := 0; !stop.Load(); i++ {
				start := time.Now()
				_, err := l.AllowN(context.Background(), fmt.Sprintf("busy%d", i%50), 1_000_000, 1)
				if took := int64(time.Since(start)); took > slowest.Load() {
					slowest.Store(took)
				}
				if err != nil {
					failed.Add(1)
				}
				decided.Add(1)
			}
		})
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		require.Eventually(t, cond, time.Minute, 5*time.Millisecond, "waiting for %s", what)
	}
	upGauge := func() float64 { return testutil.ToFloat64(a.upGauge) }
	fallbacks := func() float64 { return testutil.ToFloat64(a.fallbackCount) }

	waitFor("decisions", func() bool { return decided.Load() > 500 })
	require.True(t, a.Status().OK)
	require.Equal(t, 1.0, upGauge())
	require.Zero(t, fallbacks())

	srv.Stop()
	waitFor("node a to notice", func() bool { return !a.Status().OK })
	waitFor("node b to notice", func() bool { return !b.Status().OK })
	// Node a's own decisions: its workers may be slower than b's.
	waitFor("local decisions", func() bool { return fallbacks() > 1000 })
	st := a.Status()
	assert.NotEmpty(t, st.LastError)
	assert.Equal(t, 0.0, upGauge())
	assert.Greater(t, fallbacks(), 1000.0)

	// Down, each node enforces the limit on its own: N × the limit.
	allowed := 0
	for i := range 30 {
		l := a
		if i%2 == 1 {
			l = b
		}
		if d, err := l.AllowN(context.Background(), "outage", 10, 1); assert.NoError(t, err) && d.Allowed {
			allowed++
		}
	}
	assert.Equal(t, 20, allowed, "10 per node while Redis is away")

	srv.Restart()
	waitFor("node a to recover", func() bool { return a.Status().OK })
	waitFor("node b to recover", func() bool { return b.Status().OK })
	assert.Equal(t, 1.0, upGauge())
	// A request that found Redis down before the probe put it back may
	// still decide locally (at most one per worker); no other does.
	recovered, fellBack := decided.Load(), fallbacks()
	waitFor("decisions in Redis", func() bool { return decided.Load() > recovered+1000 })
	assert.LessOrEqual(t, fallbacks()-fellBack, 8.0, "no local decisions once Redis is back")

	// Shared again: two nodes, one budget.
	assert.Equal(t, 10, allowedInTurn(a, b, 30, "after", 10), "one budget across the nodes again")

	stop.Store(true)
	wg.Wait()
	assert.Equal(t, uint64(fallbacks()), a.Status().Fallbacks, "status and metric count the same")
	assert.Zero(t, failed.Load(), "every request got a decision")
	assert.Less(t, time.Duration(slowest.Load()), timeout, "no request waited for the timeout on the dead Redis")
	assert.Equal(t, 1, logs.count("unreachable"), "one line when it went down")
	assert.Equal(t, 1, logs.count("back"), "one when it came back")
	assert.Equal(t, 2, logs.count("\n"), "and no other line")
}

// TestRedisHangs: a Redis that stops answering (SIGSTOP) without closing
// its connections costs a decision at most the timeout; the node then
// decides locally without waiting, and shares the count again once Redis
// goes on.
func TestRedisHangs(t *testing.T) { bothModes(t, testRedisHangs) }

func testRedisHangs(t *testing.T, pipeline bool) {
	srv := testredis.Start(t)
	// Long enough that a busy machine's stall is not taken for a hung
	// Redis (50 ms was not); only the one decision sent to the stopped
	// Redis waits it out.
	const timeout = time.Second
	l := newLimiter(t, srv.URL(), mode(pipeline, func(c *Config) { c.Timeout = timeout }))
	ctx := context.Background()
	waitUp(t, l)
	d, err := l.AllowN(ctx, "k", 100, 1)
	require.NoError(t, err)
	require.Equal(t, 99, d.Remaining)
	require.True(t, l.Status().OK)
	require.Zero(t, l.Status().Fallbacks)

	srv.Pause()
	defer srv.Resume()
	start := time.Now()
	_, err = l.AllowN(ctx, "k", 100, 1)
	first := time.Since(start)
	require.NoError(t, err)
	st := l.Status()
	assert.False(t, st.OK, "the decision that timed out took Redis off the request path")
	assert.Contains(t, st.LastError, "timeout")
	// The go-redis defaults would have retried it (4 attempts of the
	// timeout at least); one attempt is the timeout and a busy machine's
	// delay.
	assert.Less(t, first, 3*timeout, "one attempt, not retried")
	// The next decisions do not go to Redis at all: none fails there (a
	// probe may, about one per timeout), and each is taken locally.
	errs := testutil.ToFloat64(l.errorCount)
	for range 199 {
		_, err := l.AllowN(ctx, "k", 100, 1)
		require.NoError(t, err)
	}
	assert.LessOrEqual(t, testutil.ToFloat64(l.errorCount)-errs, 2.0, "no decision sent to the stopped Redis")
	assert.Equal(t, uint64(200), l.Status().Fallbacks)

	srv.Resume()
	waitUp(t, l)
	// The count kept in Redis goes on. The one decision that timed out
	// was sent before Redis stopped reading: Redis may still have run it
	// on resuming, and counted a lookup that the node decided locally
	// (an over-count, never an under-count).
	d, _ = l.AllowN(ctx, "k", 100, 1)
	assert.True(t, d.Remaining == 98 || d.Remaining == 97, "remaining %d", d.Remaining)
}

// waitUp waits until l takes its decisions in Redis (its probe found
// Redis answering).
func waitUp(t *testing.T, l *Limiter) {
	t.Helper()
	require.Eventually(t, func() bool { return l.Status().OK }, time.Minute, 5*time.Millisecond, "Redis not back")
}

// TestStartsWithoutRedis: a Redis that does not answer at start is not an
// error; the node decides locally until Redis comes up.
func TestStartsWithoutRedis(t *testing.T) {
	srv := testredis.Start(t)
	srv.Stop()
	l := newLimiter(t, srv.URL(), nil)
	st := l.Status()
	assert.False(t, st.OK)
	assert.NotEmpty(t, st.LastError)
	assert.Equal(t, srv.Addr()+"/0", st.Addr)
	d, err := l.AllowN(context.Background(), "k", 1, 1)
	require.NoError(t, err)
	assert.True(t, d.Allowed)
	d, _ = l.AllowN(context.Background(), "k", 1, 1)
	assert.False(t, d.Allowed, "the local limiter enforces the limit")
	assert.Equal(t, uint64(2), l.Status().Fallbacks)

	srv.Restart()
	waitUp(t, l)
	d, _ = l.AllowN(context.Background(), "k", 1, 1)
	assert.True(t, d.Allowed, "a new count in Redis")
}

func TestNewRefuses(t *testing.T) {
	for _, u := range []string{"", "http://localhost:6379", "redis://localhost:6379/x", "redis://:secret@localhost:6379/?nope=1"} {
		_, err := New(Config{URL: u})
		if assert.Error(t, err, u) {
			assert.NotContains(t, err.Error(), "secret", "no password in errors")
		}
	}
	_, err := New(Config{URL: "redis://localhost:1", Window: time.Microsecond})
	assert.Error(t, err)
}

// BenchmarkAllowN is the cost of one decision in Redis over loopback (one
// round trip), pipelined and not, one at a time and 8 per CPU in flight (as on a
// busy server), beside the in-memory limiter's, measured in the same run.
func BenchmarkAllowN(b *testing.B) {
	srv := testredis.Start(b)
	ctx := context.Background()
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("%064x", i)
	}
	run := func(b *testing.B, l ratelimit.Limiter) {
		b.Run("serial", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := l.AllowN(ctx, keys[i%len(keys)], 1<<30, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(8) // 8 requests in flight per CPU, as on a busy server
			var next atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				i := int(next.Add(1)) * 97
				for pb.Next() {
					if _, err := l.AllowN(ctx, keys[i%len(keys)], 1<<30, 1); err != nil {
						b.Error(err)
						return
					}
					i++
				}
			})
		})
	}
	for _, pipeline := range []bool{true, false} {
		name := "redis-pipelined"
		if !pipeline {
			name = "redis-unpipelined"
		}
		b.Run(name, func(b *testing.B) {
			l := newLimiter(b, srv.URL(), mode(pipeline, nil))
			run(b, l)
			if l.Status().Fallbacks != 0 {
				b.Fatal("decisions were taken locally")
			}
		})
	}
	b.Run("memory", func(b *testing.B) { run(b, ratelimit.NewMemoryLimiter(time.Minute, nil)) })
}
