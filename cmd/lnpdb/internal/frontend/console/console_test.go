package console

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/webui"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/live"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/history"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/metric"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testclock"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testweb"
	"github.com/lnpdb/lnpdb/format"
)

// hostile is what an attacker puts in every field an admin or a customer
// can set: it must come back as text, never as markup.
const hostile = `<script>alert(1)</script><img src=x onerror=alert(2)>"'&`

type fixture struct {
	srv     *httptest.Server
	store   billing.Store
	acct    billing.Account
	keyID   string
	changed int
}

func realm(role string, ids map[string]webui.Identity) *webui.Realm {
	return &webui.Realm{
		SignIn: func(k string) (webui.Identity, error) {
			id, ok := ids[k]
			if !ok {
				return webui.Identity{}, webui.ErrUnknownKey
			}
			return id, nil
		},
		Valid: func(webui.Identity) bool { return true },
	}
}

func ident(text, account string) webui.Identity {
	h := sha256.Sum256([]byte(text))
	return webui.Identity{KeyHash: h, KeyID: hex.EncodeToString(h[:4]), AccountID: account}
}

func newFixture(t testing.TB) *fixture { t.Helper(); return newFixtureOver(t, nil) }

// newFixtureOver is newFixture with the console reading the store through
// wrap, when not nil.
func newFixtureOver(t testing.TB, wrap func(billing.Store) billing.Store) *fixture {
	t.Helper()
	f := &fixture{}
	clock := testclock.New(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	s, err := billing.OpenBolt(filepath.Join(t.TempDir(), "accounts.db"))
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	f.store = s
	ctx := context.Background()
	f.acct, err = s.CreateAccount(ctx, hostile, clock.Now())
	require.NoError(t, err)
	k, err := s.AddKey(ctx, billing.KeyRecord{AccountID: f.acct.ID, Label: hostile, Hash: sha256.Sum256([]byte("lnp_cust"))}, clock.Now())
	require.NoError(t, err)
	f.keyID = k.ID
	var adminStore billing.Store = s
	if wrap != nil {
		adminStore = wrap(s)
	}
	admin, err := billing.NewAdmin(billing.AdminConfig{Store: adminStore, Now: clock.Now,
		Authorize: func(string) (string, bool) { return "", false },
		NewKey:    func() (string, [32]byte) { return "", [32]byte{} },
		Changed:   func(context.Context) { f.changed++ }})
	require.NoError(t, err)

	ui, err := webui.New(webui.Config{
		Admin:           realm("admin", map[string]webui.Identity{"lnp_admin": ident("lnp_admin", "")}),
		Customer:        realm("customer", map[string]webui.Identity{"lnp_cust": ident("lnp_cust", f.acct.ID)}),
		Now:             clock.Now,
		SignInPerMinute: 1000,
	})
	require.NoError(t, err)

	vec := metric.NewHistogramVec("t_seconds", "t", []float64{.001, .01}, "path")
	h := history.New(clock.Now, history.Front{Name: "REST", Vec: vec, Match: history.Label(0, "/api/v1/lrn")})
	h.Sample()
	for i := 0; i < 30; i++ {
		for range 10 * (i + 1) {
			vec.WithLabelValues("/api/v1/lrn").Observe(.0005)
		}
		clock.Advance(history.Interval)
		h.Sample()
	}
	// A customer's page, for its session's CSRF token.
	custPage, err := ui.Template(nil, fstest.MapFS{"p.html": {Data: []byte(`{{define "content"}}<form method="post"><input type="hidden" name="csrf" value="{{.CSRF}}"></form>{{end}}`)}}, "p.html")
	require.NoError(t, err)
	ui.HandleCustomer("GET "+webui.AccountHome, func(w http.ResponseWriter, r *http.Request, _ *webui.Session) {
		ui.Render(w, r, custPage, http.StatusOK, webui.Page{Title: "Account"})
	})
	require.NoError(t, Register(ui, Config{
		Table:    func() format.Info { return format.Info{ID: "tbl-" + hostile, Version: 3, BuiltAt: clock.Now()} },
		Live:     func() live.Status { return live.Status{PendingUpdates: 7, LastReloadError: hostile} },
		History:  h,
		Accounts: admin,
		Now:      clock.Now,
	}))
	f.srv = httptest.NewServer(ui)
	t.Cleanup(f.srv.Close)
	return f
}

type browser struct {
	t testing.TB
	c *http.Client
	f *fixture
}

func (f *fixture) browser(t testing.TB, key string) *browser {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	b := &browser{t, &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, f}
	if key != "" {
		path := webui.ConsoleSignIn
		if key == "lnp_cust" {
			path = webui.AccountSignIn
		}
		res, body, err := testweb.SignIn(b.c, f.srv.URL, path, key)
		require.NoError(t, err)
		require.Equal(t, http.StatusSeeOther, res.StatusCode, body)
	}
	return b
}

func (b *browser) get(path string) (int, string) {
	b.t.Helper()
	res, err := b.c.Get(b.f.srv.URL + path)
	require.NoError(b.t, err)
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

func (b *browser) post(path string, form url.Values) (int, string) {
	b.t.Helper()
	res, err := b.c.PostForm(b.f.srv.URL+path, form)
	require.NoError(b.t, err)
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (b *browser) csrf(path string) string {
	b.t.Helper()
	code, body := b.get(path)
	require.Equal(b.t, http.StatusOK, code, body)
	m := csrfRE.FindStringSubmatch(body)
	require.NotNil(b.t, m)
	return m[1]
}

func TestPagesForAdminsOnly(t *testing.T) {
	f := newFixture(t)
	admin, cust, none := f.browser(t, "lnp_admin"), f.browser(t, "lnp_cust"), f.browser(t, "")
	acct := Accounts + "/" + f.acct.ID
	for _, p := range []string{Home, FrontEnds, Accounts, acct, Audit, Jobs} {
		code, body := admin.get(p)
		assert.Equal(t, http.StatusOK, code, "%s: %s", p, body)
		code, _ = cust.get(p)
		assert.Equal(t, http.StatusForbidden, code, "a customer's session on %s", p)
		code, _ = none.get(p)
		assert.Equal(t, http.StatusSeeOther, code, "no session on %s", p)
	}
	// A customer's session with a valid CSRF token of its own still may
	// not change an account.
	tok := cust.csrf(webui.AccountHome)
	code, _ := cust.post(acct+"/suspend", url.Values{"csrf": {tok}})
	assert.Equal(t, http.StatusForbidden, code)
	a, err := f.store.Account(context.Background(), f.acct.ID)
	require.NoError(t, err)
	assert.Equal(t, billing.StatusActive, a.Status)
}

func TestChangesNeedCSRF(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t, "lnp_admin")
	acct := Accounts + "/" + f.acct.ID
	for _, form := range []struct {
		path string
		v    url.Values
	}{
		{acct + "/credit", url.Values{"amount": {"5"}, "ref": {"X"}}},
		{acct + "/price", url.Values{"kind": {"lrn"}, "price": {"0"}}},
		{acct + "/suspend", url.Values{}},
		{acct + "/keys/" + f.keyID + "/revoke", url.Values{}},
	} {
		code, _ := b.post(form.path, form.v)
		assert.Equal(t, http.StatusForbidden, code, form.path)
		form.v.Set("csrf", "forged")
		code, _ = b.post(form.path, form.v)
		assert.Equal(t, http.StatusForbidden, code, form.path)
	}
	a, err := f.store.Account(context.Background(), f.acct.ID)
	require.NoError(t, err)
	assert.Equal(t, billing.StatusActive, a.Status)
	assert.Zero(t, a.Balance)
	log, err := f.store.Audit(context.Background(), "", 0, 0)
	require.NoError(t, err)
	assert.Empty(t, log)
}

func TestCreditSuspendAudit(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t, "lnp_admin")
	acct := Accounts + "/" + f.acct.ID
	tok := b.csrf(acct)

	code, body := b.post(acct+"/credit", url.Values{"csrf": {tok}, "amount": {"25.00"}, "ref": {hostile}})
	require.Equal(t, http.StatusSeeOther, code, body)
	_, page := b.get(acct)
	assert.Contains(t, page, `id="account-balance">$25.00`)
	assert.Contains(t, page, "Credited $25.00")

	code, _ = b.post(acct+"/credit", url.Values{"csrf": {tok}, "amount": {"25.00"}, "ref": {hostile}})
	require.Equal(t, http.StatusSeeOther, code)
	_, page = b.get(acct)
	assert.Contains(t, page, "was credited before: nothing changed")

	code, page = b.post(acct+"/credit", url.Values{"csrf": {tok}, "amount": {"-1"}, "ref": {"R"}})
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, page, "Nothing changed")
	code, _ = b.post(acct+"/credit", url.Values{"csrf": {tok}, "amount": {"3"}, "ref": {hostile}})
	assert.Equal(t, http.StatusConflict, code, "the same reference with another amount")
	code, _ = b.post(acct+"/credit", url.Values{"csrf": {tok}, "amount": {"3"}, "ref": {""}})
	assert.Equal(t, http.StatusBadRequest, code, "a credit without a reference")

	code, _ = b.post(acct+"/price", url.Values{"csrf": {tok}, "kind": {"cnam"}, "price": {"0.0042"}})
	require.Equal(t, http.StatusSeeOther, code)
	code, _ = b.post(acct+"/price", url.Values{"csrf": {tok}, "kind": {"nope"}, "price": {"1"}})
	assert.Equal(t, http.StatusBadRequest, code)
	code, _ = b.post(acct+"/suspend", url.Values{"csrf": {tok}})
	require.Equal(t, http.StatusSeeOther, code)
	_, page = b.get(acct)
	assert.Contains(t, page, `id="account-status">suspended`)
	code, _ = b.post(acct+"/resume", url.Values{"csrf": {tok}})
	require.Equal(t, http.StatusSeeOther, code)
	code, _ = b.post(acct+"/keys/"+f.keyID+"/revoke", url.Values{"csrf": {tok}})
	require.Equal(t, http.StatusSeeOther, code)
	code, _ = b.post(Accounts+"/acct_nope/suspend", url.Values{"csrf": {tok}})
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, 3, f.changed, "suspend, resume and revoke reload the keys")

	log, err := f.store.Audit(context.Background(), "", 0, 0)
	require.NoError(t, err)
	var actions []string
	for _, e := range log {
		actions = append(actions, e.Action)
		assert.Equal(t, ident("lnp_admin", "").KeyID, e.Key)
		assert.Equal(t, "console", e.Via)
		assert.Regexp(t, `^127\.0\.0\.1:\d+$`, e.Remote)
	}
	assert.Equal(t, []string{billing.AuditRevoke, billing.AuditActivate, billing.AuditSuspend, billing.AuditPrice, billing.AuditCredit, billing.AuditCredit}, actions)
	_, page = b.get(Audit)
	assert.Contains(t, page, "key.revoke")
	assert.Contains(t, page, "cnam $0.0042")
}

