package account

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/httpapi"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/jobsapi"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/webui"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/jobs"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/delivery"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/diptest"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testweb"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// site is the account pages over a real bbolt store and billing engine,
// on a real socket, with two accounts.
type site struct {
	srv      *httptest.Server
	store    billing.Store
	engine   *billing.Engine
	ui       *webui.UI
	a, b     billing.Account
	keyA     string
	keyB     string
	keyBID   string
	lookups  int
	newKeyNo atomic.Int64
	// settled receives each playground answer's settlement: whether the
	// page that showed it was delivered. apiWaits makes the API answer
	// only once the request's client has gone.
	settled  chan bool
	apiWaits bool
	inAPI    chan struct{}
	// With withJobs: the lookup jobs API, its worker, and the REST API
	// serving it with keyA's account's key apiKey.
	bolt   *billing.BoltStore
	jobs   *jobsapi.API
	worker *jobs.Worker
	rest   *httptest.Server
	apiKey string
	nums   diptest.Numbers
}

// withJobs gives the site the jobs page, over the lookup jobs API of a
// REST API on the sample table, and a worker the test steps.
func withJobs(lim billing.JobLimits) func(*testing.T, *site, *Config) {
	return func(t *testing.T, s *site, cfg *Config) {
		db := testdb.Sample(t)
		s.nums = diptest.Find(t, db)
		s.apiKey = auth.NewKey()
		k := auth.HashKey(s.apiKey)
		k.Limit = 1_000_000
		var err error
		s.jobs, err = jobsapi.New(jobsapi.Config{Store: s.bolt, Limits: lim, Queued: func() { s.worker.Wake() },
			AccountOf: func(got auth.Key) (string, bool) { return s.a.ID, got.Hash == k.Hash }})
		require.NoError(t, err)
		h, err := httpapi.New(httpapi.Config{Tables: diptest.Fixed(db), Keys: auth.NewKeySet(k), Keyed: s.jobs.Routes()})
		require.NoError(t, err)
		s.worker, err = jobs.New(jobs.Config{Store: s.bolt, Answer: h.AnswerJob, Slice: 7})
		require.NoError(t, err)
		s.rest = httptest.NewServer(h)
		t.Cleanup(s.rest.Close)
		cfg.Jobs = s.jobs
	}
}

func newSite(t *testing.T, opts ...func(*testing.T, *site, *Config)) *site {
	t.Helper()
	return newSiteOver(t, nil, opts...)
}

