package webui

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testclock"
)

// keys is a realm's keys for tests: text → identity; revoke by deleting.
type keys struct {
	mu      sync.Mutex
	valid   map[string]Identity
	suspend map[string]bool
}

func newKeys(account string, texts ...string) *keys {
	k := &keys{valid: map[string]Identity{}, suspend: map[string]bool{}}
	for _, t := range texts {
		h := sha256.Sum256([]byte(t))
		k.valid[t] = Identity{KeyHash: h, KeyID: hex.EncodeToString(h[:4]), AccountID: account}
	}
	return k
}

func (k *keys) realm() *Realm {
	return &Realm{
		SignIn: func(key string) (Identity, error) {
			k.mu.Lock()
			defer k.mu.Unlock()
			if k.suspend[key] {
				return Identity{}, ErrSuspended
			}
			id, ok := k.valid[key]
			if !ok {
				return Identity{}, ErrUnknownKey
			}
			return id, nil
		},
		Valid: func(id Identity) bool {
			k.mu.Lock()
			defer k.mu.Unlock()
			for t, v := range k.valid {
				if v.KeyHash == id.KeyHash {
					return !k.suspend[t]
				}
			}
			return false
		},
	}
}

func (k *keys) revoke(text string) {
	k.mu.Lock()
	delete(k.valid, text)
	k.mu.Unlock()
}

// site is a web interface with one customer page and one admin page, each
// with a GET and a POST, on a real socket.
type site struct {
	ui                *UI
	srv               *httptest.Server
	customers, admins *keys
	clock             *testclock.Clock
	posts             int
}

var pageFS = fstest.MapFS{"p.html": {Data: []byte(`{{define "content"}}<p id="data">{{.Data}}</p><form method="post"><input type="hidden" name="csrf" value="{{.CSRF}}"><input name="label" value="{{.Data}}"></form>{{end}}`)}}

func newSite(t *testing.T, tlsOn bool, mod ...func(*Config)) *site {
	t.Helper()
	s := &site{customers: newKeys("acct_1", "lnp_customer", "lnp_other"), admins: newKeys("", "lnp_admin"), clock: testclock.New(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))}
	cfg := Config{Customer: s.customers.realm(), Admin: s.admins.realm(), Now: s.clock.Now, SignInPerMinute: 100}
	for _, m := range mod {
		m(&cfg)
	}
	ui, err := New(cfg)
	require.NoError(t, err)
	page, err := ui.Template(nil, pageFS, "p.html")
	require.NoError(t, err)
	for _, p := range []string{AccountHome, ConsoleHome} {
		h := func(w http.ResponseWriter, r *http.Request, sess *Session) {
			if r.Method == http.MethodPost {
				s.posts++
			}
			ui.Render(w, r, page, http.StatusOK, Page{Title: "Page", Data: "account " + sess.AccountID})
		}
		if p == AccountHome {
			ui.HandleCustomer("GET "+p, h)
			ui.HandleCustomer("POST "+p, h)
		} else {
			ui.HandleAdmin("GET "+p, h)
			ui.HandleAdmin("POST "+p, h)
		}
	}
	s.ui = ui
	if tlsOn {
		s.srv = httptest.NewTLSServer(ui)
	} else {
		s.srv = httptest.NewServer(ui)
	}
	t.Cleanup(s.srv.Close)
	return s
}

// browser is a client with a cookie jar that does not follow redirects.
func (s *site) browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	c := *s.srv.Client() // one Client per browser: its own jar
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

func (s *site) do(t *testing.T, c *http.Client, method, path string, form url.Values, hdr ...string) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, s.srv.URL+path, body)
	require.NoError(t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	return resp, string(b)
}

func (s *site) signIn(t *testing.T, c *http.Client, path, key string) *http.Response {
	t.Helper()
	resp, _ := s.signInPost(t, c, path, url.Values{"key": {key}})
	return resp
}

