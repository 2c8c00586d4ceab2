package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/diptest"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/redislimit"
)

// openAPIDoc returns openapi.json, loaded and found valid.
func openAPIDoc(t testing.TB) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI())
	require.NoError(t, err)
	require.NoError(t, doc.Validate(context.Background()))
	return doc
}

// validateAnswer checks an answer, res with its body, to req against doc:
// against the operation of req's path and method, or for a 405 the path's
// POST or else GET operation, which describes it. A reqBody other than ""
// is checked as the body of a request answered 200.
func validateAnswer(t *testing.T, doc *openapi3.T, req *http.Request, res *http.Response, body []byte, reqBody string) {
	t.Helper()
	ctx := context.Background()
	item := doc.Paths.Value(req.URL.Path)
	require.NotNil(t, item, req.URL.Path)
	op := item.GetOperation(req.Method)
	if op == nil {
		op = item.Post
		if op == nil {
			op = item.Get
		}
	}
	route := &routers.Route{Spec: doc, Path: req.URL.Path, PathItem: item, Method: req.Method, Operation: op}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
	reqIn := &openapi3filter.RequestValidationInput{Request: req, Route: route, Options: opts}
	if res.StatusCode == http.StatusOK && reqBody != "" {
		req.Body = io.NopCloser(strings.NewReader(reqBody))
		assert.NoError(t, openapi3filter.ValidateRequest(ctx, reqIn), "request %s %s", req.URL, reqBody)
	}
	err := openapi3filter.ValidateResponse(ctx, &openapi3filter.ResponseValidationInput{
		RequestValidationInput: reqIn,
		Status:                 res.StatusCode,
		Header:                 res.Header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                opts,
	})
	assert.NoError(t, err, "%s %s (%s) → %d %s", req.Method, req.URL, reqBody, res.StatusCode, body)
}

