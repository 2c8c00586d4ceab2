package jobsapi_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/httpapi"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/jobsapi"
)

func jobsPath(p string) bool {
	return p == "/api/v1/jobs" || strings.HasPrefix(p, "/api/v1/jobs/") || p == "/api/v1/webhook-secret"
}

// TestOpenAPI holds the routes to openapi.json both ways, and each answer
// of a set of calls to its operation's documented statuses and schemas.
func TestOpenAPI(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(httpapi.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	api, _ := jobsapi.New(jobsapi.Config{Store: &billing.BoltStore{}, AccountOf: func(auth.Key) (string, bool) { return "", false }})
	routes := api.Routes()
	for pattern := range routes {
		method, path, _ := strings.Cut(pattern, " ")
		if item := doc.Paths.Value(path); item == nil || item.GetOperation(method) == nil {
			t.Errorf("%s is served but not documented", pattern)
		}
	}
	for path, item := range doc.Paths.Map() {
		if !jobsPath(path) {
			continue
		}
		for _, method := range slices.Sorted(maps.Keys(item.Operations())) {
			if routes[method+" "+path] == nil {
				t.Errorf("%s %s is documented but not served", method, path)
			}
		}
	}

	e := setup(t, 1_000_000, billing.JobLimits{MaxUnfinished: 2})
	id := e.submit(t, map[string]any{"phone_numbers": []string{e.nums.Home}})
	e.run(t)
	for _, c := range []struct{ method, tmpl, path, ctype, body string }{
		{"POST", "/api/v1/jobs", "/api/v1/jobs", "application/json", `{"phone_numbers":["` + e.nums.Home + `"],"kind":"cnam"}`},
		{"POST", "/api/v1/jobs", "/api/v1/jobs", "application/json", `{"phone_numbers":[]}`},
		{"POST", "/api/v1/jobs", "/api/v1/jobs", "text/csv", e.nums.Home},
		{"POST", "/api/v1/jobs", "/api/v1/jobs", "text/csv", e.nums.Home},
		{"POST", "/api/v1/jobs", "/api/v1/jobs", "text/xml", "<x/>"},
		{"GET", "/api/v1/jobs", "/api/v1/jobs", "", ""},
		{"PUT", "/api/v1/jobs", "/api/v1/jobs", "", ""},
		{"GET", "/api/v1/jobs/{id}", "/api/v1/jobs/" + id, "", ""},
		{"GET", "/api/v1/jobs/{id}", "/api/v1/jobs/job_none", "", ""},
		{"POST", "/api/v1/jobs/{id}/resume", "/api/v1/jobs/" + id + "/resume", "", ""},
		{"DELETE", "/api/v1/jobs/{id}", "/api/v1/jobs/" + id, "", ""},
		{"GET", "/api/v1/jobs/{id}/results", "/api/v1/jobs/job_none/results", "", ""},
		{"POST", "/api/v1/webhook-secret", "/api/v1/webhook-secret", "", ""},
	} {
		resp, body := e.do(t, c.method, c.path, c.ctype, strings.NewReader(c.body))
		item := doc.Paths.Value(c.tmpl)
		op := item.GetOperation(c.method)
		if op == nil {
			op = item.Get
		}
		ref := op.Responses.Status(resp.StatusCode)
		if ref == nil {
			t.Errorf("%s %s answered %d, which openapi.json does not list: %s", c.method, c.path, resp.StatusCode, body)
			continue
		}
		if resp.StatusCode == http.StatusMethodNotAllowed && resp.Header.Get("Allow") == "" {
			t.Errorf("%s %s: 405 without Allow", c.method, c.path)
		}
		mt := ref.Value.Content.Get("application/json")
		if mt == nil {
			t.Errorf("%s %s → %d: no JSON body documented", c.method, c.path, resp.StatusCode)
			continue
		}
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("%s %s: %v", c.method, c.path, err)
		}
		if err := mt.Schema.Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
			t.Errorf("%s %s → %d does not match openapi.json: %v\n%s", c.method, c.path, resp.StatusCode, err, body)
		}
	}
}