// signInPost posts form to the sign-in page at path as a browser does:
// with the token of the form it GETs first (and whose cookie it keeps).
func (s *site) signInPost(t *testing.T, c *http.Client, path string, form url.Values, hdr ...string) (*http.Response, string) {
	t.Helper()
	if form.Get("csrf") == "" {
		if _, body := s.do(t, c, http.MethodGet, path, nil); csrfField.MatchString(body) {
			form.Set("csrf", csrfField.FindStringSubmatch(body)[1])
		} else { // signed in already: sent home, the token kept from before
			u, _ := url.Parse(s.srv.URL)
			for _, ck := range c.Jar.Cookies(u) {
				if strings.HasSuffix(ck.Name, "lnpdb_signin") {
					form.Set("csrf", ck.Value)
				}
			}
		}
	}
	return s.do(t, c, http.MethodPost, path, form, hdr...)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads the CSRF token off a page of the session.
func (s *site) csrf(t *testing.T, c *http.Client, path string) string {
	t.Helper()
	resp, body := s.do(t, c, http.MethodGet, path, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	m := csrfField.FindStringSubmatch(body)
	require.NotNil(t, m, body)
	return m[1]
}

func TestSecurityHeaders(t *testing.T) {
	s := newSite(t, false)
	c := s.browser(t)
	for _, path := range []string{AccountSignIn, ConsoleSignIn, StylePath, "/account/nothing", AccountHome} {
		resp, _ := s.do(t, c, http.MethodGet, path, nil)
		h := resp.Header
		assert.Equal(t, CSP, h.Get("Content-Security-Policy"), path)
		assert.Equal(t, "DENY", h.Get("X-Frame-Options"), path)
		assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"), path)
		assert.Equal(t, "no-referrer", h.Get("Referrer-Policy"), path)
		if path != StylePath {
			assert.Equal(t, "no-store", h.Get("Cache-Control"), path)
		}
	}
	assert.Equal(t, "default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'", CSP)
	resp, body := s.do(t, c, http.MethodGet, StylePath, nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/css; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Contains(t, body, ":focus-visible")
	resp, _ = s.do(t, c, http.MethodGet, "/account/nothing", nil)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestOwns(t *testing.T) {
	for path, want := range map[string]bool{
		"/account": true, "/account/": true, "/account/keys": true, "/console": true, "/console/x": true, "/ui/style.css": true,
		"/accounts": false, "/consoles": false, "/api/v1/lrn": false, "/admin/v1/accounts": false, "/ui": false, "/": false,
	} {
		assert.Equal(t, want, Owns(path), path)
	}
}

// TestSessionCookie: the cookie is HttpOnly, SameSite=Strict, Path=/,
// expiring, Secure and __Host- under TLS; the key's text is nowhere in it.
func TestSessionCookie(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		s := newSite(t, tlsOn)
		c := s.browser(t)
		resp := s.signIn(t, c, AccountSignIn, "lnp_customer")
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		assert.Equal(t, AccountHome, resp.Header.Get("Location"))
		cookies := resp.Cookies()
		require.Len(t, cookies, 1)
		ck := cookies[0]
		raw := resp.Header.Get("Set-Cookie")
		assert.True(t, ck.HttpOnly, raw)
		assert.Equal(t, http.SameSiteStrictMode, ck.SameSite, raw)
		assert.Equal(t, "/", ck.Path, raw)
		assert.Equal(t, int(DefaultMaxAge/time.Second), ck.MaxAge, raw)
		assert.Equal(t, tlsOn, ck.Secure, raw)
		if tlsOn {
			assert.Equal(t, "__Host-lnpdb_session", ck.Name)
		} else {
			assert.Equal(t, "lnpdb_session", ck.Name)
		}
		assert.Len(t, ck.Value, tokenLen)
		assert.NotContains(t, raw, "lnp_customer")
		resp, body := s.do(t, c, http.MethodGet, AccountHome, nil)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, body, "account acct_1")
	}
}

// TestSignInMakesNewSession: an id planted in the browser before sign-in
// (fixation) is not the session's id after it, and signs nothing in; and
// signing in again ends the previous session.
func TestSignInMakesNewSession(t *testing.T) {
	s := newSite(t, false)
	c := s.browser(t)
	u, _ := url.Parse(s.srv.URL)
	planted := strings.Repeat("A", tokenLen)
	c.Jar.SetCookies(u, []*http.Cookie{{Name: "lnpdb_session", Value: planted, Path: "/"}})
	resp := s.signIn(t, c, AccountSignIn, "lnp_customer")
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	first := resp.Cookies()[0].Value
	assert.NotEqual(t, planted, first)

	attacker := s.browser(t)
	attacker.Jar.SetCookies(u, []*http.Cookie{{Name: "lnpdb_session", Value: planted, Path: "/"}})
	resp, _ = s.do(t, attacker, http.MethodGet, AccountHome, nil)
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode, "the planted id is no session")

	resp = s.signIn(t, c, AccountSignIn, "lnp_customer")
	second := resp.Cookies()[0].Value
	assert.NotEqual(t, first, second)
	old := s.browser(t)
	old.Jar.SetCookies(u, []*http.Cookie{{Name: "lnpdb_session", Value: first, Path: "/"}})
	resp, _ = s.do(t, old, http.MethodGet, AccountHome, nil)
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode, "the session before the second sign-in ended")
	assert.Equal(t, 1, s.ui.sessions.len())
}

