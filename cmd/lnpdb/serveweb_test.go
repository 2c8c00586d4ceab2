package main

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/webui"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// TestServeWebUI: serve mounts the web interface beside the API — the
// customer's sign-in with an accounts store, the console's with admin
// keys — and --console=false leaves the API alone.
func TestServeWebUI(t *testing.T) {
	page := func(base, path string) (int, string, http.Header) {
		t.Helper()
		res, err := http.Get(base + path)
		require.NoError(t, err)
		defer res.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(res.Body)
		return res.StatusCode, b.String(), res.Header
	}

	// The demo bills a demo account: its key signs in at /account.
	s := startServe(t, "--addr", "127.0.0.1:0", "--access-log=false")
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	key := s.await(t, &s.stdout, `development API key[^:]*: (lnp_[a-z2-7]{32})`)
	code, body, h := page(base, webui.AccountSignIn)
	assert.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, webui.CSP, h.Get("Content-Security-Policy"))
	assert.Contains(t, body, `name="key"`)
	code, _, _ = page(base, webui.ConsoleSignIn)
	assert.Equal(t, http.StatusNotFound, code, "no admin keys: no console")
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.PostForm(base+webui.AccountSignIn, url.Values{"key": {key}})
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusSeeOther, res.StatusCode)
	assert.Equal(t, webui.AccountHome, res.Header.Get("Location"))
	require.Len(t, res.Cookies(), 1)
	assert.True(t, res.Cookies()[0].HttpOnly)
	code, body, _ = page(base, "/api/v1/status")
	assert.Equal(t, http.StatusOK, code, "the API is served beside it: %s", body)
	require.Equal(t, 0, s.stop(t))

	// Keys files: the console alone.
	table := testdb.Build(t, lnpdb.Sample())
	dir := t.TempDir()
	keys, admins := filepath.Join(dir, "keys"), filepath.Join(dir, "admin-keys")
	newKey := func(file string) string {
		var out, errb bytes.Buffer
		require.Equal(t, 0, run(context.Background(), &env{stdout: &out, stderr: &errb}, []string{"key", "new", "--keys", file}), errb.String())
		return strings.TrimSpace(out.String())
	}
	lookupKey, adminKey := newKey(keys), newKey(admins)
	s = startServe(t, "--db", table, "--keys", keys, "--admin-keys", admins, "--addr", "127.0.0.1:0", "--access-log=false")
	base = s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	code, _, _ = page(base, webui.AccountSignIn)
	assert.Equal(t, http.StatusNotFound, code, "no accounts: no /account")
	code, body, _ = page(base, webui.ConsoleSignIn)
	assert.Equal(t, http.StatusOK, code, body)
	for k, want := range map[string]int{lookupKey: http.StatusUnauthorized, adminKey: http.StatusSeeOther} {
		res, err := noRedirect.PostForm(base+webui.ConsoleSignIn, url.Values{"key": {k}})
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, want, res.StatusCode)
	}
	require.Equal(t, 0, s.stop(t))

	s = startServe(t, "--db", table, "--keys", keys, "--admin-keys", admins, "--console=false", "--addr", "127.0.0.1:0", "--access-log=false")
	base = s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	code, body, h = page(base, webui.ConsoleSignIn)
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, "application/json", h.Get("Content-Type"), "the API's 404: %s", body)
	assert.Empty(t, h.Get("Content-Security-Policy"))
}
