package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/serve"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/httpapi"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/diptest"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// TestServeDemoBills: the zero-argument demo bills a demo account: the
// free tier, then its credit, then 402 with the price and the balance.
func TestServeDemoBills(t *testing.T) {
	s := startServe(t, "--addr", "127.0.0.1:0", "--access-log=false")
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	key := s.await(t, &s.stdout, `development API key[^:]*: (lnp_[a-z2-7]{32})`)
	assert.Contains(t, s.stdout.String(), "demo account")
	assert.Contains(t, s.stdout.String(), base+"/api/v1/usage")

	// 10 free, then $0.01 at $0.001: 20 plain LRN lookups answer.
	const body = `{"phone_number":"12025550123"}`
	for i := range billing.FreeTier + serve.DemoCredit/1000 {
		code, b := call(t, "POST", base+"/api/v1/lrn", key, body)
		require.Equal(t, http.StatusOK, code, "lookup %d: %s", i+1, b)
	}
	code, b := call(t, "POST", base+"/api/v1/lrn", key, `{"phone_number":"12025550123","include_enhanced_lrn":true}`)
	require.Equal(t, http.StatusPaymentRequired, code, b)
	var e map[string]string
	require.NoError(t, json.Unmarshal([]byte(b), &e))
	assert.Equal(t, "INSUFFICIENT_BALANCE", e["code"])
	assert.Contains(t, e["details"], "costs $0.002")
	assert.Contains(t, e["details"], "holds $0.00")

	code, b = call(t, "POST", base+"/graphql", key, `{"query":"{ lookupCnam(phoneNumber: \"12025550123\") { cnam success error } }"}`)
	require.Equal(t, http.StatusOK, code, b)
	assert.Contains(t, b, `"success":false`)
	assert.Contains(t, b, `"extensions":{"code":"INSUFFICIENT_BALANCE"`)

	code, b = call(t, "GET", base+"/api/v1/usage", key, "")
	require.Equal(t, http.StatusOK, code, b)
	var u billing.UsageReport
	require.NoError(t, json.Unmarshal([]byte(b), &u))
	doc, err := openapi3.NewLoader().LoadFromData(httpapi.OpenAPI())
	require.NoError(t, err)
	var raw any
	require.NoError(t, json.Unmarshal([]byte(b), &raw))
	require.NoError(t, doc.Components.Schemas["Usage"].Value.VisitJSON(raw), "GET /api/v1/usage matches openapi.json")
	assert.Equal(t, billing.Micros(0), u.Balance)
	assert.Equal(t, int64(0), u.FreeLeft)
	require.Len(t, u.CurrentMonth.Kinds, 1)
	assert.Equal(t, billing.KindUsage{Kind: billing.KindLRN, Lookups: 20, Free: 10, Amount: serve.DemoCredit, AmountUSD: "0.01"}, u.CurrentMonth.Kinds[0])

	// /metrics says what was charged and what the leases hold. A lookup
	// is counted once its answer is flushed, just after the client may
	// have read it: scrape until the count settles.
	want := []string{
		"lnpdb_billing_lookups_charged_total 20",
		`lnpdb_billing_lookups_unbilled_total{reason="lease_lost"} 0`,
		"lnpdb_billing_lookups_undelivered_total 0",
		"lnpdb_billing_store_timeouts_total 0",
		"lnpdb_billing_sync_errors_total 0",
		`lnpdb_billing_recalls_total{direction="asked"} 0`,
		"lnpdb_billing_leases 1",
		"lnpdb_billing_leased_dollars 0",
	}
	var scraped string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, scraped = call(t, "GET", base+"/metrics", "", "")
		missing := 0
		for _, w := range want {
			if !strings.Contains(scraped, "\n"+w+"\n") {
				missing++
			}
		}
		if missing == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, w := range want {
		assert.Contains(t, scraped, "\n"+w+"\n")
	}
	assert.Regexp(t, `\nlnpdb_billing_syncs_total [1-9]`, scraped)
	require.Equal(t, 0, s.stop(t))
}