func TestSignInRefusals(t *testing.T) {
	s := newSite(t, false)
	c := s.browser(t)
	s.customers.suspend["lnp_other"] = true
	for key, want := range map[string]string{"lnp_nobody": ErrUnknownKey.Error(), "lnp_other": ErrSuspended.Error(), "lnp_admin": ErrUnknownKey.Error()} {
		resp, body := s.signInPost(t, c, AccountSignIn, url.Values{"key": {key}})
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, key)
		assert.Contains(t, body, strings.ReplaceAll(want, "'", "&#39;"), key)
		assert.NotContains(t, body, key, "the key typed is not echoed")
		assert.Empty(t, resp.Cookies(), key)
	}
	resp, _ := s.signInPost(t, c, AccountSignIn, url.Values{"key": {""}})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	// Another site's form cannot sign a browser in (login CSRF).
	resp, _ = s.signInPost(t, c, AccountSignIn, url.Values{"key": {"lnp_customer"}}, "Origin", "https://evil.example")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp, _ = s.signInPost(t, c, AccountSignIn, url.Values{"key": {"lnp_customer"}}, "Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Equal(t, 0, s.ui.sessions.len())
}

// TestSignInRateLimited: past SignInPerMinute attempts from one address,
// or half as many with one key, sign-in answers 429 — even with the right
// key — until the minute is over.
// TestSignInToken: a sign-in is taken only with the pre-session token of
// the form in both the form and the browser's cookie — even from a
// browser that sends neither Origin nor Sec-Fetch-Site (login CSRF by an
// old browser); the cookie is HttpOnly, SameSite=Strict, and __Host- under
// TLS.
func TestSignInToken(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		s := newSite(t, tlsOn)
		victim, attacker := s.browser(t), s.browser(t)
		resp, body := s.do(t, victim, http.MethodPost, AccountSignIn, url.Values{"key": {"lnp_customer"}})
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "no Origin, no Sec-Fetch-Site, no token: %s", body)
		assert.Equal(t, 0, s.ui.sessions.len())
		resp, body = s.do(t, attacker, http.MethodGet, AccountSignIn, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		m := csrfField.FindStringSubmatch(body)
		require.NotNil(t, m, "the sign-in form carries a token")
		attackerTok := m[1]
		require.Len(t, resp.Cookies(), 1)
		ck := resp.Cookies()[0]
		assert.Equal(t, attackerTok, ck.Value)
		assert.True(t, ck.HttpOnly)
		assert.Equal(t, http.SameSiteStrictMode, ck.SameSite)
		assert.Equal(t, tlsOn, ck.Secure)
		assert.Equal(t, tlsOn, strings.HasPrefix(ck.Name, "__Host-"), ck.Name)

		for name, form := range map[string]url.Values{
			"no token":                {"key": {"lnp_customer"}},
			"another browser's token": {"key": {"lnp_customer"}, "csrf": {attackerTok}},
		} {
			resp, body := s.do(t, victim, http.MethodPost, AccountSignIn, form)
			assert.Equal(t, http.StatusForbidden, resp.StatusCode, name)
			assert.Contains(t, body, "did not come from this site", name)
		}
		resp, _ = s.do(t, attacker, http.MethodPost, AccountSignIn, url.Values{"key": {"lnp_customer"}, "csrf": {attackerTok + "x"}})
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "a token unlike the cookie's")
		assert.Equal(t, 0, s.ui.sessions.len(), "nobody signed in")
		resp, _ = s.do(t, attacker, http.MethodPost, AccountSignIn, url.Values{"key": {"lnp_customer"}, "csrf": {attackerTok}})
		assert.Equal(t, http.StatusSeeOther, resp.StatusCode, "the form's own token")
	}
}

