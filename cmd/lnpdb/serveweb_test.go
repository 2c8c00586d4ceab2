package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/webui"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testweb"
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
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	noRedirect.Jar = jar
	res, _, err := testweb.SignIn(noRedirect, base, webui.AccountSignIn, key)
	require.NoError(t, err)
	assert.Equal(t, http.StatusSeeOther, res.StatusCode)
	assert.Equal(t, webui.AccountHome, res.Header.Get("Location"))
	require.Len(t, res.Cookies(), 1, "the session's")
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
		res, _, err := testweb.SignIn(noRedirect, base, webui.ConsoleSignIn, k)
		require.NoError(t, err)
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

// TestServeWebUIBehindTLSProxy: behind a TLS-terminating proxy named in
// --trusted-proxies that sends X-Forwarded-Proto: https, or with
// --secure-cookies, the session cookie is Secure and named __Host-…, and a
// form from the plain-http origin of the same host is refused; the same
// header from a peer that is not a trusted proxy changes nothing.
func TestServeWebUIBehindTLSProxy(t *testing.T) {
	// The client sends X-Forwarded-Proto on every request, as the proxy
	// would, and keeps the cookies whatever their Secure flag.
	signIn := func(base, key string, hdr ...string) *http.Response {
		t.Helper()
		c := &http.Client{Jar: &plainJar{}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Transport: headerTransport(hdr)}
		res, body, err := testweb.SignIn(c, base, webui.AccountSignIn, key)
		require.NoError(t, err, body)
		return res
	}
	for _, c := range []struct {
		name   string
		args   []string
		hdr    []string
		secure bool
	}{
		{"trusted proxy, https", []string{"--trusted-proxies", "127.0.0.1"}, []string{"X-Forwarded-Proto", "https"}, true},
		{"untrusted peer, https", []string{"--trusted-proxies", "192.0.2.1"}, []string{"X-Forwarded-Proto", "https"}, false},
		{"--secure-cookies", []string{"--secure-cookies"}, nil, true},
		{"neither", nil, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := startServe(t, append([]string{"--addr", "127.0.0.1:0", "--access-log=false"}, c.args...)...)
			base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
			key := s.await(t, &s.stdout, `development API key[^:]*: (lnp_[a-z2-7]{32})`)
			host := strings.TrimPrefix(base, "http://")
			res := signIn(base, key, append(c.hdr, "Origin", "http://"+host)...)
			if c.secure {
				assert.Equal(t, http.StatusForbidden, res.StatusCode, "a form from http://%s is another origin", host)
				res = signIn(base, key, append(c.hdr, "Origin", "https://"+host)...)
			}
			require.Equal(t, http.StatusSeeOther, res.StatusCode)
			require.Len(t, res.Cookies(), 1, "the session's")
			ck := res.Cookies()[0]
			assert.Equal(t, c.secure, ck.Secure, res.Header.Get("Set-Cookie"))
			assert.Equal(t, c.secure, strings.HasPrefix(ck.Name, "__Host-"), ck.Name)
			require.Equal(t, 0, s.stop(t))
		})
	}
}

// headerTransport sends the headers hdr (name, value, …) with every
// request.
type headerTransport []string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for i := 0; i+1 < len(h); i += 2 {
		r.Header.Set(h[i], h[i+1])
	}
	return http.DefaultTransport.RoundTrip(r)
}

// plainJar keeps every cookie of one host, Secure or not: a proxy's
// client is on https, the test's connection is not.
type plainJar struct{ cookies map[string]*http.Cookie }

func (j *plainJar) SetCookies(_ *url.URL, cs []*http.Cookie) {
	if j.cookies == nil {
		j.cookies = map[string]*http.Cookie{}
	}
	for _, c := range cs {
		j.cookies[c.Name] = c
	}
}

func (j *plainJar) Cookies(*url.URL) []*http.Cookie {
	var out []*http.Cookie
	for _, c := range j.cookies {
		out = append(out, &http.Cookie{Name: c.Name, Value: c.Value})
	}
	return out
}
