package billing

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
)

type adminClient struct {
	t   *testing.T
	url string
}

func (c adminClient) do(method, path, body string) (int, map[string]any, string) {
	c.t.Helper()
	return c.doKey("admin-secret", method, path, body)
}

// serveAdmin serves a over loopback HTTP until the test ends.
func serveAdmin(t *testing.T, a *Admin) adminClient {
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	return adminClient{t, srv.URL}
}

func (c adminClient) doKey(key, method, path, body string) (int, map[string]any, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.url+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return res.StatusCode, m, string(b)
}

func TestAdminAPI(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		var changed atomic.Int32
		n := 0
		a, err := NewAdmin(AdminConfig{
			Store:     s,
			Authorize: func(tok string) (string, bool) { return "adm1", tok == "admin-secret" },
			Changed:   func(context.Context) { changed.Add(1) },
			NewKey: func() (string, [32]byte) {
				n++
				k := "lnp_k" + strings.Repeat("x", n)
				return k, hash(k)
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		c := serveAdmin(t, a)

		code, acc, body := c.do("POST", "/admin/v1/accounts", `{"name":"Acme"}`)
		if code != 201 || acc["name"] != "Acme" || acc["status"] != "active" {
			t.Fatalf("create: %d %s", code, body)
		}
		id := acc["id"].(string)
		code, k, body := c.do("POST", "/admin/v1/accounts/"+id+"/keys", `{"label":"prod","rate_limit":600}`)
		if code != 201 || !strings.HasPrefix(k["key"].(string), "lnp_") || k["rate_limit"] != 600.0 || k["label"] != "prod" {
			t.Fatalf("new key: %d %s", code, body)
		}
		keyID := k["id"].(string)
		code, cr, body := c.do("POST", "/admin/v1/accounts/"+id+"/credits", `{"amount":"25.00","ref":"INVOICE-123"}`)
		if code != 201 || cr["applied"] != true || cr["balance_micros"] != 25e6 {
			t.Fatalf("credit: %d %s", code, body)
		}
		code, cr, body = c.do("POST", "/admin/v1/accounts/"+id+"/credits", `{"amount":25.00,"ref":"INVOICE-123"}`)
		if code != 200 || cr["applied"] != false || cr["balance_micros"] != 25e6 {
			t.Fatalf("credit again: %d %s", code, body)
		}
		code, p, body := c.do("PUT", "/admin/v1/accounts/"+id+"/prices/lrn", `{"price":"0.0008"}`)
		if code != 200 || !strings.Contains(body, `"price_micros":800`) {
			t.Fatalf("set price: %d %s %v", code, body, p)
		}
		if code, _, body = c.do("PUT", "/admin/v1/prices/cnam", `{"price":"0.004"}`); code != 200 || !strings.Contains(body, `"price_micros":4000`) {
			t.Fatalf("set default price: %d %s", code, body)
		}
		code, v, body := c.do("GET", "/admin/v1/accounts/"+id, "")
		if code != 200 || v["balance_micros"] != 25e6 || v["free_left_this_month"] != 10.0 || len(v["keys"].([]any)) != 1 || len(v["credits"].([]any)) != 1 {
			t.Fatalf("show: %d %s", code, body)
		}
		if code, _, body = c.do("POST", "/admin/v1/accounts/"+id+"/keys/"+keyID+"/revoke", ""); code != 200 || !strings.Contains(body, `"revoked"`) {
			t.Fatalf("revoke: %d %s", code, body)
		}
		if code, v, body = c.do("POST", "/admin/v1/accounts/"+id+"/suspend", ""); code != 200 || v["status"] != "suspended" {
			t.Fatalf("suspend: %d %s", code, body)
		}
		if code, v, body = c.do("GET", "/admin/v1/accounts", ""); code != 200 || len(v["accounts"].([]any)) != 1 {
			t.Fatalf("list: %d %s", code, body)
		}
		if code, _, body = c.do("GET", "/admin/v1/usage?month=2026-11&format=csv", ""); code != 200 || body != "account_id,day,kind,lookups,free,amount_micros,amount_usd\n" {
			t.Fatalf("usage csv: %d %q", code, body)
		}
		if code, v, body = c.do("GET", "/admin/v1/usage?month=2026-11&account="+id, ""); code != 200 || v["month"] != "2026-11" {
			t.Fatalf("usage: %d %s", code, body)
		}
		if changed.Load() != 4 {
			t.Errorf("Changed called %d times, want 4 (create, key, revoke, suspend)", changed.Load())
		}

		// Refusals change nothing.
		for _, c2 := range []struct {
			key, method, path, body string
			status                  int
			code                    string
		}{
			{"", "GET", "/admin/v1/accounts", "", 401, "MISSING_API_KEY"},
			{"nope", "GET", "/admin/v1/accounts", "", 401, "INVALID_API_KEY"},
			{"admin-secret", "DELETE", "/admin/v1/accounts", "", 405, "METHOD_NOT_ALLOWED"},
			{"admin-secret", "GET", "/admin/v1/accounts/" + id + "/suspend", "", 405, "METHOD_NOT_ALLOWED"},
			{"admin-secret", "GET", "/admin/v1/accounts/" + id + "/bogus", "", 404, "NOT_FOUND"},
			{"admin-secret", "GET", "/admin/v1/nothing", "", 404, "NOT_FOUND"},
			{"admin-secret", "GET", "/admin/v1/accounts/acct_nope", "", 404, "NOT_FOUND"},
			{"admin-secret", "POST", "/admin/v1/accounts", `{"name":""}`, 400, "INVALID_REQUEST"},
			{"admin-secret", "POST", "/admin/v1/accounts", `{}`, 400, "INVALID_REQUEST"},
			{"admin-secret", "POST", "/admin/v1/accounts", `[1]`, 400, "INVALID_REQUEST"},
			{"admin-secret", "POST", "/admin/v1/accounts", `{"name":"x"} {}`, 400, "INVALID_REQUEST"},
			{"admin-secret", "POST", "/admin/v1/accounts/" + id + "/credits", `{"amount":"-5","ref":"X"}`, 400, "INVALID_REQUEST"},
			{"admin-secret", "POST", "/admin/v1/accounts/" + id + "/credits", `{"amount":"five","ref":"X"}`, 400, "INVALID_REQUEST"},
			{"admin-secret", "POST", "/admin/v1/accounts/" + id + "/credits", `{"amount":1e3,"ref":"X"}`, 400, "INVALID_REQUEST"},
			{"admin-secret", "POST", "/admin/v1/accounts/" + id + "/credits", `{"amount":"0","ref":"X"}`, 400, "INVALID_REQUEST"},
			{"admin-secret", "POST", "/admin/v1/accounts/" + id + "/credits", `{"ref":"X"}`, 400, "INVALID_REQUEST"},
			{"admin-secret", "POST", "/admin/v1/accounts/" + id + "/credits", `{"amount":"5"}`, 400, "INVALID_REQUEST"},
			{"admin-secret", "POST", "/admin/v1/accounts/" + id + "/credits", `{"amount":"26","ref":"INVOICE-123"}`, 409, "CONFLICT"},
			{"admin-secret", "POST", "/admin/v1/accounts/acct_nope/credits", `{"amount":"5","ref":"Y"}`, 404, "NOT_FOUND"},
			{"admin-secret", "PUT", "/admin/v1/prices/sms", `{"price":"1"}`, 404, "NOT_FOUND"},
			{"admin-secret", "PUT", "/admin/v1/prices/lrn", `{"price":"-1"}`, 400, "INVALID_REQUEST"},
			{"admin-secret", "POST", "/admin/v1/accounts/" + id + "/keys", `{"rate_limit":-1}`, 400, "INVALID_REQUEST"},
			{"admin-secret", "POST", "/admin/v1/accounts/" + id + "/keys/key_nope/revoke", ``, 404, "NOT_FOUND"},
			{"admin-secret", "GET", "/admin/v1/usage?month=11-2026", ``, 400, "INVALID_REQUEST"},
		} {
			code, m, body := c.doKey(c2.key, c2.method, c2.path, c2.body)
			if code != c2.status || m["code"] != c2.code || m["error"] == "" || m["details"] == "" || len(m) != 3 {
				t.Errorf("%s %s %s: %d %s", c2.method, c2.path, c2.body, code, body)
			}
		}
		got, err := s.Account(context.Background(), id)
		if err != nil || got.Balance != 25e6 {
			t.Fatalf("refused requests changed the account: %+v %v", got, err)
		}
		if p, _ := s.Prices(context.Background(), ""); p[KindLRN] != DefaultPrices[KindLRN] {
			t.Fatalf("refused price changed the defaults: %v", p)
		}
	})
}

// TestAdminJSONStyle: the accounts admin API writes JSON as the lookup API
// does — compact, one line, errors {"error","code","details"} in that
// order, "<ADMIN_KEY>" not HTML-escaped.
func TestAdminJSONStyle(t *testing.T) {
	a, err := NewAdmin(AdminConfig{Store: newBolt(t), Authorize: func(tok string) (string, bool) { return "adm1", tok == "admin-secret" },
		NewKey: func() (string, [32]byte) { return "k", hash("k") }})
	if err != nil {
		t.Fatal(err)
	}
	c := serveAdmin(t, a)
	_, _, body := c.doKey("", "GET", "/admin/v1/accounts", "")
	if want := `{"error":"Missing API key","code":"MISSING_API_KEY","details":"Send the header Authorization: Bearer <ADMIN_KEY>"}` + "\n"; body != want {
		t.Errorf("error body:\n got %q\nwant %q", body, want)
	}
	c.do("POST", "/admin/v1/accounts", `{"name":"A&B <x>"}`)
	_, _, body = c.do("GET", "/admin/v1/accounts", "")
	if strings.Count(body, "\n") != 1 || !strings.HasSuffix(body, "\n") || !strings.Contains(body, `"A&B <x>"`) {
		t.Errorf("not one compact line without HTML escaping: %q", body)
	}
}

// TestAdminTimes: the admin API writes every time as the lookup API does
// (lnpdb.Time: RFC 3339, UTC as +00:00, whole seconds), in every store.
func TestAdminTimes(t *testing.T) {
	at := time.Date(2026, 11, 23, 12, 0, 5, 123456789, time.FixedZone("EST", -5*3600))
	want := `"2026-11-23T17:00:05+00:00"`
	require.Equal(t, want, mustJSON(t, lnpdb.Time{Time: at.UTC().Truncate(time.Second)}), "the lookup API's rule")
	stores(t, func(t *testing.T, s Store) {
		a, err := NewAdmin(AdminConfig{Store: s, Now: func() time.Time { return at },
			Authorize: func(tok string) (string, bool) { return "adm1", tok == "admin-secret" },
			NewKey:    func() (string, [32]byte) { return "lnp_1", hash("lnp_1") }})
		require.NoError(t, err)
		c := serveAdmin(t, a)
		_, acc, body := c.do("POST", "/admin/v1/accounts", `{"name":"Acme"}`)
		assert.Contains(t, body, `"created":`+want)
		id := acc["id"].(string)
		_, k, body := c.do("POST", "/admin/v1/accounts/"+id+"/keys", `{"label":"x"}`)
		assert.Contains(t, body, `"created":`+want)
		_, _, body = c.do("POST", "/admin/v1/accounts/"+id+"/keys/"+k["id"].(string)+"/revoke", "")
		assert.Contains(t, body, `"revoked":`+want)
		_, _, body = c.do("POST", "/admin/v1/accounts/"+id+"/credits", `{"amount":"1","ref":"A"}`)
		assert.Contains(t, body, `"created":`+want)
		for _, path := range []string{"/admin/v1/accounts", "/admin/v1/accounts/" + id, "/admin/v1/accounts/" + id + "/keys"} {
			_, _, body = c.do("GET", path, "")
			assert.Regexp(t, `"created":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00"`, body, path)
			assert.NotRegexp(t, `\d\d:\d\d:\d\d(\.\d+)?Z"`, body, path)
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// TestAdminRefusesLookupKey: a lookup key sent to the accounts admin API
// is known, and refused as not an admin key (403 FORBIDDEN), as the table's
// admin API refuses it; only a key the server does not know is 401.
func TestAdminRefusesLookupKey(t *testing.T) {
	a, err := NewAdmin(AdminConfig{Store: newBolt(t), Authorize: func(tok string) (string, bool) { return "adm1", tok == "admin-secret" },
		LookupKey: func(tok string) bool { return tok == "lnp_customer" },
		NewKey:    func() (string, [32]byte) { return "k", hash("k") }})
	require.NoError(t, err)
	c := serveAdmin(t, a)
	for _, path := range []string{"/admin/v1/accounts", "/admin/v1/prices", "/admin/v1/nothing"} {
		code, m, body := c.doKey("lnp_customer", "GET", path, "")
		assert.Equal(t, http.StatusForbidden, code, "%s: %s", path, body)
		assert.Equal(t, "FORBIDDEN", m["code"], path)
		code, m, body = c.doKey("lnp_nobody", "GET", path, "")
		assert.Equal(t, http.StatusUnauthorized, code, "%s: %s", path, body)
		assert.Equal(t, "INVALID_API_KEY", m["code"], path)
	}
	code, _, body := c.do("GET", "/admin/v1/accounts", "")
	assert.Equal(t, http.StatusOK, code, body)
}