func TestSignInRateLimited(t *testing.T) {
	s := newSite(t, false, func(c *Config) { c.SignInPerMinute = 10 })
	c := s.browser(t)
	for i := range 10 {
		resp := s.signIn(t, c, AccountSignIn, "lnp_guess"+strings.Repeat("x", i))
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, i)
	}
	resp, body := s.signInPost(t, c, AccountSignIn, url.Values{"key": {"lnp_customer"}})
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))
	assert.Contains(t, body, "Too many sign-in attempts")
	s.clock.Advance(time.Minute)
	assert.Equal(t, http.StatusSeeOther, s.signIn(t, c, AccountSignIn, "lnp_customer").StatusCode)

	// Per key: the same key tried from many addresses (here: the limit per
	// address lifted) is held to half the limit.
	s = newSite(t, false, func(c *Config) { c.SignInPerMinute = 10 })
	for i := range 5 {
		assert.Equal(t, http.StatusUnauthorized, s.signIn(t, c, AccountSignIn, "lnp_guess").StatusCode, i)
	}
	assert.Equal(t, http.StatusTooManyRequests, s.signIn(t, c, AccountSignIn, "lnp_guess").StatusCode)
}

func TestCSRF(t *testing.T) {
	s := newSite(t, false)
	c := s.browser(t)
	s.signIn(t, c, AccountSignIn, "lnp_customer")
	tok := s.csrf(t, c, AccountHome)
	wrong := tok[:len(tok)-1] + "A"
	if wrong == tok {
		wrong = tok[:len(tok)-1] + "B"
	}
	for name, tc := range map[string]struct {
		form url.Values
		hdr  []string
	}{
		"no token":            {url.Values{"label": {"x"}}, nil},
		"wrong token":         {url.Values{"csrf": {wrong}}, nil},
		"another's token":     {url.Values{"csrf": {token()}}, nil},
		"cross-site":          {url.Values{"csrf": {tok}}, []string{"Sec-Fetch-Site", "cross-site"}},
		"same-site":           {url.Values{"csrf": {tok}}, []string{"Sec-Fetch-Site", "same-site"}},
		"foreign origin":      {url.Values{"csrf": {tok}}, []string{"Origin", "http://evil.example"}},
		"null origin":         {url.Values{"csrf": {tok}}, []string{"Origin", "null"}},
		"token in the query":  {url.Values{}, nil},
		"oversized form body": {url.Values{"csrf": {tok}, "pad": {strings.Repeat("x", MaxFormBytes)}}, nil},
	} {
		path := AccountHome
		if name == "token in the query" {
			path += "?csrf=" + url.QueryEscape(tok)
		}
		resp, body := s.do(t, c, http.MethodPost, path, tc.form, tc.hdr...)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, name)
		assert.Contains(t, body, "Refused", name)
	}
	assert.Equal(t, 0, s.posts, "no refused post reached its handler")
	resp, _ := s.do(t, c, http.MethodPost, AccountHome, url.Values{"csrf": {tok}}, "Origin", s.srv.URL, "Sec-Fetch-Site", "same-origin")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, 1, s.posts)
	// What a browser sends under Referrer-Policy no-referrer.
	resp, _ = s.do(t, c, http.MethodPost, AccountHome, url.Values{"csrf": {tok}}, "Origin", "null", "Sec-Fetch-Site", "same-origin")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, 2, s.posts)

	// Sign-out is a checked form too.
	resp, _ = s.do(t, c, http.MethodPost, SignOutPath, url.Values{})
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp, _ = s.do(t, c, http.MethodPost, SignOutPath, url.Values{"csrf": {tok}})
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, AccountSignIn, resp.Header.Get("Location"))
	resp, _ = s.do(t, c, http.MethodGet, AccountHome, nil)
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode, "signed out")
	assert.Equal(t, 0, s.ui.sessions.len())
}

