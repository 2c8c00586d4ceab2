package httpapi

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/format"
)

type noTable struct{}

func (noTable) DB() *format.DB { return nil }

// TestHealthz: liveness answers without a key and asks nothing of the
// stores; only GET (and HEAD) is allowed.
func TestHealthz(t *testing.T) {
	down := func(c *Config) {
		c.Ready = []Check{{"redis", func(context.Context) error { return errors.New("down") }}}
	}
	s := newServer(t, down)
	r := s.do(t, "GET", "/healthz", "")
	require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
	assert.JSONEq(t, `{"status":"ok"}`, string(r.body))
	r = s.do(t, "POST", "/healthz", "")
	assert.Equal(t, http.StatusMethodNotAllowed, r.StatusCode)
}

// TestReadyz: 200 with every check named when the table and the stores
// answer; 503 naming the store that does not; exclude leaves a check out of
// the verdict; an unknown name is a warning; no table is not ready.
func TestReadyz(t *testing.T) {
	var redisErr error
	checks := func(c *Config) {
		c.Ready = []Check{
			{"accounts", func(context.Context) error { return nil }},
			{"redis", func(context.Context) error { return redisErr }},
		}
	}
	s := newServer(t, checks)
	r := s.do(t, "GET", "/readyz", "")
	require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
	assert.JSONEq(t, `{"status":"ready","checks":[{"name":"table","ok":true},{"name":"accounts","ok":true},{"name":"redis","ok":true}]}`, string(r.body))

	redisErr = errors.New("the Redis server 127.0.0.1:1/0 does not answer")
	r = s.do(t, "GET", "/readyz", "")
	require.Equal(t, http.StatusServiceUnavailable, r.StatusCode, "%s", r.body)
	assert.JSONEq(t, `{"status":"not ready","checks":[{"name":"table","ok":true},{"name":"accounts","ok":true},{"name":"redis","ok":false,"error":"the Redis server 127.0.0.1:1/0 does not answer"}]}`, string(r.body))

	r = s.do(t, "GET", "/readyz?exclude=redis", "")
	require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
	assert.Contains(t, string(r.body), `{"name":"redis","ok":false,"excluded":true,"error":`)

	// As Kubernetes' own /readyz: a check this server does not run is
	// no error, but named in the body.
	redisErr = nil
	s2 := newServer(t, func(c *Config) { c.Ready = []Check{{"accounts", func(context.Context) error { return nil }}} })
	r = s2.do(t, "GET", "/readyz?exclude=redis", "")
	require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
	assert.JSONEq(t, `{"status":"ready","checks":[{"name":"table","ok":true},{"name":"accounts","ok":true}],"warnings":["exclude=\"redis\" names no check this server runs"]}`, string(r.body))

	s = newServer(t, func(c *Config) { c.Tables = noTable{} })
	r = s.do(t, "GET", "/readyz", "")
	assert.Equal(t, http.StatusServiceUnavailable, r.StatusCode, "%s", r.body)
	assert.JSONEq(t, `{"status":"not ready","checks":[{"name":"table","ok":false,"error":"no table is open"}]}`, string(r.body))
	r = s.do(t, "GET", "/healthz", "")
	assert.Equal(t, http.StatusOK, r.StatusCode, "alive without a table")
}
