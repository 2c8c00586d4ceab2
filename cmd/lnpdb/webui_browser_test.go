package main

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/root"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/webui"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testchromium"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testpg"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// screenshotsEnv names a directory to write the account pages'
// screenshots to (docs/images when they are refreshed); unset, none are
// written.
const screenshotsEnv = "LNPDB_TEST_SCREENSHOTS"

// browser is a test's tab of the shared headless chromium, with what the
// pages did that a test must see: dialogs opened (a script that ran) and
// the Content Security Policy's refusals.
type browser struct {
	ctx     context.Context
	dialogs atomic.Int32
	mu      sync.Mutex
	csp     []string
}

// chromium is the one headless chromium the browser tests share, started
// by the first of them and stopped when the tests end (stopBrowser, from
// TestMain): starting one is most of a short browser test's time.
var chromium struct {
	once sync.Once
	ctx  context.Context
	stop func()
	err  error
}

// stopBrowser stops the shared chromium, if a test started it.
func stopBrowser() {
	if chromium.stop != nil {
		chromium.stop()
	}
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	testchromium.Need(t)
	chromium.once.Do(func() { chromium.ctx, chromium.stop, chromium.err = testchromium.Start() })
	require.NoError(t, chromium.err, "starting chromium")
	// A browser context of its own: the test's cookies are its own.
	ctx, cancel := chromedp.NewContext(chromium.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	b := &browser{ctx: ctx}
	require.NoError(t, chromedp.Do(ctx), "opening a tab")
	testchromium.WatchCSP(ctx, func(text string) {
		b.mu.Lock()
		b.csp = append(b.csp, text)
		b.mu.Unlock()
	})
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			b.dialogs.Add(1)
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	return b
}

func (b *browser) cspRefusals() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.csp...)
}

// do runs steps within 15 s.
func (b *browser) do(t *testing.T, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, steps...))
}

// load runs steps that load a page and returns its status.
func (b *browser) load(t *testing.T, steps ...chromedp.Action[chromedp.Void]) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, steps...)
	require.NoError(t, err)
	return resp.Status
}

func eval[T any](t *testing.T, b *browser, js string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	require.NoError(t, err, js)
	return v
}

func text(t *testing.T, b *browser, sel string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel)))
	require.NoError(t, err, sel)
	return strings.TrimSpace(v)
}

// seedAccount makes an account in the store at dsn with $25 and a key, and
// gives it 90 days of usage: lookups of three kinds on two days of three.
// It returns the account, the key, the balance left, and the number of
// (day, kind) pairs with lookups (the chart's bars).
func seedAccount(t *testing.T, dsn string) (acct billing.Account, key string, balance billing.Micros, bars int) {
	t.Helper()
	ctx := context.Background()
	s, err := billing.Open(ctx, dsn)
	require.NoError(t, err)
	defer s.Close()
	now := time.Now()
	acct, err = s.CreateAccount(ctx, "Acme Telecom", now)
	require.NoError(t, err)
	_, _, err = s.Credit(ctx, acct.ID, 25*billing.MicrosPerDollar, "INV-1", now)
	require.NoError(t, err)
	key = auth.NewKey()
	_, err = s.AddKey(ctx, billing.KeyRecord{AccountID: acct.ID, Label: "production", Hash: auth.HashKey(key).Hash}, now)
	require.NoError(t, err)

	var rows []billing.UsageRow
	var spent billing.Micros
	for i := range 90 {
		if i%3 == 0 {
			continue
		}
		day := billing.Day(now.AddDate(0, 0, -i))
		for _, u := range []struct {
			kind billing.Kind
			n    int64
		}{{billing.KindLRN, int64(40 + (i*37)%60)}, {billing.KindLRNEnhanced, int64((i * 13) % 25)}, {billing.KindCNAM, int64(i % 7)}} {
			if u.n == 0 {
				continue
			}
			amount := billing.Micros(u.n) * billing.DefaultPrices[u.kind]
			rows = append(rows, billing.UsageRow{AccountID: acct.ID, Day: day, Kind: u.kind, Lookups: u.n, Amount: amount})
			spent += amount
			bars++
		}
	}
	st, err := s.Sync(ctx, now, time.Minute, []billing.LeaseSync{{Account: acct.ID, Holder: "seed", WantCredit: spent}})
	require.NoError(t, err)
	require.NoError(t, st[0].Err)
	st, err = s.Sync(ctx, now, time.Minute, []billing.LeaseSync{{Account: acct.ID, Lease: st[0].Lease, Holder: "seed", Seq: 1, SpentCredit: spent, Usage: rows, Release: true}})
	require.NoError(t, err)
	require.NoError(t, st[0].Err)
	return acct, key, 25*billing.MicrosPerDollar - spent, bars
}