// TestOriginScheme: under TLS a form is taken from this host's https
// origin only: the same host over plain http is another origin.
func TestOriginScheme(t *testing.T) {
	s := newSite(t, true)
	c := s.browser(t)
	s.signIn(t, c, AccountSignIn, "lnp_customer")
	tok := s.csrf(t, c, AccountHome)
	host := strings.TrimPrefix(s.srv.URL, "https://")
	resp, body := s.do(t, c, http.MethodPost, AccountHome, url.Values{"csrf": {tok}}, "Origin", "http://"+host)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, body)
	assert.Equal(t, 0, s.posts)
	resp, _ = s.do(t, c, http.MethodPost, AccountHome, url.Values{"csrf": {tok}}, "Origin", "https://"+host)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, 1, s.posts)
}

func TestRoles(t *testing.T) {
	s := newSite(t, false)
	cust, admin, none := s.browser(t), s.browser(t), s.browser(t)
	s.signIn(t, cust, AccountSignIn, "lnp_customer")
	assert.Equal(t, http.StatusUnauthorized, s.signIn(t, admin, ConsoleSignIn, "lnp_customer").StatusCode, "a customer's key is no admin key")
	resp := s.signIn(t, admin, ConsoleSignIn, "lnp_admin")
	assert.Equal(t, ConsoleHome, resp.Header.Get("Location"))

	resp, body := s.do(t, cust, http.MethodGet, ConsoleHome, nil)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "a customer's session on an admin page")
	assert.Contains(t, body, "for admins")
	tok := s.csrf(t, cust, AccountHome)
	resp, _ = s.do(t, cust, http.MethodPost, ConsoleHome, url.Values{"csrf": {tok}})
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp, _ = s.do(t, admin, http.MethodGet, AccountHome, nil)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "an admin's session on a customer's page")
	resp, _ = s.do(t, admin, http.MethodGet, ConsoleHome, nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = s.do(t, none, http.MethodGet, ConsoleHome, nil)
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, ConsoleSignIn, resp.Header.Get("Location"))
	resp, _ = s.do(t, none, http.MethodPost, ConsoleHome, url.Values{})
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Equal(t, 0, s.posts)

	// Without a Customer realm there is no customer sign-in.
	s = newSite(t, false, func(c *Config) { c.Customer = nil })
	resp, _ = s.do(t, s.browser(t), http.MethodGet, AccountSignIn, nil)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// TestSessionEnds: a session ends when its key is revoked (at the next
// request), after IdleTimeout unused, and MaxAge after sign-in however
// used.
func TestSessionEnds(t *testing.T) {
	s := newSite(t, false, func(c *Config) { c.IdleTimeout, c.MaxAge = 10*time.Minute, time.Hour })
	c := s.browser(t)
	get := func() int { resp, _ := s.do(t, c, http.MethodGet, AccountHome, nil); return resp.StatusCode }

	s.signIn(t, c, AccountSignIn, "lnp_customer")
	assert.Equal(t, http.StatusOK, get())
	s.customers.suspend["lnp_customer"] = true
	assert.Equal(t, http.StatusSeeOther, get(), "suspended")
	assert.Equal(t, 0, s.ui.sessions.len())
	delete(s.customers.suspend, "lnp_customer")

	s.signIn(t, c, AccountSignIn, "lnp_customer")
	s.customers.revoke("lnp_customer")
	assert.Equal(t, http.StatusSeeOther, get(), "revoked")
	assert.Equal(t, 0, s.ui.sessions.len())

	s.signIn(t, c, AccountSignIn, "lnp_other")
	s.clock.Advance(9 * time.Minute)
	assert.Equal(t, http.StatusOK, get())
	s.clock.Advance(9 * time.Minute)
	assert.Equal(t, http.StatusOK, get(), "used within the idle timeout")
	s.clock.Advance(10 * time.Minute)
	assert.Equal(t, http.StatusSeeOther, get(), "idle")

	s.signIn(t, c, AccountSignIn, "lnp_other")
	for range 6 {
		s.clock.Advance(9 * time.Minute)
		require.Equal(t, http.StatusOK, get())
	}
	s.clock.Advance(9 * time.Minute)
	assert.Equal(t, http.StatusSeeOther, get(), "past MaxAge")

	s.signIn(t, c, AccountSignIn, "lnp_other")
	s.ui.EndSessionsOf(sha256.Sum256([]byte("lnp_other")))
	assert.Equal(t, http.StatusSeeOther, get(), "ended by its key")
}

