package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/root"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/serve"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/webui"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testpg"
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
	// A browser of its own for each sign-in: one already signed in is sent
	// on from the sign-in page, and cookies do not tell ports apart.
	browser := func() *http.Client {
		jar, err := cookiejar.New(nil)
		require.NoError(t, err)
		return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	customer := browser()
	res, _, err := testweb.SignIn(customer, base, webui.AccountSignIn, key)
	require.NoError(t, err)
	assert.Equal(t, http.StatusSeeOther, res.StatusCode)
	assert.Equal(t, webui.AccountHome, res.Header.Get("Location"))
	require.Len(t, res.Cookies(), 1, "the session's")
	assert.True(t, res.Cookies()[0].HttpOnly)
	// The accounts serve lookup jobs: the account area has their page.
	res, err = customer.Get(base + "/account/jobs")
	require.NoError(t, err)
	jobsPage, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode, "%s", jobsPage)
	assert.Contains(t, string(jobsPage), `type="file"`, "the upload form")
	code, body, _ = page(base, "/api/v1/status")
	assert.Equal(t, http.StatusOK, code, "the API is served beside it: %s", body)
	require.Equal(t, 0, s.stop(t))

	// Keys files: the console alone.
	table := testdb.Build(t, lnpdb.Sample())
	dir := t.TempDir()
	keys, admins := filepath.Join(dir, "keys"), filepath.Join(dir, "admin-keys")
	newKey := func(file string) string {
		var out, errb bytes.Buffer
		require.Equal(t, 0, root.Run(context.Background(), &cliutil.Env{Stdout: &out, Stderr: &errb}, []string{"key", "new", "--keys", file}), errb.String())
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
		res, _, err := testweb.SignIn(browser(), base, webui.ConsoleSignIn, k)
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

// TestServeWebSessionsShared: with the accounts in PostgreSQL, two nodes
// of one store share the web sessions: a browser signed in on one is
// signed in on the other, its form's CSRF token holds on both, and its
// sign-out on one, or its key revoked on one, ends it on both at once.
func TestServeWebSessionsShared(t *testing.T) {
	dsn := testpg.New(t)
	id := strings.TrimSpace(mustRun(t, "account", "create", "--accounts", dsn, "--name", "Acme"))
	key := strings.TrimSpace(mustRun(t, "key", "new", "--accounts", dsn, "--account", id))
	var bases [2]string
	for i := range bases {
		s := startServe(t, "--db", testdb.Build(t, lnpdb.Sample()), "--accounts", dsn, "--addr", "127.0.0.1:0", "--access-log=false")
		bases[i] = s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	}
	// One browser, one cookie, whichever node a request reaches: as
	// behind a balancer (the jar keeps cookies by host name, which the
	// two nodes share: 127.0.0.1).
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(base, path string) (int, string) {
		t.Helper()
		res, err := c.Get(base + path)
		require.NoError(t, err)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	post := func(base, path string, form url.Values) int {
		t.Helper()
		res, err := c.PostForm(base+path, form)
		require.NoError(t, err)
		res.Body.Close()
		return res.StatusCode
	}
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`)

	res, body, err := testweb.SignIn(c, bases[0], webui.AccountSignIn, key)
	require.NoError(t, err)
	require.Equal(t, http.StatusSeeOther, res.StatusCode, body)
	code, body := get(bases[1], webui.AccountHome)
	require.Equal(t, http.StatusOK, code, "the session made on node 0 is served by node 1")
	assert.Contains(t, body, id)
	m := csrf.FindStringSubmatch(body)
	require.NotNil(t, m)
	// A key made on node 1 with the token node 1 showed, its flash shown
	// on node 0.
	require.Equal(t, http.StatusCreated, post(bases[1], "/account/keys", url.Values{"csrf": {m[1]}, "label": {"second"}}))
	_, body = get(bases[0], "/account/keys")
	second := regexp.MustCompile(`<code>(key_[a-z2-7]+)</code></td>\s*<td class="label">second`).FindStringSubmatch(body)
	require.NotNil(t, second, body)
	require.Equal(t, http.StatusSeeOther, post(bases[0], "/account/keys/"+second[1]+"/revoke", url.Values{"csrf": {m[1]}}))
	_, body = get(bases[1], "/account/keys")
	assert.Contains(t, body, "Key "+second[1]+" is revoked", "the notice set on node 0, shown on node 1")

	// Sign out on node 1: node 0 refuses the cookie at once.
	require.Equal(t, http.StatusSeeOther, post(bases[1], webui.SignOutPath, url.Values{"csrf": {m[1]}}))
	// The cookie as it was, replayed.
	var old *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == "lnpdb_session" {
			old = ck
		}
	}
	require.NotNil(t, old)
	for _, base := range bases {
		req, _ := http.NewRequest(http.MethodGet, base+webui.AccountHome, nil)
		req.AddCookie(old)
		r, err := http.DefaultTransport.RoundTrip(req)
		require.NoError(t, err)
		r.Body.Close()
		assert.Equal(t, http.StatusSeeOther, r.StatusCode, "%s: signed out", base)
	}

	// Key revocation on one node (the operator's command here) ends the
	// sessions on both.
	res, body, err = testweb.SignIn(c, bases[1], webui.AccountSignIn, key)
	require.NoError(t, err)
	require.Equal(t, http.StatusSeeOther, res.StatusCode, body)
	code, _ = get(bases[0], webui.AccountHome)
	require.Equal(t, http.StatusOK, code)
	keyID := regexp.MustCompile(`(key_[a-z2-7]+)`).FindString(mustRun(t, "key", "list", "--accounts", dsn, "--account", id))
	mustRun(t, "key", "revoke", "--accounts", dsn, "--account", id, "--key", keyID)
	for _, base := range bases {
		require.Eventually(t, func() bool { code, _ := get(base, webui.AccountHome); return code == http.StatusSeeOther },
			10*time.Second, 20*time.Millisecond, "%s: the revoked key's session ends", base)
	}
}

// TestServePlaygroundBills: a lookup made in the account playground is
// charged as the same lookup made through the API — the free tier first,
// then the wallet at the kind's price, then refused with the API's 402
// shown on the page — once the page that shows it is delivered. 30
// enhanced lookups of the demo account (10 free, $0.01 at $0.002): 10
// free, 5 paid, 15 refused.
func TestServePlaygroundBills(t *testing.T) {
	s := startServe(t, "--addr", "127.0.0.1:0", "--access-log=false")
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	key := s.await(t, &s.stdout, `development API key[^:]*: (lnp_[a-z2-7]{32})`)
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, body, err := testweb.SignIn(c, base, webui.AccountSignIn, key)
	require.NoError(t, err, body)
	require.Equal(t, http.StatusSeeOther, res.StatusCode, "signed in: %s", body)
	form := func(path string, v url.Values) (int, string) {
		t.Helper()
		var res *http.Response
		var err error
		if v == nil {
			res, err = c.Get(base + path)
		} else {
			res, err = c.PostForm(base+path, v)
		}
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, string(b)
	}
	_, page := form("/account/playground", nil)
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	require.NotNil(t, csrf, page)
	answers := map[string]int{}
	for i := range 30 {
		code, page := form("/account/playground", url.Values{"csrf": {csrf[1]}, "number": {"12025550123"}, "kind": {"lrn_enhanced"}, "key": {key}})
		require.Equal(t, http.StatusOK, code, "lookup %d: %s", i+1, page)
		st := regexp.MustCompile(`<span id="answer-status">(\d+)</span>`).FindStringSubmatch(page)
		require.NotNil(t, st, page)
		answers[st[1]]++
		if st[1] == "402" {
			assert.Contains(t, page, "INSUFFICIENT_BALANCE", "the refusal is shown on the page")
		}
	}
	assert.Equal(t, map[string]int{"200": 15, "402": 15}, answers, "10 free, $0.01 at $0.002, then refused")

	// A lookup is settled once its page is flushed, just after the client
	// may have read it: ask until the last one is in.
	want := billing.KindUsage{Kind: billing.KindLRNEnhanced, Lookups: 15, Free: 10, Amount: serve.DemoCredit, AmountUSD: "0.01"}
	var u billing.UsageReport
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		code, b := call(t, "GET", base+"/api/v1/usage", key, "")
		require.Equal(t, http.StatusOK, code, b)
		require.NoError(t, json.Unmarshal([]byte(b), &u))
		if len(u.CurrentMonth.Kinds) == 1 && u.CurrentMonth.Kinds[0] == want || time.Now().After(deadline) {
			break
		}
	}
	assert.Equal(t, []billing.KindUsage{want}, u.CurrentMonth.Kinds)
	assert.Equal(t, int64(0), u.FreeLeft)
	assert.Equal(t, billing.Micros(0), u.Balance)
	require.Equal(t, 0, s.stop(t))
}
