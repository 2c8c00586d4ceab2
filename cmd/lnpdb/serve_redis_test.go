package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testredis"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// fanOut sends total LRN lookups with key, spread round-robin over the
// nodes from 12 goroutines at once, and returns how many each node answered
// 200. Any answer but 200 or 429, or no answer, fails the test.
func fanOut(t *testing.T, nodes []*serveProcess, key string, total int) []int {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	var mu sync.Mutex
	ok := make([]int, len(nodes))
	var wg sync.WaitGroup
	const workers = 12
	for g := range workers {
		wg.Go(func() {
			for i := g; i < total; i += workers {
				n := i % len(nodes)
				req, _ := http.NewRequest("POST", nodes[n].base+"/api/v1/lrn", strings.NewReader(`{"phone_number":"12025550123"}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+key)
				res, err := client.Do(req)
				if !assert.NoError(t, err, "node %d answered nothing", n) {
					return
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				switch res.StatusCode {
				case http.StatusOK:
					mu.Lock()
					ok[n]++
					mu.Unlock()
				case http.StatusTooManyRequests:
				default:
					t.Errorf("node %d: status %d: %s", n, res.StatusCode, b)
				}
			}
		})
	}
	wg.Wait()
	return ok
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

// redisStatus returns a node's /api/v1/status "redis" object.
func redisStatus(t *testing.T, p *serveProcess) map[string]any {
	t.Helper()
	code, body := call(t, "GET", p.base+"/api/v1/status", "", "")
	require.Equal(t, http.StatusOK, code, body)
	var st struct {
		Redis map[string]any `json:"redis"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &st))
	require.NotNil(t, st.Redis, body)
	return st.Redis
}

// metric returns the value of an unlabelled metric on a node's /metrics.
func metric(t *testing.T, p *serveProcess, name string) float64 {
	t.Helper()
	code, body := call(t, "GET", p.base+"/metrics", "", "")
	require.Equal(t, http.StatusOK, code)
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindStringSubmatch(body)
	require.NotNil(t, m, "no %s in /metrics", name)
	v, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	return v
}

// TestServeProcessesShareOneRateLimit: three lnpdb serve processes on one
// Redis give a key limited to 100 lookups a minute 100 lookups in all, fanned
// over the three at once. Redis stopped: every lookup is still answered,
// each node enforcing the limit on its own (3 × 100, the documented
// tolerance), and status and metrics say so; Redis back: one budget again,
// without a restart.
func TestServeProcessesShareOneRateLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts lnpdb serve processes")
	}
	srv := testredis.Start(t)
	keys := filepath.Join(t.TempDir(), "keys")
	key := strings.TrimSpace(mustRun(t, "key", "new", "--keys", keys, "--rpm", "100"))
	const limit, prefix = 100, "lnpdbtest:"

	// Each node serves its own copy of the table, its writer.
	args := func() []string {
		return []string{"--db", testdb.Build(t, lnpdb.Sample()), "--keys", keys, "--redis", srv.URL(), "--redis-prefix", prefix, "--redis-timeout", "2s"}
	}
	nodes := []*serveProcess{startServeProcess(t, args()...), startServeProcess(t, args()...), startServeProcess(t, args()...)}
	for _, p := range nodes {
		assert.Equal(t, true, redisStatus(t, p)["ok"])
		assert.Equal(t, 1.0, metric(t, p, "lnpdb_ratelimit_redis_up"))
	}

	ok := fanOut(t, nodes, key, 600)
	t.Logf("Redis up: 200s per node %v", ok)
	assert.Equal(t, limit, sum(ok), "the limit across three nodes, no tolerance while Redis is up")
	for i, n := range ok {
		assert.Positive(t, n, "node %d answered some", i)
	}

	// Redis holds a counter per key id (the key's SHA-256), never the key.
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rc.Close()
	names, err := rc.Keys(context.Background(), "*").Result()
	require.NoError(t, err)
	h := sha256.Sum256([]byte(key))
	assert.ElementsMatch(t, []string{prefix + hex.EncodeToString(h[:]), prefix + "probe"}, names)
	for _, n := range names {
		assert.NotContains(t, n, key)
	}
	v, err := rc.Get(context.Background(), prefix+hex.EncodeToString(h[:])).Int()
	require.NoError(t, err)
	assert.Equal(t, limit, v)

	srv.Stop()
	ok = fanOut(t, nodes, key, 600)
	t.Logf("Redis down: 200s per node %v", ok)
	assert.Equal(t, []int{limit, limit, limit}, ok, "each node enforces the limit on its own: 3 × 100")
	for _, p := range nodes {
		st := redisStatus(t, p)
		assert.Equal(t, false, st["ok"])
		assert.NotEmpty(t, st["last_error"])
		assert.Equal(t, 0.0, metric(t, p, "lnpdb_ratelimit_redis_up"))
		assert.GreaterOrEqual(t, metric(t, p, "lnpdb_ratelimit_redis_fallback_total"), 200.0)
	}

	srv.Restart()
	deadline := time.Now().Add(15 * time.Second)
	for _, p := range nodes {
		for redisStatus(t, p)["ok"] != true {
			require.True(t, time.Now().Before(deadline), "node %s did not find Redis back", p.base)
			time.Sleep(20 * time.Millisecond)
		}
	}
	ok = fanOut(t, nodes, key, 600)
	t.Logf("Redis back: 200s per node %v", ok)
	assert.Equal(t, limit, sum(ok), "one budget again (the restarted Redis is empty)")
	for _, p := range nodes {
		assert.Equal(t, 1.0, metric(t, p, "lnpdb_ratelimit_redis_up"))
		p.stop(t)
		logs := p.logs.String()
		assert.Equal(t, 1, strings.Count(logs, "Redis rate limiter unreachable"), "one line when it went down")
		assert.Equal(t, 1, strings.Count(logs, "Redis rate limiter back"), "one when it came back")
	}
}

func TestServeRedisFlagsRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--redis", "http://127.0.0.1:6379"}, "--redis"},
		{[]string{"--redis", "redis://:hunter2@127.0.0.1:6379/notadb"}, "--redis"},
		{[]string{"--redis", "redis://127.0.0.1:6379", "--redis-timeout", "0s"}, "--redis-timeout"},
		{[]string{"--redis", "redis://127.0.0.1:6379", "--redis-prefix", ""}, "--redis-prefix"},
	} {
		code, _, stderr := runCmd(t, append([]string{"serve"}, c.args...)...)
		assert.Equal(t, 2, code, "%v: %s", c.args, stderr)
		assert.Contains(t, stderr, c.want, "%v", c.args)
		assert.NotContains(t, stderr, "hunter2", "no password in messages")
	}
}