// TestServeAccounts: serve --accounts bills the store's accounts: answered
// lookups are charged per kind; invalid input, rate-limited requests and
// unknown numbers are not; the admin API changes keys at once.
func TestServeAccounts(t *testing.T) {
	table := testdb.Build(t, lnpdb.Sample())
	vacant := diptest.Vacant(t, testdb.Sample(t))
	dir := t.TempDir()
	dsn := "bolt://" + filepath.Join(dir, "accounts.db")
	id := strings.TrimSpace(mustRun(t, "account", "create", "--accounts", dsn, "--name", "Acme"))
	key := strings.TrimSpace(mustRun(t, "key", "new", "--accounts", dsn, "--account", id, "--rpm", "12"))
	mustRun(t, "wallet", "credit", "--accounts", dsn, "--account", id, "--amount", "1.00", "--ref", "INV-1")
	adminKeys := filepath.Join(dir, "admin-keys")
	admin := strings.TrimSpace(mustRun(t, "key", "new", "--keys", adminKeys))

	s := startServe(t, "--db", table, "--accounts", dsn, "--admin-keys", adminKeys, "--addr", "127.0.0.1:0", "--access-log=false")
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	assert.NotContains(t, s.stdout.String(), "development API key")

	lookups := []struct{ path, body string }{
		{"/api/v1/lrn", `{"phone_number":"12025550123"}`},                                                     // free
		{"/api/v1/lrn", `{"phone_number":"12025550123","include_enhanced_lrn":true,"messaging_lookup":true}`}, // free + add-on $0.001
		{"/api/v1/cnam", `{"phone_number":"12025550123"}`},                                                    // $0.003
		{"/api/v1/trust", `{"phone_number":"12025550123"}`},                                                   // $0.002
		{"/api/v1/lrn", `{"phone_number":"1"}`},                                                               // 400: not charged
		{"/api/v1/lrn", `{"phone_number":"` + vacant + `"}`},                                                  // 404: not charged
		{"/graphql", `{"query":"{ lookupMessagingProvider(phoneNumber: \"12025550123\") { success } }"}`},     // $0.001
	}
	want := []int{200, 200, 200, 200, 400, 404, 200}
	for i, l := range lookups {
		code, b := call(t, "POST", base+l.path, key, l.body)
		require.Equal(t, want[i], code, "%s %s: %s", l.path, l.body, b)
	}
	for range 12 - len(lookups) {
		code, b := call(t, "GET", base+"/api/v1/usage", key, "")
		require.Equal(t, http.StatusOK, code, b)
	}
	code, _ := call(t, "POST", base+"/api/v1/cnam", key, `{"phone_number":"12025550123"}`)
	require.Equal(t, http.StatusTooManyRequests, code, "the key's own limit applies")

	// The admin API: a new key works at once; suspending the account
	// stops its keys.
	code, b := call(t, "POST", base+"/admin/v1/accounts/"+id+"/keys", admin, `{"label":"second"}`)
	require.Equal(t, http.StatusCreated, code, b)
	var nk struct{ Key string }
	require.NoError(t, json.Unmarshal([]byte(b), &nk))
	code, b = call(t, "POST", base+"/api/v1/messaging", nk.Key, `{"phone_number":"12025550123"}`)
	require.Equal(t, http.StatusOK, code, b) // $0.001
	code, b = call(t, "GET", base+"/admin/v1/accounts", key, "")
	assert.Equal(t, http.StatusForbidden, code, "an account's key is known, and no admin key")
	assert.Contains(t, b, `"code":"FORBIDDEN"`)
	code, _ = call(t, "GET", base+"/admin/v1/accounts", "lnp_nobody", "")
	assert.Equal(t, http.StatusUnauthorized, code, "an unknown key")
	code, b = call(t, "POST", base+"/admin/v1/compact", key, "")
	assert.Equal(t, http.StatusForbidden, code, "compact: %s", b)
	code, b = call(t, "GET", base+"/admin/v1/table", key, "")
	assert.Equal(t, http.StatusForbidden, code, "table: %s", b)
	code, b = call(t, "POST", base+"/admin/v1/accounts/"+id+"/suspend", admin, "")
	require.Equal(t, http.StatusOK, code, b)
	code, b = call(t, "POST", base+"/api/v1/messaging", nk.Key, `{"phone_number":"12025550123"}`)
	assert.Equal(t, http.StatusForbidden, code, "a suspended account's keys are refused as such")
	assert.Contains(t, b, `"code":"ACCOUNT_SUSPENDED"`)
	for _, path := range []string{"/admin/v1/accounts", "/admin/v1/table"} {
		code, b = call(t, "GET", base+path, nk.Key, "")
		assert.Equal(t, http.StatusForbidden, code, "a suspended account's key is known, and no admin key: %s %s", path, b)
	}
	require.Equal(t, 0, s.stop(t))

	// Stopped, the server has returned its lease and flushed its usage.
	st, err := billing.Open(context.Background(), dsn)
	require.NoError(t, err)
	defer st.Close()
	a, err := st.Account(context.Background(), id)
	require.NoError(t, err)
	const charged = 1000 + 3000 + 2000 + 1000 + 1000
	assert.Equal(t, billing.Micros(1_000_000-charged), a.Balance)
	assert.Equal(t, billing.Micros(0), a.Leased)
	rows, err := st.Usage(context.Background(), id, billing.Month(a.Created))
	require.NoError(t, err)
	var n, free int64
	for _, r := range rows {
		if r.Kind != billing.KindMessagingAddon {
			n += r.Lookups
		}
		free += r.Free
	}
	assert.Equal(t, int64(6), n, "six answered lookups: %+v", rows)
	assert.Equal(t, int64(2), free)
}

