//go:build linux

package resilience

import (
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/webui"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/partread"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testweb"
)

// everyBilledWay obtains answers with key from n by every way a customer
// can that is billed — REST, bulk, GraphQL, the account playground — and
// a bulk request whose client resets after reading 2,000 bytes, and
// returns how many lookups were delivered by the server's own account:
// the reset bulk counts as delivered unless n gave its payments back
// (lnpdb_billing_lookups_undelivered_total). SIP, ENUM and pdb take no
// key and are not billed.
func everyBilledWay(t *testing.T, n *node, key string) (delivered int64) {
	t.Helper()
	post := func(c *http.Client, path, body string) (int, string) {
		req, err := http.NewRequest("POST", n.base+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := c.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, string(b)
	}
	for range 20 {
		code, body := post(n.client, "/api/v1/lrn", `{"phone_number":"12025550123","include_enhanced_lrn":true}`)
		require.Equal(t, http.StatusOK, code, body)
		delivered++
	}
	bulk := func(k int) string {
		return `{"phone_numbers":[` + strings.TrimSuffix(strings.Repeat(`"12025550123",`, k), ",") + `],"include_enhanced_lrn":true}`
	}
	code, body := post(n.client, "/api/v1/lrn/bulk", bulk(100))
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, 100, strings.Count(body, `"lrn":"`), body)
	delivered += 100
	code, body = post(n.client, "/graphql", `{"query":"{ a: lookupLrn(phoneNumber: \"12025550123\") { lrn success } b: lookupCnam(phoneNumber: \"12025550123\") { cnam success } }"}`)
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, 2, strings.Count(body, `"success":true`), body)
	delivered += 2

	// The playground: signed in with the key, lookups made with it.
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	browser := &http.Client{Jar: jar, Timeout: n.client.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, page, err := testweb.SignIn(browser, n.base, webui.AccountSignIn, key)
	require.NoError(t, err, page)
	require.Equal(t, http.StatusSeeOther, res.StatusCode, page)
	res, err = browser.Get(n.base + "/account/playground")
	require.NoError(t, err)
	form, _ := io.ReadAll(res.Body)
	res.Body.Close()
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(form)
	require.NotNil(t, csrf, "%s", form)
	for range 5 {
		res, err := browser.PostForm(n.base+"/account/playground", url.Values{"csrf": {string(csrf[1])}, "number": {"12025550123"}, "kind": {"lrn_enhanced"}, "key": {key}})
		require.NoError(t, err)
		page, _ := io.ReadAll(res.Body)
		res.Body.Close()
		require.Contains(t, string(page), `<span id="answer-status">200</span>`)
		delivered++
	}

	// A bulk answer of 1,000 numbers the client stops reading after
	// 2,000 bytes, resetting the connection.
	before, charged := n.metric("lnpdb_billing_lookups_undelivered_total"), n.metric("lnpdb_billing_lookups_charged_total")
	conn, err := net.Dial("tcp", strings.TrimPrefix(n.base, "http://"))
	require.NoError(t, err)
	code, err = partread.Post(conn.(*net.TCPConn), "/api/v1/lrn/bulk", key, bulk(1000), 2000, func() {})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	// Its payments are settled once the server's write ends, which the
	// reset ends if nothing else did: wait for the server's account of
	// all 1,000, charged or given back.
	var given int64
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		given = n.metric("lnpdb_billing_lookups_undelivered_total") - before
		if given+n.metric("lnpdb_billing_lookups_charged_total")-charged >= 1000 {
			break
		}
	}
	require.Contains(t, []int64{0, 1000}, given, "a bulk request's lookups share its response's fate")
	t.Logf("a bulk answer of 1,000 numbers reset after 2,000 bytes: %d lookups given back", given)
	return delivered + 1000 - given
}