// TestHostileTextInert: every field an admin or customer sets (account
// name, key label, credit reference, and what the audit log repeats of
// them) is rendered as text.
func TestHostileTextInert(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t, "lnp_admin")
	acct := Accounts + "/" + f.acct.ID
	tok := b.csrf(acct)
	code, _ := b.post(acct+"/credit", url.Values{"csrf": {tok}, "amount": {"1"}, "ref": {hostile}})
	require.Equal(t, http.StatusSeeOther, code)
	for _, p := range []string{Home, Accounts, Accounts + "?q=" + url.QueryEscape(hostile), acct, Audit, Audit + "?account=" + url.QueryEscape(hostile), Jobs + "?account=" + url.QueryEscape(hostile)} {
		_, page := b.get(p)
		assert.NotContains(t, page, "<script>alert", p)
		assert.NotContains(t, page, "<img src=x", p)
		assert.NotContains(t, strings.ToLower(page), "onerror=alert(2)>", p)
	}
	_, page := b.get(acct)
	assert.Contains(t, page, html.EscapeString("<script>alert(1)</script>"), "the name is shown, as text")
}

func TestFrontEndChart(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t, "lnp_admin")
	code, page := b.get(FrontEnds)
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, page, `id="chart-rest-rate"`)
	m := regexp.MustCompile(`id="chart-rest-rate"[^>]*>[\s\S]*?<polyline[^>]*points="([^"]+)"`).FindStringSubmatch(page)
	require.NotNil(t, m, page)
	assert.Len(t, strings.Fields(m[1]), 30, "one vertex per sample")
	assert.Contains(t, page, `id="rest-rate-now">30.0/s`, "the last interval: 300 answers in 10 s")
	assert.Contains(t, page, "30 of 360")
}

