package healthcheck_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/clitest"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHealthcheck: exit 0 only for a 200 whose status is "ok"; anything
// else, an unreachable server included, is exit 1 with the reason.
func TestHealthcheck(t *testing.T) {
	var code int
	var body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/api/v1/status", r.URL.Path)
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	url := srv.URL + "/api/v1/status"

	code, body = http.StatusOK, `{"status":"ok","table":{"version":3}}`
	got, out, errs := clitest.Run(t, "healthcheck", url)
	require.Equal(t, 0, got, errs)
	assert.Equal(t, url+": ok\n", out)

	for _, c := range []struct {
		code int
		body string
		want string
	}{
		{http.StatusServiceUnavailable, `{"status":"ok"}`, "503 Service Unavailable"},
		{http.StatusOK, `{"status":"no table"}`, `status "no table", want "ok"`},
		{http.StatusOK, `not json`, `status "", want "ok"`},
	} {
		code, body = c.code, c.body
		got, _, errs := clitest.Run(t, "healthcheck", url)
		assert.Equal(t, 1, got)
		assert.Contains(t, errs, c.want)
	}

	srv.Close()
	got, _, errs = clitest.Run(t, "healthcheck", "--timeout", "2s", url)
	assert.Equal(t, 1, got)
	assert.Contains(t, errs, "connection refused")

	got, _, _ = clitest.Run(t, "healthcheck", url, url)
	assert.Equal(t, 2, got)
}

// TestHealthcheckFollowsAddr: without a URL, healthcheck asks the server
// serve's LNPDB_ADDR puts it on, a wildcard host on loopback.
func TestHealthcheckFollowsAddr(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	}))
	defer srv.Close()
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	t.Setenv("LNPDB_ADDR", "0.0.0.0:"+port)
	got, out, errs := clitest.Run(t, "healthcheck")
	require.Equal(t, 0, got, errs)
	assert.Equal(t, "http://127.0.0.1:"+port+"/api/v1/status: ok\n", out)

	assert.Equal(t, "http://[::1]:8080/api/v1/status", cliutil.HealthURL("[::]:8080"))
	assert.Equal(t, "http://127.0.0.1:8080/api/v1/status", cliutil.HealthURL(":8080"))
	assert.Equal(t, "http://10.0.0.5:9000/api/v1/status", cliutil.HealthURL("10.0.0.5:9000"))
}