// TestServeKeysFileDoesNotBill: a --keys deployment has no accounts: no
// usage endpoint, no 402.
func TestServeKeysFileDoesNotBill(t *testing.T) {
	table := testdb.Build(t, lnpdb.Sample())
	keys := filepath.Join(t.TempDir(), "keys")
	key := strings.TrimSpace(mustRun(t, "key", "new", "--keys", keys))
	s := startServe(t, "--db", table, "--keys", keys, "--addr", "127.0.0.1:0", "--access-log=false")
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	for range 30 {
		code, b := call(t, "POST", base+"/api/v1/lrn", key, `{"phone_number":"12025550123","include_enhanced_lrn":true}`)
		require.Equal(t, http.StatusOK, code, b)
	}
	code, _ := call(t, "GET", base+"/api/v1/usage", key, "")
	assert.Equal(t, http.StatusNotFound, code)
	require.Equal(t, 0, s.stop(t))
}

func TestServeAccountsRefuses(t *testing.T) {
	table := testdb.Build(t, lnpdb.Sample())
	keys := filepath.Join(t.TempDir(), "keys")
	mustRun(t, "key", "new", "--keys", keys)
	missing := filepath.Join(t.TempDir(), "x", "accounts.db")
	assertRefused(t, []string{"serve", "--addr", "127.0.0.1:0"}, []refusal{
		{[]string{"--db", table, "--accounts", "mysql://x"}, 1, "scheme must be bolt or postgres"},
		{[]string{"--db", table, "--accounts", "postgres://127.0.0.1:1/x?connect_timeout=2"}, 1, "--accounts"},
		{[]string{"--db", table, "--accounts", "bolt://" + missing, "--keys", keys}, 2, "leave out --keys"},
		{[]string{"--db", table, "--accounts", "bolt://" + missing, "--dev-key"}, 2, "leave out --keys and --dev-key"},
	})
	_, err := os.Stat(missing)
	assert.True(t, os.IsNotExist(err), "a refused serve created the store")
}