// TestOpenAPIDescribesResponses sends every endpoint its success and every
// error it can answer, over real HTTP, and validates each response (status,
// headers, body) against openapi.json.
func TestOpenAPIDescribesResponses(t *testing.T) {
	doc := openAPIDoc(t)

	main := newServer(t, unlimited)
	// A Redis limiter whose Redis is away: its status has every field.
	away, err := redislimit.New(redislimit.Config{URL: "redis://127.0.0.1:1/0"})
	require.NoError(t, err)
	t.Cleanup(func() { away.Close() })
	servers := map[string]*server{
		"redis":   newServer(t, func(c *Config) { c.Limiter = away; c.Redis = away.Status }),
		"main":    main,
		"panic":   newServer(t, func(c *Config) { c.Tables = panicTables{} }),
		"notable": newServer(t, func(c *Config) { c.Tables = new(Table) }),
	}
	vac := diptest.Vacant(t, main.h.tables.DB())
	noKey := []string{"Content-Type", "application/json"}
	badKey := []string{"Content-Type", "application/json", "Authorization", "Bearer nope"}
	limited := []string{"Content-Type", "application/json", "Authorization", "Bearer " + limitedKey}

	type call struct {
		server, method, path, body string
		hdr                        []string
		status                     int
	}
	var calls []call
	for _, path := range lookupPaths {
		ok := `{"phone_number":"12025550123"}`
		calls = append(calls,
			call{"main", "POST", path, ok, jsonKey, 200},
			call{"main", "POST", path, `{"phone_number":"+1 202 555 0124","include_enhanced_lrn":true,"messaging_lookup":true}`, jsonKey, 200},
			call{"main", "POST", path, `{"phone_number":"1"}`, jsonKey, 400},
			call{"main", "POST", path, `{"phone_number":1}`, jsonKey, 400},
			call{"main", "POST", path, `{"phone_number":"` + vac + `"}`, jsonKey, 404},
			call{"main", "POST", path, ok, noKey, 401},
			call{"main", "POST", path, ok, badKey, 401},
			call{"main", "GET", path, "", jsonKey, 405},
			call{"panic", "POST", path, ok, jsonKey, 500},
			call{"notable", "POST", path, ok, jsonKey, 503},
		)
	}
	for _, n := range sampleNumbers(t) {
		calls = append(calls, call{"main", "POST", "/api/v1/lrn", `{"phone_number":"` + n + `","include_enhanced_lrn":true,"messaging_lookup":true}`, jsonKey, 0})
		calls = append(calls, call{"main", "POST", "/api/v1/trust", `{"phone_number":"` + n + `"}`, jsonKey, 0})
	}
	gq := `{"query":"{ lookupLrn(phoneNumber: \"12025550123\") { lrn } }"}`
	calls = append(calls,
		call{"main", "POST", "/graphql", gq, jsonKey, 200},
		call{"main", "POST", "/graphql", `{"query":"{ nope }"}`, jsonKey, 200},
		call{"main", "POST", "/graphql", `{}`, jsonKey, 400},
		call{"main", "POST", "/graphql", gq, noKey, 401},
		call{"main", "PUT", "/graphql", gq, jsonKey, 405},
		call{"panic", "POST", "/graphql", gq, jsonKey, 500},
		call{"notable", "POST", "/graphql", gq, jsonKey, 503},
		call{"main", "GET", "/api/v1/status", "", nil, 200},
		call{"redis", "POST", "/api/v1/lrn", `{"phone_number":"12025550123"}`, jsonKey, 200},
		call{"redis", "GET", "/api/v1/status", "", nil, 200},
		call{"main", "POST", "/api/v1/status", "", nil, 405},
		call{"notable", "GET", "/api/v1/status", "", nil, 503},
		call{"main", "GET", "/openapi.json", "", nil, 200},
		call{"main", "GET", "/metrics", "", nil, 200},
		call{"main", "GET", "/graphql?query=%7B__typename%7D", "", jsonKey, 200},
		call{"main", "POST", "/api/v1/lrn/bulk", `{"phone_numbers":["12025550123","1","` + vac + `"],"include_enhanced_lrn":true,"messaging_lookup":null}`, jsonKey, 200},
		call{"main", "POST", "/api/v1/lrn/bulk", `{"phone_numbers":[]}`, jsonKey, 400},
		call{"main", "POST", "/api/v1/lrn/bulk", `{"phone_numbers":["1"]}`, noKey, 401},
		call{"main", "GET", "/api/v1/lrn/bulk", "", jsonKey, 405},
		call{"panic", "POST", "/api/v1/lrn/bulk", `{"phone_numbers":["1"]}`, jsonKey, 500},
		call{"notable", "POST", "/api/v1/lrn/bulk", `{"phone_numbers":["1"]}`, jsonKey, 503},
		call{"main", "DELETE", "/openapi.json", "", nil, 405},
	)
	// Over the limited key's whole limit of 3, then past what is left.
	calls = append(calls, call{"main", "POST", "/api/v1/lrn/bulk", bulkOf(4), limited, 422})
	for range 4 {
		calls = append(calls, call{"main", "POST", "/api/v1/cnam", `{"phone_number":"12025550123"}`, limited, 0})
	}
	calls = append(calls, call{"main", "POST", "/graphql", gq, limited, 429})
	calls = append(calls, call{"main", "POST", "/api/v1/lrn/bulk", `{"phone_numbers":["1"]}`, limited, 429})

	seen := map[string]bool{}
	for _, c := range calls {
		s := servers[c.server]
		r := s.do(t, c.method, c.path, c.body, c.hdr...)
		req, res, body := r.Request, r.Response, r.body
		if c.status != 0 {
			require.Equal(t, c.status, res.StatusCode, "%s %s: %s", c.method, c.path, body)
		}
		seen[c.path+" "+res.Status] = true

		validateAnswer(t, doc, req, res, body, c.body)
	}
	for _, path := range lookupPaths {
		// No 402: lnpdb serve charges no accounts, so the document does not
		// promise one.
		for _, st := range []string{"200 OK", "400 Bad Request", "401 Unauthorized", "404 Not Found", "405 Method Not Allowed", "500 Internal Server Error", "503 Service Unavailable"} {
			assert.True(t, seen[path+" "+st], "%s %s not exercised", path, st)
		}
	}
	assert.True(t, seen["/api/v1/cnam 429 Too Many Requests"])
	assert.True(t, seen["/graphql 429 Too Many Requests"])

	// A path that is no endpoint still answers the documented error body.
	r := main.do(t, http.MethodGet, "/nope", "")
	var v any
	require.NoError(t, json.Unmarshal(r.body, &v))
	assert.NoError(t, doc.Components.Schemas["Error"].Value.VisitJSON(v, openapi3.EnableJSONSchema2020()))
}