// newSiteOver is newSite with the pages reading the store through wrap,
// when not nil.
func newSiteOver(t *testing.T, wrap func(billing.Store) billing.Store, opts ...func(*testing.T, *site, *Config)) *site {
	t.Helper()
	ctx := context.Background()
	st, err := billing.OpenBolt(filepath.Join(t.TempDir(), "accounts.db"))
	require.NoError(t, err)
	s := &site{store: st, bolt: st, settled: make(chan bool, 10), inAPI: make(chan struct{}, 10)}
	now := time.Now()
	for _, acc := range []*billing.Account{&s.a, &s.b} {
		*acc, err = st.CreateAccount(ctx, "acct", now)
		require.NoError(t, err)
		_, _, err = st.Credit(ctx, acc.ID, 5*billing.MicrosPerDollar, "r", now)
		require.NoError(t, err)
	}
	s.keyA, s.keyB = "lnp_a_key", "lnp_b_key"
	_, err = st.AddKey(ctx, billing.KeyRecord{AccountID: s.a.ID, Label: "a", Hash: sha256.Sum256([]byte(s.keyA)), Limit: 50}, now)
	require.NoError(t, err)
	kb, err := st.AddKey(ctx, billing.KeyRecord{AccountID: s.b.ID, Label: "b", Hash: sha256.Sum256([]byte(s.keyB))}, now)
	require.NoError(t, err)
	s.keyBID = kb.ID
	s.engine, err = billing.NewEngine(ctx, billing.EngineConfig{Store: st})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.engine.Close(context.Background()); st.Close() })
	s.ui, err = webui.New(webui.Config{Customer: &webui.Realm{
		SignIn: func(key string) (webui.Identity, error) {
			rec, ok := s.engine.Authenticate(key)
			if !ok && s.engine.Suspended(key) {
				return webui.Identity{}, webui.ErrSuspended
			}
			if !ok {
				return webui.Identity{}, webui.ErrUnknownKey
			}
			return webui.Identity{KeyHash: rec.Hash, KeyID: rec.ID, AccountID: rec.AccountID, Limit: rec.Limit}, nil
		},
		Valid: func(id webui.Identity) bool {
			rec, ok := s.engine.Lookup(id.KeyHash)
			return ok && rec.AccountID == id.AccountID
		},
	}})
	require.NoError(t, err)
	// The lookup API as the playground sees it: a key the engine knows.
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if _, ok := s.engine.Authenticate(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")); !ok {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":"Invalid API key","code":"INVALID_API_KEY","details":"x"}`)
			return
		}
		s.lookups++
		if s.apiWaits {
			s.inAPI <- struct{}{}
			<-r.Context().Done()
		}
		// As the API does with a charged answer: its payment is settled
		// with the page.
		rl, ok := delivery.RelayOf(w)
		if !ok {
			panic("the playground's writer is not a delivery.Relay")
		}
		rl.Relay(func(delivered bool) { s.settled <- delivered })
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		_ = json.NewEncoder(w).Encode(map[string]any{"phone_number": body["phone_number"], "lrn": "12025550000", "path": r.URL.Path, "enhanced": body["include_enhanced_lrn"]})
	})
	var pagesStore billing.Store = st
	if wrap != nil {
		pagesStore = wrap(st)
	}
	cfg := Config{
		UI: s.ui, Store: pagesStore, Engine: s.engine, API: api, DefaultLimit: 200,
		NewKey: func() (string, [32]byte) {
			k := "lnp_new_" + strings.Repeat("x", int(s.newKeyNo.Add(1)))
			return k, sha256.Sum256([]byte(k))
		},
		Changed: func(ctx context.Context) { require.NoError(t, s.engine.ReloadKeys(ctx)) },
	}
	for _, o := range opts {
		o(t, s, &cfg)
	}
	require.NoError(t, Register(cfg))
	s.srv = httptest.NewServer(s.ui)
	t.Cleanup(s.srv.Close)
	return s
}

// settlement returns the next playground answer's settlement, failing t
// if none comes (its payment would be held for ever).
func (s *site) settlement(t *testing.T) bool {
	t.Helper()
	select {
	case d := <-s.settled:
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("the playground's answer was never settled")
		return false
	}
}

type browser struct {
	c   *http.Client
	srv *httptest.Server
}

func (s *site) signIn(t *testing.T, key string) *browser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	b := &browser{c: c, srv: s.srv}
	resp, body, err := testweb.SignIn(c, s.srv.URL, webui.AccountSignIn, key)
	require.NoError(t, err)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	return b
}

func (b *browser) get(t *testing.T, path string) (*http.Response, string) {
	t.Helper()
	resp, err := b.c.Get(b.srv.URL + path)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

func (b *browser) post(t *testing.T, path string, form url.Values) (*http.Response, string) {
	t.Helper()
	resp, err := b.c.PostForm(b.srv.URL+path, form)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (b *browser) csrf(t *testing.T) string {
	t.Helper()
	_, body := b.get(t, "/account/keys")
	m := csrfRE.FindStringSubmatch(body)
	require.NotNil(t, m, body)
	return m[1]
}

func TestHome(t *testing.T) {
	s := newSite(t)
	b := s.signIn(t, s.keyA)
	resp, body := b.get(t, webui.AccountHome)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	assert.Contains(t, body, `<dd id="balance">$5.00</dd>`)
	assert.Contains(t, body, "50 lookups per minute for this key")
	assert.Contains(t, body, s.a.ID)
	assert.NotContains(t, body, s.b.ID)
	assert.Contains(t, body, "No lookups in these 90 days.")
	resp, body = b.get(t, "/account/usage.csv")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "account_id,day,kind,lookups,free,amount_micros,amount_usd\n", body)
}

// TestKeys: a key made (shown once, its limit at most the signed-in
// key's), the refusals, and revocation — of another account's key never.
func TestKeys(t *testing.T) {
	s := newSite(t)
	b := s.signIn(t, s.keyA)
	tok := b.csrf(t)
	for name, tc := range map[string]struct {
		form url.Values
		code int
		want string
	}{
		"limit above the key's": {url.Values{"label": {"x"}, "rate_limit": {"51"}}, http.StatusBadRequest, "from 1 to 50"},
		"limit not a number":    {url.Values{"label": {"x"}, "rate_limit": {"1e3"}}, http.StatusBadRequest, "from 1 to 50"},
		"limit zero":            {url.Values{"label": {"x"}, "rate_limit": {"0"}}, http.StatusBadRequest, "from 1 to 50"},
		"label too long":        {url.Values{"label": {strings.Repeat("é", MaxLabel+1)}}, http.StatusBadRequest, "at most 100 characters"},
		"label with a newline":  {url.Values{"label": {"a\nb"}}, http.StatusBadRequest, "control or format characters"},
		"label with U+202E":     {url.Values{"label": {"invoice\u202egpj.exe"}}, http.StatusBadRequest, "control or format characters"},
		"label with U+200B":     {url.Values{"label": {"a\u200bb"}}, http.StatusBadRequest, "control or format characters"},
		"label with U+2028":     {url.Values{"label": {"a\u2028b"}}, http.StatusBadRequest, "control or format characters"},
		"label with U+0085":     {url.Values{"label": {"a\u0085b"}}, http.StatusBadRequest, "control or format characters"},
		"label not UTF-8":       {url.Values{"label": {"\xff"}}, http.StatusBadRequest, "UTF-8"},
	} {
		tc.form.Set("csrf", tok)
		resp, body := b.post(t, "/account/keys", tc.form)
		assert.Equal(t, tc.code, resp.StatusCode, name)
		assert.Contains(t, body, tc.want, name)
	}
	keys, err := s.store.Keys(context.Background(), s.a.ID)
	require.NoError(t, err)
	assert.Len(t, keys, 1, "nothing refused was made")

	resp, body := b.post(t, "/account/keys", url.Values{"csrf": {tok}, "label": {"ci"}, "rate_limit": {"20"}})
	require.Equal(t, http.StatusCreated, resp.StatusCode, body)
	assert.Contains(t, body, `value="lnp_new_x"`, "the key, shown once")
	rec, ok := s.engine.Authenticate("lnp_new_x")
	require.True(t, ok, "the engine knows the new key at once")
	assert.Equal(t, 20, rec.Limit)
	assert.Equal(t, s.a.ID, rec.AccountID)
	_, body = b.get(t, "/account/keys")
	assert.NotContains(t, body, "lnp_new_x", "shown only once")
	assert.Contains(t, body, rec.ID)
	assert.Contains(t, body, `<td class="last-used">—</td>`, "never used")
	require.NoError(t, s.store.KeysUsed(context.Background(), map[string]time.Time{rec.ID: time.Date(2026, 11, 27, 3, 4, 5, 0, time.UTC)}))
	_, body = b.get(t, "/account/keys")
	assert.Contains(t, body, `<td class="last-used">2026-11-27 03:04 UTC</td>`)

	// Empty: the signed-in key's limit.
	resp, _ = b.post(t, "/account/keys", url.Values{"csrf": {tok}})
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	rec2, _ := s.engine.Authenticate("lnp_new_xx")
	assert.Equal(t, 50, rec2.Limit)

	audit, err := s.store.Audit(context.Background(), s.a.ID, 0, 0)
	require.NoError(t, err)
	require.Len(t, audit, 2, "each key made is in the audit log")
	assert.Equal(t, billing.AuditNewKey, audit[1].Action)
	assert.Equal(t, "account", audit[1].Via)
	assert.Regexp(t, `^key_`, audit[1].Key, "made by the session's key")

	// Another account's key: not found, and still valid.
	resp, _ = b.post(t, "/account/keys/"+s.keyBID+"/revoke", url.Values{"csrf": {tok}})
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	_, ok = s.engine.Authenticate(s.keyB)
	assert.True(t, ok)

	resp, _ = b.post(t, "/account/keys/"+rec.ID+"/revoke", url.Values{"csrf": {tok}})
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, ok = s.engine.Authenticate("lnp_new_x")
	assert.False(t, ok, "revoked at once")
	_, body = b.get(t, "/account/keys")
	assert.Contains(t, body, "Key "+rec.ID+" is revoked")

	// A session of the revoked key ends with it.
	other := s.signIn(t, "lnp_new_xx")
	resp, _ = b.post(t, "/account/keys/"+rec2.ID+"/revoke", url.Values{"csrf": {tok}})
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	resp, _ = other.get(t, webui.AccountHome)
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, webui.AccountSignIn, resp.Header.Get("Location"))

	// Revoking the key of this very session signs it out.
	ownID := ""
	keys, _ = s.store.Keys(context.Background(), s.a.ID)
	for _, k := range keys {
		if k.Label == "a" {
			ownID = k.ID
		}
	}
	resp, _ = b.post(t, "/account/keys/"+ownID+"/revoke", url.Values{"csrf": {tok}})
	assert.Equal(t, webui.AccountSignIn, resp.Header.Get("Location"))
	resp, _ = b.get(t, webui.AccountHome)
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
}

func TestMaxKeys(t *testing.T) {
	s := newSite(t)
	b := s.signIn(t, s.keyA)
	tok := b.csrf(t)
	for i := 1; i < MaxKeys; i++ {
		resp, _ := b.post(t, "/account/keys", url.Values{"csrf": {tok}})
		require.Equal(t, http.StatusCreated, resp.StatusCode, i)
	}
	resp, body := b.post(t, "/account/keys", url.Values{"csrf": {tok}})
	assert.Equal(t, http.StatusConflict, resp.StatusCode)
	assert.Contains(t, body, "25 valid keys")
}

// TestMaxKeysTogether: keys made together from one account's pages, more
// than the cap, leave no more than the cap valid (the store counts and
// adds in one transaction).
func TestMaxKeysTogether(t *testing.T) {
	s := newSite(t)
	b := s.signIn(t, s.keyA)
	tok := b.csrf(t)
	var wg sync.WaitGroup
	codes := make([]int, 40)
	for i := range codes {
		wg.Go(func() {
			resp, err := b.c.PostForm(b.srv.URL+"/account/keys", url.Values{"csrf": {tok}})
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				codes[i] = resp.StatusCode
			}
		})
	}
	wg.Wait()
	created := 0
	for _, c := range codes {
		if c == http.StatusCreated {
			created++
		} else {
			assert.Equal(t, http.StatusConflict, c)
		}
	}
	keys, err := s.store.Keys(context.Background(), s.a.ID)
	require.NoError(t, err)
	assert.Len(t, keys, MaxKeys, "the signed-in key and %d made", created)
	assert.Equal(t, MaxKeys-1, created)
}

func TestPlayground(t *testing.T) {
	s := newSite(t)
	b := s.signIn(t, s.keyA)
	tok := b.csrf(t)
	resp, body := b.post(t, "/account/playground", url.Values{"csrf": {tok}, "number": {"+1 (202) 555-0123"}, "kind": {"lrn_enhanced"}, "key": {s.keyA}})
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Equal(t, 1, s.lookups)
	assert.Contains(t, body, `&#34;path&#34;: &#34;/api/v1/lrn&#34;`)
	assert.Contains(t, body, `&#34;enhanced&#34;: true`)
	assert.Contains(t, body, "curl -s http://"+strings.TrimPrefix(s.srv.URL, "http://")+"/api/v1/lrn")
	assert.Contains(t, body, "&lt;API_KEY&gt;")
	assert.NotContains(t, body, s.keyA, "the key typed is not written back")
	assert.True(t, s.settlement(t), "the answer is settled as delivered with its page")

	resp, body = b.post(t, "/account/playground", url.Values{"csrf": {tok}, "number": {"12025550123"}, "kind": {"cnam"}, "key": {"lnp_wrong"}})
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, `<span id="answer-status">401</span>`)
	for name, form := range map[string]url.Values{
		"bad kind":      {"number": {"12025550123"}, "kind": {"x"}, "key": {s.keyA}},
		"quote in it":   {"number": {"1202'555"}, "kind": {"lrn"}, "key": {s.keyA}},
		"too long":      {"number": {strings.Repeat("1", 33)}, "kind": {"lrn"}, "key": {s.keyA}},
		"no key":        {"number": {"12025550123"}, "kind": {"lrn"}},
		"markup in it":  {"number": {`"><script>alert(1)</script>`}, "kind": {"lrn"}, "key": {s.keyA}},
		"empty number":  {"number": {""}, "kind": {"lrn"}, "key": {s.keyA}},
		"no kind given": {"number": {"12025550123"}, "key": {s.keyA}},
	} {
		form.Set("csrf", tok)
		resp, body := b.post(t, "/account/playground", form)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, name)
		assert.NotContains(t, body, "<script>alert", name)
	}
	assert.Equal(t, 1, s.lookups, "no refused form reached the API")
}