func TestScaleTop(t *testing.T) {
	for v, want := range map[float64]float64{0: 1, 0.3: 0.5, 1: 1, 1.2: 2, 3: 5, 7: 10, 99: 100, 1234: 2000} {
		assert.InDelta(t, want, scaleTop(v), 1e-12, "%v", v)
	}
}

// TestWithoutAccounts: a --keys deployment's console only reads: no
// accounts or audit pages, and no link to them.
func TestWithoutAccounts(t *testing.T) {
	ui, err := webui.New(webui.Config{Admin: realm("admin", map[string]webui.Identity{"lnp_admin": ident("lnp_admin", "")}), SignInPerMinute: 1000})
	require.NoError(t, err)
	require.NoError(t, Register(ui, Config{Table: func() format.Info { return format.Info{ID: "t", Version: format.Version} }}))
	f := &fixture{srv: httptest.NewServer(ui)}
	t.Cleanup(f.srv.Close)
	b := f.browser(t, "lnp_admin")
	for _, p := range []string{Home, FrontEnds} {
		code, page := b.get(p)
		assert.Equal(t, http.StatusOK, code, p)
		assert.NotContains(t, page, `href="/console/accounts"`, p)
		assert.NotContains(t, page, `href="/console/audit"`, p)
	}
	_, page := b.get(FrontEnds)
	assert.Contains(t, page, "No history is kept")
	for _, p := range []string{Accounts, Audit} {
		code, _ := b.get(p)
		assert.Equal(t, http.StatusNotFound, code, p)
	}
	code, _ := b.post(Accounts+"/acct_x/suspend", url.Values{"csrf": {"x"}})
	assert.Equal(t, http.StatusNotFound, code)
}

