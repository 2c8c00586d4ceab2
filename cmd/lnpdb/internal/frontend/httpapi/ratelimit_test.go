package httpapi

import (
	"context"
	"fmt"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/ratelimit"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRateLimit(t *testing.T) {
	s := newServer(t)
	limited := []string{"Content-Type", "application/json", "Authorization", "Bearer " + limitedKey}
	lrnBody := `{"phone_number":"12025550123"}`
	gqlBody := `{"query":"{ lookupCnam(phoneNumber: \"12025550123\") { cnam } }"}`

	// The limit is 3 for this key; REST and GraphQL draw on the same budget.
	for i, path := range []string{"/api/v1/lrn", "/graphql", "/api/v1/lrn"} {
		body := lrnBody
		if path == "/graphql" {
			body = gqlBody
		}
		r := s.do(t, http.MethodPost, path, body, limited...)
		require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
		assert.Equal(t, "3", r.Header.Get("X-RateLimit-Limit"))
		assert.Equal(t, strconv.Itoa(2-i), r.Header.Get("X-RateLimit-Remaining"))
		assert.Equal(t, "60", r.Header.Get("X-RateLimit-Reset"))
	}
	s.clock.Advance(20 * time.Second)
	for _, path := range []string{"/api/v1/lrn", "/graphql"} {
		r := s.do(t, http.MethodPost, path, lrnBody, limited...)
		require.Equal(t, http.StatusTooManyRequests, r.StatusCode, path)
		assert.Equal(t, "40", r.Header.Get("Retry-After"))
		assert.Equal(t, "3", r.Header.Get("X-RateLimit-Limit"))
		assert.Equal(t, "0", r.Header.Get("X-RateLimit-Remaining"))
		assert.Equal(t, "40", r.Header.Get("X-RateLimit-Reset"))
		m := r.json(t)
		assert.Equal(t, "Rate limit exceeded", m["error"])
		assert.Equal(t, "RATE_LIMIT_EXCEEDED", m["code"])
		assert.Equal(t, "Please wait before making another request", m["message"])
		assert.EqualValues(t, 40, m["retry_after"])
		assert.NotEmpty(t, m["details"])
		assert.ElementsMatch(t, []string{"error", "code", "message", "retry_after", "details"}, keys(m))
	}

	// Another key is unaffected.
	r := s.post(t, "/api/v1/lrn", lrnBody)
	require.Equal(t, http.StatusOK, r.StatusCode)
	assert.Equal(t, "200", r.Header.Get("X-RateLimit-Limit"))
	assert.Equal(t, "199", r.Header.Get("X-RateLimit-Remaining"))

	// A new window starts once the old one is over.
	s.clock.Advance(40 * time.Second)
	r = s.do(t, http.MethodPost, "/api/v1/lrn", lrnBody, limited...)
	require.Equal(t, http.StatusOK, r.StatusCode)
	assert.Equal(t, "2", r.Header.Get("X-RateLimit-Remaining"))
	assert.Equal(t, "60", r.Header.Get("X-RateLimit-Reset"))
}

func TestRateLimitDefault(t *testing.T) {
	s := newServer(t)
	for i := range ratelimit.DefaultLimit {
		r := s.post(t, "/api/v1/cnam", `{"phone_number":"12025550123"}`)
		require.Equal(t, http.StatusOK, r.StatusCode, "request %d", i+1)
	}
	r := s.post(t, "/api/v1/cnam", `{"phone_number":"12025550123"}`)
	require.Equal(t, http.StatusTooManyRequests, r.StatusCode)
	assert.Equal(t, "60", r.Header.Get("Retry-After"))
	// Bad requests count too: they cost the server as much.
	r = s.post(t, "/api/v1/cnam", `{`)
	assert.Equal(t, http.StatusTooManyRequests, r.StatusCode)
}

type failingLimiter struct{}

func (failingLimiter) AllowN(context.Context, string, int, int) (ratelimit.Decision, error) {
	return ratelimit.Decision{}, fmt.Errorf("redis: connection refused")
}

func TestRateLimiterFailureLetsRequestsThrough(t *testing.T) {
	s := newServer(t, func(c *Config) { c.Limiter = failingLimiter{} })
	r := s.post(t, "/api/v1/lrn", `{"phone_number":"12025550123"}`)
	assert.Equal(t, http.StatusOK, r.StatusCode)
	assert.Contains(t, s.logs.String(), "connection refused")
	assert.Contains(t, string(s.do(t, http.MethodGet, "/metrics", "").body), "lnpdb_ratelimit_errors_total 1")
}
