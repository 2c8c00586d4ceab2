package main

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/root"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/console"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/webui"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// consoleHostile is what the account's name and a credit's reference hold:
// the console must show it as text.
const consoleHostile = `<script>alert(1)</script>"><img src=x onerror=alert(2)>`

// TestBrowserConsole drives the operator console in a real browser
// against a real serve --accounts --admin-keys: signing in with an admin
// key, the front ends' charts, crediting an account (seen on the
// customer's own /account page and in the audit log), suspending it (seen
// by the REST API), a form without its CSRF token, hostile text, and a
// customer's session refused. The admin browses 127.0.0.1 and the customer
// localhost, so that one browser holds both sessions (cookies are per
// host).
func TestBrowserConsole(t *testing.T) {
	b := newBrowser(t)
	dir := t.TempDir()
	dsn := "bolt://" + filepath.Join(dir, "accounts.db")
	ctx := context.Background()
	st, err := billing.Open(ctx, dsn)
	require.NoError(t, err)
	acct, err := st.CreateAccount(ctx, consoleHostile, time.Now())
	require.NoError(t, err)
	_, _, err = st.Credit(ctx, acct.ID, 5*billing.MicrosPerDollar, "INV-0", time.Now())
	require.NoError(t, err)
	key := auth.NewKey()
	_, err = st.AddKey(ctx, billing.KeyRecord{AccountID: acct.ID, Label: "production", Hash: auth.HashKey(key).Hash}, time.Now())
	require.NoError(t, err)
	require.NoError(t, st.Close())
	admins := filepath.Join(dir, "admin-keys")
	var out, errb bytes.Buffer
	require.Equal(t, 0, root.Run(ctx, &cliutil.Env{Stdout: &out, Stderr: &errb}, []string{"key", "new", "--keys", admins}), errb.String())
	adminKey := strings.TrimSpace(out.String())
	s := startServe(t, "--db", testdb.Build(t, lnpdb.Sample()), "--accounts", dsn, "--admin-keys", admins, "--addr", "127.0.0.1:0", "--access-log=false")
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	custBase := strings.Replace(base, "127.0.0.1", "localhost", 1)
	code, body := call(t, "POST", base+"/api/v1/lrn", key, `{"phone_number":"12025550123"}`)
	require.Equal(t, http.StatusOK, code, body)
	page := base + console.Accounts + "/" + acct.ID

	t.Run("SignIn", func(t *testing.T) {
		assert.Equal(t, int64(http.StatusOK), b.load(t, chromedp.Navigate(base+console.Home)), "sent to the sign-in page")
		assert.Equal(t, base+webui.ConsoleSignIn, eval[string](t, b, "location.href"))
		assert.Equal(t, int64(http.StatusUnauthorized), b.load(t, chromedp.SendKeys(chromedp.ID("key"), key), chromedp.Submit(chromedp.ID("key"))), "a customer's key is no admin key")
		assert.Equal(t, int64(http.StatusOK), b.load(t, chromedp.SendKeys(chromedp.ID("key"), adminKey), chromedp.Submit(chromedp.ID("key"))))
		assert.Equal(t, base+console.Home, eval[string](t, b, "location.href"))
		assert.Equal(t, strconv.Itoa(format.Version), text(t, b, "#table dd:nth-of-type(3)"), "the table's format version")
	})

	t.Run("FrontEndCharts", func(t *testing.T) {
		assert.Equal(t, int64(http.StatusOK), b.load(t, chromedp.Navigate(base+console.FrontEnds)))
		assert.Equal(t, []string{"chart-rest-rate", "chart-rest-p99", "chart-graphql-rate", "chart-graphql-p99"},
			eval[[]string](t, b, "[...document.querySelectorAll('svg.chart')].map(s => s.id)"))
		assert.Greater(t, eval[float64](t, b, "document.querySelector('#chart-rest-rate').getBoundingClientRect().width"), 300.0, "the chart is drawn")
		assert.Equal(t, float64(2), eval[float64](t, b, "document.querySelectorAll('#chart-rest-rate line.axis').length"))
		assert.Contains(t, eval[string](t, b, "document.querySelector('#chart-rest-rate').getAttribute('aria-label')"), "REST answers per second")
		if shots := os.Getenv(screenshotsEnv); shots != "" {
			b.load(t, chromedp.Navigate(base+console.Home))
			ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
			cancel()
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(shots, "console.png"), png, 0o644))
		}
	})

	var custBalance string
	t.Run("CustomerSignsIn", func(t *testing.T) {
		b.load(t, chromedp.Navigate(custBase+webui.AccountSignIn))
		assert.Equal(t, int64(http.StatusOK), b.load(t, chromedp.SendKeys(chromedp.ID("key"), key), chromedp.Submit(chromedp.ID("key"))))
		custBalance = text(t, b, "#balance")
		assert.Equal(t, int64(http.StatusForbidden), b.load(t, chromedp.Navigate(custBase+console.Home)), "a customer's session on the console")
		assert.Contains(t, text(t, b, "main"), "for admins")
		assert.Equal(t, int64(http.StatusForbidden), b.load(t, chromedp.Navigate(custBase+console.Accounts)))
	})

	t.Run("Credit", func(t *testing.T) {
		assert.Equal(t, int64(http.StatusOK), b.load(t, chromedp.Navigate(base+console.Accounts+"?q="+url.QueryEscape("<script>"))))
		assert.Equal(t, float64(1), eval[float64](t, b, "document.querySelectorAll('#accounts tbody a').length"), "found by its name")
		assert.Equal(t, int64(http.StatusOK), b.load(t, chromedp.Click(chromedp.CSS("#accounts tbody a"))))
		assert.Equal(t, consoleHostile, text(t, b, "#account-name"))
		assert.Equal(t, int64(http.StatusOK), b.load(t, chromedp.SendKeys(chromedp.ID("amount"), "12.50"), chromedp.SendKeys(chromedp.ID("ref"), consoleHostile), chromedp.Submit(chromedp.ID("ref"))))
		assert.Contains(t, text(t, b, "p.flash"), "Credited $12.50")

		// The customer's own page shows the new balance.
		b.load(t, chromedp.Navigate(custBase+webui.AccountHome))
		before, err := billing.ParseAmount(strings.TrimPrefix(custBalance, "$"))
		require.NoError(t, err)
		assert.Equal(t, "$"+(before+12_500_000).String(), text(t, b, "#balance"))

		// The audit log names the admin key, the address and the reference.
		b.load(t, chromedp.Navigate(base+console.Audit))
		row := eval[[]string](t, b, "[...document.querySelectorAll('#audit tbody tr:first-child td')].map(td => td.textContent)")
		require.Len(t, row, 7)
		assert.Equal(t, auth.HashKey(adminKey).ID(), row[1])
		assert.Regexp(t, `^127\.0\.0\.1:\d+$`, row[2])
		assert.Equal(t, []string{"console", "credit", acct.ID}, row[3:6])
		assert.Contains(t, row[6], "$12.50 ref")
		assert.Contains(t, row[6], "<script>alert(1)</script>", "the reference, as text")
	})

	t.Run("CSRF", func(t *testing.T) {
		b.load(t, chromedp.Navigate(page))
		b.do(t, chromedp.Evaluate[chromedp.Void]("document.querySelector('#credit input[name=csrf]').remove()"))
		assert.Equal(t, int64(http.StatusForbidden), b.load(t, chromedp.SendKeys(chromedp.ID("amount"), "99"), chromedp.SendKeys(chromedp.ID("ref"), "FORGED"), chromedp.Submit(chromedp.ID("ref"))))
		assert.Contains(t, text(t, b, "main"), "CSRF token")
		cookie := sessionCookie(t, b, base)
		for name, form := range map[string]url.Values{"no token": {"amount": {"99"}, "ref": {"FORGED"}}, "wrong token": {"amount": {"99"}, "ref": {"FORGED"}, "csrf": {"x"}}} {
			req, _ := http.NewRequest(http.MethodPost, page+"/credit", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(cookie)
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			res.Body.Close()
			assert.Equal(t, http.StatusForbidden, res.StatusCode, name)
		}
		b.load(t, chromedp.Navigate(page))
		assert.NotContains(t, text(t, b, "#credits"), "FORGED")
	})

	t.Run("Suspend", func(t *testing.T) {
		b.load(t, chromedp.Navigate(page))
		assert.Equal(t, int64(http.StatusOK), b.load(t, chromedp.Click(chromedp.CSS("#suspend button"))))
		assert.Equal(t, "suspended", text(t, b, "#account-status"))
		code, body := call(t, "POST", base+"/api/v1/lrn", key, `{"phone_number":"12025550123"}`)
		assert.Equal(t, http.StatusForbidden, code, body)
		assert.Contains(t, body, `"ACCOUNT_SUSPENDED"`)
		assert.Equal(t, int64(http.StatusOK), b.load(t, chromedp.Click(chromedp.CSS("#resume button"))))
		code, body = call(t, "POST", base+"/api/v1/lrn", key, `{"phone_number":"12025550123"}`)
		assert.Equal(t, http.StatusOK, code, "resumed: %s", body)
	})

	t.Run("HostileTextInert", func(t *testing.T) {
		for _, p := range []string{page, base + console.Accounts, base + console.Audit} {
			b.load(t, chromedp.Navigate(p))
			assert.Zero(t, eval[float64](t, b, "document.querySelectorAll('main script, main img').length"), p)
		}
		time.Sleep(100 * time.Millisecond) // an onerror would have fired
		assert.Zero(t, b.dialogs.Load(), "no script of the name or reference ran")
		assert.Empty(t, b.cspRefusals(), "the pages use nothing the policy refuses")
	})
}