// oldLabels is a store whose keys' labels are as a store kept them before
// the label rule: with a direction override and a new line.
type oldLabels struct{ billing.Store }

func (s oldLabels) Keys(ctx context.Context, account string) ([]billing.KeyRecord, error) {
	keys, err := s.Store.Keys(ctx, account)
	for i := range keys {
		keys[i].Label = "invoice\u202egpj.exe\n"
	}
	return keys, err
}

// TestOldLabelEscaped: a label stored before the rule refused control and
// format characters is shown escaped on an account's page: what it holds
// is seen, and no direction override reaches the browser.
func TestOldLabelEscaped(t *testing.T) {
	f := newFixtureOver(t, func(s billing.Store) billing.Store { return oldLabels{s} })
	b := f.browser(t, "lnp_admin")
	code, page := b.get(Accounts + "/" + f.acct.ID)
	require.Equal(t, http.StatusOK, code, page)
	assert.Contains(t, page, `<td>invoice\u202egpj.exe\n</td>`)
	assert.NotContains(t, page, "\u202e")
}

// TestJobs: the jobs of every account, newest first, capped at maxJobs,
// or one account's.
func TestJobs(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	other, err := f.store.CreateAccount(ctx, "other", time.Now())
	require.NoError(t, err)
	js := f.store.(billing.Jobs)
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	var ids []string
	for i := range maxJobs + 1 {
		acct := f.acct.ID
		if i%2 == 1 {
			acct = other.ID
		}
		j, err := js.CreateJob(ctx, billing.JobSpec{AccountID: acct, Kind: "cnam", Numbers: []string{"2025550123", "x"}}, billing.JobLimits{}, t0.Add(time.Duration(i)*time.Second))
		require.NoError(t, err)
		ids = append(ids, j.ID)
	}
	b := f.browser(t, "lnp_admin")
	code, page := b.get(Jobs)
	require.Equal(t, http.StatusOK, code, page)
	assert.Contains(t, page, `<a href="/console/jobs" aria-current="page">Jobs</a>`)
	assert.Equal(t, maxJobs, strings.Count(page, `<tr id="job-`), "capped")
	assert.NotContains(t, page, ids[0], "the oldest is past the cap")
	newest := strings.Index(page, ids[maxJobs])
	require.Positive(t, newest)
	assert.Less(t, newest, strings.Index(page, ids[maxJobs-1]), "newest first")
	assert.Contains(t, page, `<td><a href="/console/accounts/`+f.acct.ID+`">`+f.acct.ID+`</a></td><td>cnam</td><td>queued</td><td class="num">0 / 2</td><td class="num">$0.00</td><td>2026-11-27 09:03:20 UTC</td><td>—</td>`)
	assert.Contains(t, page, "Older jobs are not listed: choose an account.")

	code, page = b.get(Jobs + "?account=" + other.ID)
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, maxJobs/2, strings.Count(page, `<tr id="job-`), "the other account's only")
	assert.NotContains(t, page, "/console/accounts/"+f.acct.ID+`"`)
	assert.NotContains(t, page, "Older jobs")
}