// TestBrowserAccount drives the account pages in a real browser against a
// real serve --accounts: signing in, the balance, the chart, keys made and
// revoked (and the API refusing the revoked one), forms without their CSRF
// token, hostile labels and numbers, the playground, and a customer's
// session on an operator's page. One browser serves every step.
// The same steps run against the embedded store and PostgreSQL, in one
// browser.
func TestBrowserAccount(t *testing.T) {
	b := newBrowser(t)
	table := testdb.Build(t, lnpdb.Sample())
	t.Run("bolt", func(t *testing.T) {
		browseAccount(t, b, table, "bolt://"+filepath.Join(t.TempDir(), "accounts.db"), os.Getenv(screenshotsEnv))
	})
	t.Run("postgres", func(t *testing.T) {
		browseAccount(t, b, table, testpg.New(t), "")
	})
}

// browseAccount runs the steps against a serve --accounts dsn; shots, when
// set, is the directory the account page's screenshots are written to.
func browseAccount(t *testing.T, b *browser, table, dsn, shots string) {
	cspBefore := len(b.cspRefusals()) // what an earlier run provoked
	dir := t.TempDir()
	_, key, balance, bars := seedAccount(t, dsn)
	admins := filepath.Join(dir, "admin-keys")
	var out, errb bytes.Buffer
	require.Equal(t, 0, root.Run(context.Background(), &cliutil.Env{Stdout: &out, Stderr: &errb}, []string{"key", "new", "--keys", admins}), errb.String())
	s := startServe(t, "--db", table, "--accounts", dsn, "--admin-keys", admins, "--addr", "127.0.0.1:0", "--access-log=false")
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)

	t.Run("SignIn", func(t *testing.T) {
		assert.Equal(t, int64(http.StatusOK), b.load(t, chromedp.Navigate(base+webui.AccountHome)), "sent to the sign-in page")
		assert.Equal(t, base+webui.AccountSignIn, eval[string](t, b, "location.href"))
		assert.Equal(t, int64(http.StatusUnauthorized), b.load(t, chromedp.SendKeys(chromedp.ID("key"), "lnp_wrong"), chromedp.Submit(chromedp.ID("key"))))
		assert.Contains(t, text(t, b, "p.error"), "not a valid key")
		assert.Equal(t, int64(http.StatusOK), b.load(t, chromedp.SendKeys(chromedp.ID("key"), key), chromedp.Submit(chromedp.ID("key"))))
		assert.Equal(t, base+webui.AccountHome, eval[string](t, b, "location.href"))
		assert.False(t, eval[bool](t, b, "document.cookie.includes('lnpdb_session')"), "the session cookie is HttpOnly")
	})

	t.Run("Balance", func(t *testing.T) {
		assert.Equal(t, "$"+balance.String(), text(t, b, "#balance"))
		assert.Equal(t, "Acme Telecom", text(t, b, "#acct-h"))
		assert.Contains(t, text(t, b, "#free-left"), "10 of 10")
		assert.Contains(t, text(t, b, "#rate-limit"), "200 lookups per minute")
		assert.Contains(t, text(t, b, "#prices"), "$0.003")
	})

	t.Run("Chart", func(t *testing.T) {
		assert.Equal(t, float64(bars), eval[float64](t, b, "document.querySelectorAll('#usage-chart rect.bar').length"))
		assert.Greater(t, eval[float64](t, b, "document.querySelector('#usage-chart').getBoundingClientRect().width"), 300.0, "the chart is drawn")
		// The style sheet reached the chart (CSP allows it; colours by kind).
		assert.Equal(t, "rgb(11, 87, 164)", eval[string](t, b, "getComputedStyle(document.querySelector('#usage-chart rect.k-lrn')).fill"))
		assert.Equal(t, float64(60), eval[float64](t, b, "document.querySelectorAll('#usage-table tbody tr').length"), "a row per day with lookups")
		if shots != "" {
			for _, v := range []struct {
				name string
				w, h int64
			}{{"account.png", 1200, 900}, {"account-phone.png", 390, 844}} {
				b.do(t, chromedp.EmulateViewport(v.w, v.h))
				ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
				png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
				cancel()
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(shots, v.name), png, 0o644))
			}
			b.do(t, chromedp.EmulateViewport(1200, 900))
		}
	})

	t.Run("UsageCSV", func(t *testing.T) {
		cookie := sessionCookie(t, b, base)
		req, _ := http.NewRequest(http.MethodGet, base+"/account/usage.csv", nil)
		req.AddCookie(cookie)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var body bytes.Buffer
		_, _ = body.ReadFrom(res.Body)
		res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode)
		assert.Contains(t, res.Header.Get("Content-Disposition"), "attachment")
		assert.Equal(t, bars+1, strings.Count(body.String(), "\n"), "a line per (day, kind) and the header")
	})

	var made string
	t.Run("CreateKeyWithHostileLabels", func(t *testing.T) {
		for _, label := range []string{`<script>alert(1)</script>`, `"><img src=x onerror=alert(2)>`} {
			require.Equal(t, int64(http.StatusOK), b.load(t, chromedp.Navigate(base+"/account/keys")))
			assert.Equal(t, int64(http.StatusCreated), b.load(t, chromedp.SendKeys(chromedp.ID("label"), label), chromedp.Submit(chromedp.ID("label"))))
			made = eval[string](t, b, "document.getElementById('new-key').value")
			require.Regexp(t, `^lnp_[a-z2-7]{32}$`, made)
			assert.Contains(t, text(t, b, "label[for=new-key]"), label, "the label shown as text")
			b.load(t, chromedp.Navigate(base+"/account/keys"))
			labels := eval[[]string](t, b, "[...document.querySelectorAll('#keys td.label')].map(td => td.textContent)")
			assert.Contains(t, labels, label, "shown escaped, as typed")
			assert.Zero(t, eval[float64](t, b, "document.querySelectorAll('main script, main img, #keys svg').length"), "no element made of a label")
		}
		time.Sleep(100 * time.Millisecond) // an onerror would have fired
		assert.Zero(t, b.dialogs.Load(), "no script of a label ran")
		code, body := call(t, "POST", base+"/api/v1/lrn", made, `{"phone_number":"12025550123"}`)
		assert.Equal(t, http.StatusOK, code, "the new key works: %s", body)
	})

	t.Run("RevokeKey", func(t *testing.T) {
		id := eval[string](t, b, "[...document.querySelectorAll('#keys tr')].find(tr => tr.querySelector('td.label')?.textContent.includes('onerror')).id.slice(4)")
		require.NotEmpty(t, id)
		assert.Equal(t, int64(http.StatusOK), b.load(t, chromedp.Click(chromedp.CSS(`#key-`+id+` button`))))
		assert.Contains(t, text(t, b, "p.flash"), id+" is revoked")
		assert.Contains(t, text(t, b, "#key-"+id), "revoked")
		code, body := call(t, "POST", base+"/api/v1/lrn", made, `{"phone_number":"12025550123"}`)
		assert.Equal(t, http.StatusUnauthorized, code, "the API refuses the revoked key at once: %s", body)
	})

	t.Run("CSRF", func(t *testing.T) {
		b.load(t, chromedp.Navigate(base+"/account/keys"))
		before := eval[float64](t, b, "document.querySelectorAll('#keys tbody tr').length")
		// The form without its token, submitted by the browser.
		b.do(t, chromedp.Evaluate[chromedp.Void]("document.querySelector('form[action=\"/account/keys\"] input[name=csrf]').remove()"))
		assert.Equal(t, int64(http.StatusForbidden), b.load(t, chromedp.SendKeys(chromedp.ID("label"), "forged"), chromedp.Submit(chromedp.ID("label"))))
		assert.Contains(t, text(t, b, "main"), "CSRF token")
		// And from another program holding the session's cookie.
		cookie := sessionCookie(t, b, base)
		for name, form := range map[string]url.Values{"no token": {"label": {"forged"}}, "wrong token": {"label": {"forged"}, "csrf": {"x"}}} {
			req, _ := http.NewRequest(http.MethodPost, base+"/account/keys", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(cookie)
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			res.Body.Close()
			assert.Equal(t, http.StatusForbidden, res.StatusCode, name)
		}
		b.load(t, chromedp.Navigate(base+"/account/keys"))
		assert.Equal(t, before, eval[float64](t, b, "document.querySelectorAll('#keys tbody tr').length"), "no key made")
	})

	t.Run("Playground", func(t *testing.T) {
		b.load(t, chromedp.Navigate(base+"/account/playground"))
		hostile := `"><img src=x onerror=alert(3)>`
		assert.Equal(t, int64(http.StatusBadRequest), b.load(t, chromedp.SetValue(chromedp.ID("number"), hostile), chromedp.SendKeys(chromedp.ID("pkey"), key), chromedp.Submit(chromedp.ID("pkey"))))
		assert.Equal(t, hostile, eval[string](t, b, "document.getElementById('number').value"), "the hostile number is the field's text")
		assert.Zero(t, eval[float64](t, b, "document.querySelectorAll('main img').length"))
		assert.Equal(t, int64(http.StatusOK), b.load(t, chromedp.SetValue(chromedp.ID("number"), "12025550123"), chromedp.SetValue(chromedp.ID("kind"), "lrn_enhanced"),
			chromedp.SendKeys(chromedp.ID("pkey"), key), chromedp.Submit(chromedp.ID("pkey"))))
		assert.Equal(t, "200", text(t, b, "#answer-status"))
		assert.Contains(t, text(t, b, "#answer"), `"lrn": "`)
		curl := text(t, b, "#curl")
		assert.Contains(t, curl, "curl -s "+base+"/api/v1/lrn")
		assert.Contains(t, curl, `"include_enhanced_lrn":true`)
		assert.NotContains(t, curl, key, "the key is not written into the page")
		assert.Zero(t, b.dialogs.Load())
	})

	t.Run("CustomerOnAdminPage", func(t *testing.T) {
		status := b.load(t, chromedp.Navigate(base+webui.ConsoleHome))
		if status == http.StatusNotFound {
			t.Skip("no operator page is served at " + webui.ConsoleHome)
		}
		assert.Equal(t, int64(http.StatusForbidden), status)
		assert.Contains(t, text(t, b, "main"), "for admins")
	})

	t.Run("NoCSPRefusals", func(t *testing.T) {
		assert.Empty(t, b.cspRefusals()[cspBefore:], "the pages use nothing the policy refuses")
		// The policy is in force: an inline style is refused, and seen.
		b.load(t, chromedp.Navigate(base+webui.AccountHome))
		b.do(t, chromedp.Evaluate[chromedp.Void]("document.body.insertAdjacentHTML('beforeend', '<p style=\"color: red\">x</p>')"))
		require.Eventually(t, func() bool { return len(b.cspRefusals()) > cspBefore }, 5*time.Second, 20*time.Millisecond)
	})

	t.Run("SignOut", func(t *testing.T) {
		cookie := sessionCookie(t, b, base)
		assert.Equal(t, int64(http.StatusOK), b.load(t, chromedp.Click(chromedp.CSS("form.signout button"))))
		assert.Equal(t, base+webui.AccountSignIn, eval[string](t, b, "location.href"))
		req, _ := http.NewRequest(http.MethodGet, base+webui.AccountHome, nil)
		req.AddCookie(cookie)
		res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, http.StatusSeeOther, res.StatusCode, "the old session is gone")
	})
}

var cookieRE = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// sessionCookie returns the browser's session cookie for base.
func sessionCookie(t *testing.T, b *browser, base string) *http.Cookie {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	cookies, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{base}})
	require.NoError(t, err)
	for _, c := range cookies.Cookies {
		if c.Name == "lnpdb_session" {
			require.Regexp(t, cookieRE, c.Value)
			assert.True(t, c.HTTPOnly)
			return &http.Cookie{Name: c.Name, Value: c.Value}
		}
	}
	t.Fatalf("no session cookie for %s", base)
	return nil
}
