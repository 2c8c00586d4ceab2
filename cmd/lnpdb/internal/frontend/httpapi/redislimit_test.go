package httpapi

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/redislimit"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testredis"
)

// TestRateLimitHeadersSameWithRedis sends the same requests to a server
// limited in memory and to one limited in Redis: the status, the rate-limit
// headers and the bodies are the same, refusals included.
func TestRateLimitHeadersSameWithRedis(t *testing.T) {
	srv := testredis.Start(t)
	rl, err := redislimit.New(redislimit.Config{URL: srv.URL()})
	require.NoError(t, err)
	t.Cleanup(func() { rl.Close() })
	mem := newServer(t)
	red := newServer(t, func(c *Config) { c.Limiter = rl; c.Redis = rl.Status })

	limited := []string{"Content-Type", "application/json", "Authorization", "Bearer " + limitedKey}
	headers := []string{"X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset", "Ratelimit", "Ratelimit-Policy", "Retry-After"}
	reqs := []struct{ path, body string }{
		{"/api/v1/lrn/bulk", `{"phone_numbers":["12025550123","12025550124","12025550125","12025550126"]}`}, // 4 of a limit of 3: refused as such, counts one
		{"/api/v1/lrn", `{"phone_number":"12025550123"}`},
		{"/api/v1/lrn/bulk", `{"phone_numbers":["12025550123","12025550124"]}`}, // 2 of 1: refused whole
		{"/graphql", `{"query":"{ lookupCnam(phoneNumber: \"12025550123\") { cnam } }"}`},
		{"/api/v1/trust", `{"phone_number":"12025550123"}`},
		{"/api/v1/lrn", `{"phone_number":"12025550123"}`},
	}
	codes := []int{}
	for _, rq := range reqs {
		a := mem.do(t, http.MethodPost, rq.path, rq.body, limited...)
		b := red.do(t, http.MethodPost, rq.path, rq.body, limited...)
		require.Equal(t, a.StatusCode, b.StatusCode, rq.path)
		codes = append(codes, a.StatusCode)
		for _, h := range headers {
			assert.Equal(t, a.Header.Values(h), b.Header.Values(h), "%s %s", rq.path, h)
		}
		assert.Equal(t, a.body, b.body, rq.path)
	}
	assert.Equal(t, []int{422, 200, 429, 200, 429, 429}, codes)
	assert.True(t, rl.Status().OK)
	assert.Zero(t, rl.Status().Fallbacks)

	r := red.do(t, http.MethodGet, "/api/v1/status", "")
	require.Equal(t, http.StatusOK, r.StatusCode)
	st := r.json(t)["redis"].(map[string]any)
	assert.Equal(t, true, st["ok"])
	assert.Equal(t, srv.Addr()+"/0", st["addr"])
	_, err = time.Parse(time.RFC3339, st["last_change"].(string))
	assert.NoError(t, err)
	assert.NotContains(t, mem.do(t, http.MethodGet, "/api/v1/status", "").json(t), "redis", "absent without Redis")
}
