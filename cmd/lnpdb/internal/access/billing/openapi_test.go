package billing

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/httpapi"
)

// TestAdminAPIMatchesOpenAPI: every admin answer, success or failure, is
// what openapi.json says for its path, method and status.
func TestAdminAPIMatchesOpenAPI(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(httpapi.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	s := newBolt(t)
	n := 0
	a, err := NewAdmin(AdminConfig{Store: s, Authorize: func(tok string) (string, bool) { return "adm1", tok == "admin-secret" },
		LookupKey: func(tok string) bool { return tok == "lnp_customer" },
		NewKey:    func() (string, [32]byte) { n++; k := "lnp_" + strconv.Itoa(n); return k, hash(k) }})
	if err != nil {
		t.Fatal(err)
	}
	c := serveAdmin(t, a)
	_, acc, _ := c.do("POST", "/admin/v1/accounts", `{"name":"Acme"}`)
	id := acc["id"].(string)
	_, k, _ := c.do("POST", "/admin/v1/accounts/"+id+"/keys", `{"label":"x"}`)
	keyID := k["id"].(string)
	calls := []struct{ method, tmpl, path, body string }{
		{"GET", "/admin/v1/accounts", "/admin/v1/accounts", ""},
		{"POST", "/admin/v1/accounts", "/admin/v1/accounts", `{"name":"B"}`},
		{"POST", "/admin/v1/accounts", "/admin/v1/accounts", `{"name":""}`},
		{"GET", "/admin/v1/accounts/{id}", "/admin/v1/accounts/" + id, ""},
		{"GET", "/admin/v1/accounts/{id}", "/admin/v1/accounts/acct_x", ""},
		{"POST", "/admin/v1/accounts/{id}/suspend", "/admin/v1/accounts/" + id + "/suspend", ""},
		{"POST", "/admin/v1/accounts/{id}/activate", "/admin/v1/accounts/" + id + "/activate", ""},
		{"GET", "/admin/v1/accounts/{id}/keys", "/admin/v1/accounts/" + id + "/keys", ""},
		{"POST", "/admin/v1/accounts/{id}/keys", "/admin/v1/accounts/" + id + "/keys", `{"label":"y","rate_limit":5}`},
		{"POST", "/admin/v1/accounts/{id}/keys/{key}/revoke", "/admin/v1/accounts/" + id + "/keys/" + keyID + "/revoke", ""},
		{"POST", "/admin/v1/accounts/{id}/credits", "/admin/v1/accounts/" + id + "/credits", `{"amount":"1.50","ref":"A"}`},
		{"POST", "/admin/v1/accounts/{id}/credits", "/admin/v1/accounts/" + id + "/credits", `{"amount":"1.50","ref":"A"}`},
		{"POST", "/admin/v1/accounts/{id}/credits", "/admin/v1/accounts/" + id + "/credits", `{"amount":"2","ref":"A"}`},
		{"GET", "/admin/v1/accounts/{id}/prices", "/admin/v1/accounts/" + id + "/prices", ""},
		{"PUT", "/admin/v1/accounts/{id}/prices/{kind}", "/admin/v1/accounts/" + id + "/prices/cnam", `{"price":"0.002"}`},
		{"GET", "/admin/v1/prices", "/admin/v1/prices", ""},
		{"PUT", "/admin/v1/prices/{kind}", "/admin/v1/prices/lrn", `{"price":0.0009}`},
		{"GET", "/admin/v1/usage", "/admin/v1/usage?month=2026-11", ""},
		{"GET", "/admin/v1/usage", "/admin/v1/usage", ""},
		{"DELETE", "/admin/v1/usage", "/admin/v1/usage", ""},
	}
	for i, call := range append(calls, calls...) {
		// Each call as an admin, then with a lookup key.
		key := "admin-secret"
		if i >= len(calls) {
			key = "lnp_customer"
		}
		code, _, body := c.doKey(key, call.method, call.path, call.body)
		item := doc.Paths.Value(call.tmpl)
		if item == nil {
			t.Fatalf("%s is not in openapi.json", call.tmpl)
		}
		op := item.GetOperation(call.method)
		if op == nil {
			op = item.Get // a method the path lacks: any of its operations lists 405
			if op == nil {
				op = item.Post
			}
		}
		ref := op.Responses.Status(code)
		if ref == nil {
			t.Errorf("%s %s answered %d, which openapi.json does not list: %s", call.method, call.path, code, body)
			continue
		}
		mt := ref.Value.Content.Get("application/json")
		var v any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatalf("%s %s: %v", call.method, call.path, err)
		}
		if err := mt.Schema.Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
			t.Errorf("%s %s → %d does not match openapi.json: %v\n%s", call.method, call.path, code, err, strings.TrimSpace(body))
		}
	}
}