// TestPlaygroundNotDelivered: a playground answer whose page does not
// reach its client (gone before the page was written) is settled as not
// delivered: the lookup is not charged.
func TestPlaygroundNotDelivered(t *testing.T) {
	s := newSite(t)
	s.apiWaits = true
	b := s.signIn(t, s.keyA)
	tok := b.csrf(t)
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.srv.URL+"/account/playground",
		strings.NewReader(url.Values{"csrf": {tok}, "number": {"12025550123"}, "kind": {"lrn"}, "key": {s.keyA}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	done := make(chan error, 1)
	go func() {
		res, err := b.c.Do(req)
		if err == nil {
			res.Body.Close()
		}
		done <- err
	}()
	<-s.inAPI
	cancel()
	assert.Error(t, <-done)
	assert.False(t, s.settlement(t), "the answer's page was not delivered")
}

func TestSummarize(t *testing.T) {
	now := time.Date(2026, 1, 15, 13, 0, 0, 0, time.UTC)
	first, last := usageWindow(now)
	assert.Equal(t, "2025-10-18", first.Format("2006-01-02"))
	assert.Equal(t, "2026-01-15", last.Format("2006-01-02"))
	assert.Equal(t, []string{"2025-10", "2025-11", "2025-12", "2026-01"}, months(first, last))
	rows := []billing.UsageRow{
		{Day: "2025-10-17", Kind: billing.KindLRN, Lookups: 1000, Amount: 1},       // before the window
		{Day: "2025-10-18", Kind: billing.KindLRN, Lookups: 4, Free: 4},            // its first day
		{Day: "2026-01-15", Kind: billing.KindCNAM, Lookups: 2, Amount: 6000},      // its last
		{Day: "2026-01-15", Kind: billing.KindLRN, Lookups: 3, Amount: 3000},       // same day
		{Day: "2026-01-15<x", Kind: billing.KindLRN, Lookups: 7, Amount: 7000},     // no day
		{Day: "2026-01-16", Kind: billing.KindTrust, Lookups: 9, Amount: 18000},    // after it
		{Day: "2026-01-10", Kind: billing.Kind("other"), Lookups: 9, Amount: 1000}, // no kind
	}
	u := summarize(rows, first, last)
	assert.Equal(t, int64(9), u.Total)
	assert.Equal(t, billing.Micros(9000), u.Amount)
	require.Len(t, u.Days, 2)
	assert.Equal(t, "2026-01-15", u.Days[0].Day, "latest first")
	assert.Equal(t, int64(5), u.Days[0].Total)
	assert.Equal(t, billing.Micros(9000), u.Days[0].Amount)
	assert.Len(t, u.Chart.Bars, 3)
	for _, bar := range u.Chart.Bars {
		assert.GreaterOrEqual(t, bar.H, 1)
		assert.GreaterOrEqual(t, bar.Y, plotY)
		assert.LessOrEqual(t, bar.Y+bar.H, plotY+plotH)
		assert.Less(t, bar.X+bar.W, plotX+plotW+barStep)
	}
	assert.Equal(t, int64(4), u.ByKind[0].Free)
	assert.Equal(t, int64(10), u.Chart.Ticks[1].Value)
	for peak, want := range map[int64]int64{0: 10, 10: 10, 11: 20, 21: 50, 51: 100, 999: 1000, 1001: 2000} {
		assert.Equal(t, want, niceCeil(peak), peak)
	}
}

// TestSuspendedAccount: suspending the account ends its sessions at their
// next request, and its keys no longer sign in.
func TestSuspendedAccount(t *testing.T) {
	s := newSite(t)
	b := s.signIn(t, s.keyA)
	resp, _ := b.get(t, webui.AccountHome)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	ctx := context.Background()
	_, err := s.store.SetStatus(ctx, s.a.ID, billing.StatusSuspended)
	require.NoError(t, err)
	require.NoError(t, s.engine.ReloadKeys(ctx))
	resp, _ = b.get(t, webui.AccountHome)
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, webui.AccountSignIn, resp.Header.Get("Location"))
	resp, body, err := testweb.SignIn(b.c, s.srv.URL, webui.AccountSignIn, s.keyA)
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Contains(t, body, "suspended")
	other := s.signIn(t, s.keyB)
	resp, _ = other.get(t, webui.AccountHome)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "another account is not touched")
}

// oldLabels is a store whose keys' labels are as a store kept them before
// the label rule: with a direction override and a new line.
type oldLabels struct{ billing.Store }

const oldLabel = "invoice\u202egpj.exe\n\xff"

func (s oldLabels) Keys(ctx context.Context, account string) ([]billing.KeyRecord, error) {
	keys, err := s.Store.Keys(ctx, account)
	for i := range keys {
		keys[i].Label = oldLabel
	}
	return keys, err
}

// TestOldLabelEscaped: a label stored before the rule refused control and
// format characters is shown escaped on the keys page: what it holds is
// seen, and no direction override reaches the browser.
func TestOldLabelEscaped(t *testing.T) {
	s := newSiteOver(t, func(st billing.Store) billing.Store { return oldLabels{st} })
	b := s.signIn(t, s.keyA)
	_, body := b.get(t, "/account/keys")
	assert.Contains(t, body, `<td class="label">invoice\u202egpj.exe\n\xff</td>`)
	assert.NotContains(t, body, "\u202e")
	assert.True(t, utf8.ValidString(body))
}