// At MaxSessions a sign-in is taken, and ends the session unused the
// longest: a full table keeps no one out.
func TestMaxSessions(t *testing.T) {
	s := newSite(t, false, func(c *Config) { c.MaxSessions = 2 })
	get := func(c *http.Client) int {
		resp, _ := s.do(t, c, http.MethodGet, AccountHome, nil)
		return resp.StatusCode
	}
	a, b, c := s.browser(t), s.browser(t), s.browser(t)
	s.signIn(t, a, AccountSignIn, "lnp_customer")
	s.signIn(t, b, AccountSignIn, "lnp_customer")
	require.Equal(t, http.StatusOK, get(a))
	require.Equal(t, http.StatusSeeOther, s.signIn(t, c, AccountSignIn, "lnp_other").StatusCode)
	assert.Equal(t, http.StatusOK, get(c))
	assert.Equal(t, http.StatusOK, get(a))
	assert.Equal(t, http.StatusSeeOther, get(b), "unused the longest: ended")
	assert.Equal(t, 2, s.ui.sessions.len())
}

// One key signed in from many browsers holds at most 8 sessions, its
// newest; another key signs in as ever.
func TestSessionsPerKey(t *testing.T) {
	s := newSite(t, false)
	h := sha256.Sum256([]byte("lnp_customer"))
	count := func() int {
		s.ui.sessions.mu.Lock()
		defer s.ui.sessions.mu.Unlock()
		n := 0
		for _, sess := range s.ui.sessions.m {
			if sess.KeyHash == h {
				n++
			}
		}
		return n
	}
	var browsers []*http.Client
	for range 20 {
		c := s.browser(t)
		require.Equal(t, http.StatusSeeOther, s.signIn(t, c, AccountSignIn, "lnp_customer").StatusCode)
		browsers = append(browsers, c)
		require.LessOrEqual(t, count(), 8)
	}
	assert.Equal(t, 8, count())
	for i, c := range browsers {
		resp, _ := s.do(t, c, http.MethodGet, AccountHome, nil)
		want := http.StatusSeeOther // ended by a newer sign-in
		if i >= len(browsers)-8 {
			want = http.StatusOK
		}
		assert.Equal(t, want, resp.StatusCode, "browser %d", i)
	}
	other := s.browser(t)
	require.Equal(t, http.StatusSeeOther, s.signIn(t, other, AccountSignIn, "lnp_other").StatusCode)
	resp, _ := s.do(t, other, http.MethodGet, AccountHome, nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, 9, s.ui.sessions.len())
}

func TestFlash(t *testing.T) {
	s := newSite(t, false)
	c := s.browser(t)
	s.signIn(t, c, AccountSignIn, "lnp_customer")
	for _, sess := range s.ui.sessions.m {
		sess.SetFlash("done <b>now</b>")
	}
	_, body := s.do(t, c, http.MethodGet, AccountHome, nil)
	assert.Contains(t, body, `<p class="flash" role="status">done &lt;b&gt;now&lt;/b&gt;</p>`)
	_, body = s.do(t, c, http.MethodGet, AccountHome, nil)
	assert.NotContains(t, body, "flash", "shown once")
}

// A path of the web interface with a method it does not take answers 405
// with Allow, as a page; a path it does not have, 404.
func TestMethodNotAllowed(t *testing.T) {
	s := newSite(t, false)
	c := s.browser(t)
	for _, tc := range []struct{ method, path, allow string }{
		{http.MethodDelete, AccountHome, "GET, HEAD, POST"},
		{http.MethodPut, ConsoleSignIn, "GET, HEAD, POST"},
		{http.MethodGet, SignOutPath, "POST"},
		{http.MethodPost, StylePath, "GET, HEAD"},
	} {
		resp, body := s.do(t, c, tc.method, tc.path, nil)
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "%s %s", tc.method, tc.path)
		assert.Equal(t, tc.allow, resp.Header.Get("Allow"), "%s %s", tc.method, tc.path)
		assert.Contains(t, resp.Header.Get("Content-Type"), "text/html")
		assert.Contains(t, body, "Method not allowed")
		assert.Equal(t, CSP, resp.Header.Get("Content-Security-Policy"))
	}
	resp, _ := s.do(t, c, http.MethodDelete, AccountHome+"/nothing", nil)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Empty(t, resp.Header.Get("Allow"))
}
