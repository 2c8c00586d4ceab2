package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testpg"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// readyz is GET /readyz's status and checks, by name.
func readyz(t *testing.T, base, query string) (int, map[string]bool, string) {
	t.Helper()
	code, body := call(t, "GET", base+"/readyz"+query, "", "")
	var r struct {
		Checks []struct {
			Name string `json:"name"`
			OK   bool   `json:"ok"`
		} `json:"checks"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &r), body)
	checks := map[string]bool{}
	for _, c := range r.Checks {
		checks[c.Name] = c.OK
	}
	return code, checks, body
}

// TestServeHealthAndIdentity: the zero-flag server answers /healthz and
// /readyz without a key, says which build it is in /api/v1/status and in
// lnpdb_build_info, as lnpdb version does.
func TestServeHealthAndIdentity(t *testing.T) {
	s := startServe(t, "--addr", "127.0.0.1:0")
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)

	code, body := call(t, "GET", base+"/healthz", "", "")
	assert.Equal(t, http.StatusOK, code, body)
	code, checks, body := readyz(t, base, "")
	assert.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, map[string]bool{"table": true, "accounts": true}, checks, "the demo bills to an accounts store")

	code, body = call(t, "GET", base+"/api/v1/status", "", "")
	require.Equal(t, http.StatusOK, code, body)
	var st struct {
		Server struct {
			Version     string `json:"version"`
			GoVersion   string `json:"go_version"`
			TableFormat int    `json:"table_format"`
		} `json:"server"`
		Table struct {
			Version int `json:"version"`
		} `json:"table"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &st))
	assert.NotEmpty(t, st.Server.Version)
	assert.Equal(t, runtime.Version(), st.Server.GoVersion)
	assert.Equal(t, format.Version, st.Server.TableFormat)
	assert.Equal(t, format.Version, st.Table.Version)

	_, metrics := call(t, "GET", base+"/metrics", "", "")
	assert.Regexp(t, `lnpdb_build_info\{goversion="`+runtime.Version()+`",revision="[^"]*",table_format="`+fmt.Sprint(format.Version)+`",version="[^"]+"\} 1\n`, metrics)

	code, out, errs := runCmd(t, "version")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "lnpdb "+st.Server.Version+"\n")
	assert.Contains(t, out, "go "+runtime.Version()+"\n")
	assert.Contains(t, out, fmt.Sprintf("table format %d\n", format.Version))
	code, out2, _ := runCmd(t, "--version")
	assert.Equal(t, 0, code)
	assert.Equal(t, out, out2)
}

// TestServeReadyzUnreachableRedis: with --redis naming an address where
// nothing answers, the server serves (local limits) but is not ready, and
// names Redis; a probe that excludes redis sees it ready.
func TestServeReadyzUnreachableRedis(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := closed.Addr().String()
	require.NoError(t, closed.Close()) // nothing listens there now
	table := testdb.Build(t, lnpdb.Sample())
	s := startServe(t, "--db", table, "--dev-key", "--addr", "127.0.0.1:0", "--redis", "redis://"+addr+"/0", "--redis-timeout", "200ms")
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	code, checks, body := readyz(t, base, "")
	assert.Equal(t, http.StatusServiceUnavailable, code, body)
	assert.Equal(t, map[string]bool{"table": true, "redis": false}, checks)
	assert.Contains(t, body, addr)
	code, _, body = readyz(t, base, "?exclude=redis")
	assert.Equal(t, http.StatusOK, code, body)
	code, _ = call(t, "GET", base+"/healthz", "", "")
	assert.Equal(t, http.StatusOK, code, "alive all the same")
}

// TestServeReadyzStoppedPostgres: the accounts store and the update log in
// a real PostgreSQL: ready while it runs, not ready (naming both) once it
// is stopped, ready again once it is back.
func TestServeReadyzStoppedPostgres(t *testing.T) {
	pg := testpg.NewServer(t)
	table := testdb.Build(t, lnpdb.Sample())
	admins := filepath.Join(t.TempDir(), "admins")
	mustRun(t, "key", "new", "--keys", admins)
	s := startServe(t, "--db", table, "--addr", "127.0.0.1:0", "--accounts", pg.DSN(), "--updates-log", pg.DSN(), "--admin-keys", admins)
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	code, checks, body := readyz(t, base, "")
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, map[string]bool{"table": true, "accounts": true, "update_log": true}, checks)

	pg.Stop(t)
	require.Eventually(t, func() bool {
		code, checks, _ := readyz(t, base, "")
		return code == http.StatusServiceUnavailable && !checks["accounts"] && !checks["update_log"]
	}, 20*time.Second, 100*time.Millisecond, "not ready, naming both stores, once PostgreSQL stops")

	pg.Start(t)
	require.Eventually(t, func() bool {
		code, _, _ := readyz(t, base, "")
		return code == http.StatusOK
	}, 30*time.Second, 200*time.Millisecond, "ready again once PostgreSQL is back")
}
