package httpapi

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/updatelog"
	"github.com/lnpdb/lnpdb/format"
)

// produced is every answer a test server gave, as "METHOD path status",
// path the endpoint's (its openapi.json path) or, for a request that
// reached no endpoint, the request's path. A 405 is "* path 405": the
// document lists it under the path's operations, whichever the method.
var produced sync.Map

// fullDiskSkipped is set when TestAdminFullDisk cannot fill a disk, the
// only way to a real 507.
var fullDiskSkipped atomic.Bool

// recording wraps a test server's handler to note what it answers in
// produced; mux finds the endpoint of a request.
func recording(mux *routes, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		noteProduced(mux, r, sw.status)
	})
}

func noteProduced(mux *routes, r *http.Request, status int) {
	if status == 0 {
		status = http.StatusOK
	}
	path := r.URL.Path
	if h, _ := mux.Handler(r); h != nil {
		if rt, ok := h.(*route); ok {
			path = rt.path
		}
	}
	method := r.Method
	switch {
	case status == http.StatusMethodNotAllowed:
		method = "*"
	case method == http.MethodHead:
		method = http.MethodGet
	}
	produced.Store(method+" "+path+" "+strconv.Itoa(status), true)
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// accountsAdminPaths are served by the accounts admin API (package
// billing), whose own test holds them to the document.
//
// The lookup jobs' paths are served by package jobsapi, mounted through
// Config.Keyed and held to openapi.json by its own tests.
func accountsAdminPath(path string) bool {
	for _, p := range []string{"/admin/v1/accounts", "/admin/v1/prices", "/admin/v1/usage", "/api/v1/jobs", "/api/v1/webhook-secret"} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// webUIPath reports whether path is the web interface's (package webui's
// Owns: a sibling front end, which this package does not import).
func webUIPath(path string) bool {
	for _, p := range []string{"/account", "/console"} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return strings.HasPrefix(path, "/ui/")
}

// documented returns what openapi.json lists for this package's paths:
// "METHOD path status", 405s as "* path 405".
func documented(doc *openapi3.T) map[string]bool {
	out := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		if accountsAdminPath(path) {
			continue
		}
		for method, op := range item.Operations() {
			for status := range op.Responses.Map() {
				m := method
				if status == "405" {
					m = "*"
				}
				out[m+" "+path+" "+status] = true
			}
		}
	}
	return out
}

// TestMain runs the tests and then, when every test of the package ran,
// holds what the test servers answered to openapi.json both ways: every
// answer is documented for its path, method and status, and every
// documented status was answered by some test.
func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && flag.Lookup("test.skip").Value.String() == "" && !testing.Short() {
		if err := checkProduced(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: openapi.json and the handlers disagree:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func checkProduced() error {
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI())
	if err != nil {
		return err
	}
	docd := documented(doc)
	var undocumented, unproduced []string
	produced.Range(func(k, _ any) bool {
		s := k.(string)
		f := strings.Fields(s)
		if doc.Paths.Value(f[1]) == nil || accountsAdminPath(f[1]) {
			return true // no endpoint (a 404 NOT_FOUND), or not this package's
		}
		if !docd[s] {
			undocumented = append(undocumented, s)
		}
		return true
	})
	for s := range docd {
		if _, ok := produced.Load(s); !ok {
			if strings.HasSuffix(s, " 507") && fullDiskSkipped.Load() {
				fmt.Fprintln(os.Stderr, "note: "+s+" not produced: TestAdminFullDisk was skipped (it needs root)")
				continue
			}
			unproduced = append(unproduced, s)
		}
	}
	slices.Sort(undocumented)
	slices.Sort(unproduced)
	if len(undocumented)+len(unproduced) == 0 {
		return nil
	}
	return fmt.Errorf("answered but not documented: %q; documented but answered by no test: %q", undocumented, unproduced)
}

// TestOpenAPIRoutesAreHandlers holds the routes the handlers register to
// openapi.json both ways: each method pattern is a documented operation
// (GET serving HEAD too), each path's catch-all (405) is a documented path,
// and each documented operation outside the accounts admin API is a
// registered pattern of the lookup API (with usage and metrics served) or
// of the admin API.
func TestOpenAPIRoutesAreHandlers(t *testing.T) {
	doc := openAPIDoc(t)
	h := newServer(t, withUsage).h
	a := newAdminServer(t).admin
	registered := map[string]bool{}
	for _, p := range append(slices.Clone(h.mux.patterns), a.mux.patterns...) {
		registered[p] = true
		_, path, _ := strings.Cut(p, " ")
		assert.False(t, webUIPath(path) || webUIPath(p), "%s: the API serves no path of the web interface", p)
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			path = method
			assert.NotNil(t, doc.Paths.Value(path), "%s is served but not documented", path)
			continue
		}
		item := doc.Paths.Value(path)
		if assert.NotNil(t, item, "%s is served but not documented", p) {
			assert.NotNil(t, item.GetOperation(method), "%s is served but not documented", p)
		}
	}
	for path, item := range doc.Paths.Map() {
		// The web interface's pages (/account, /console, /ui/: package
		// webui, mounted beside this API by serve) are HTML for a person
		// at a browser, not API: no client is generated from them, and
		// they are not documented here, nor served by these handlers.
		assert.False(t, webUIPath(path), "%s is a web page, not API", path)
		if accountsAdminPath(path) {
			continue
		}
		assert.True(t, registered[path], "%s is documented but has no 405 catch-all", path)
		for _, method := range slices.Sorted(maps.Keys(item.Operations())) {
			assert.True(t, registered[method+" "+path], "%s %s is documented but not served", method, path)
		}
	}
}

// withUsage serves GET /api/v1/usage: accounts that report usage.
func withUsage(c *Config) { c.Accounts = &priced{accounts: accounts{credit: 1 << 30}} }

// TestAdminPathsWithoutAdminKeys: without admin keys the admin API is not
// mounted, and its paths answer 404 NOT_FOUND as any path that is no
// endpoint, as openapi.json says.
func TestAdminPathsWithoutAdminKeys(t *testing.T) {
	s := newServer(t)
	for _, c := range []struct{ method, path string }{
		{"POST", "/admin/v1/updates"}, {"POST", "/admin/v1/compact"}, {"GET", "/admin/v1/table"},
	} {
		r := s.do(t, c.method, c.path, "", "Authorization", "Bearer "+adminKey)
		checkErrorBody(t, r, http.StatusNotFound, CodeNotFound)
	}
}

// TestOpenAPIStatusesProduced provokes the documented statuses that the
// other tests do not, so that TestMain finds every one produced; each is
// checked here too.
func TestOpenAPIStatusesProduced(t *testing.T) {
	limited := []string{"Authorization", "Bearer " + limitedKey}
	suspended := []string{"Content-Type", "application/json", "Authorization", "Bearer " + suspendedKey}
	main := newServer(t, withUsage, func(c *Config) { c.Keys = suspendedKeys{testKeys()} })
	panics := newServer(t, func(c *Config) { c.Tables = panicTables{} })
	notable := newServer(t, func(c *Config) { c.Tables = new(Table) })
	get := "/graphql?query=%7B__typename%7D"
	for _, c := range []struct {
		s            *server
		method, path string
		body         string
		hdr          []string
		status       int
	}{
		{main, "GET", get, "", suspended, 403},
		{main, "GET", "/api/v1/usage", "", suspended, 403},
		{main, "POST", "/api/v1/cnam", `{"phone_number":"12025550123"}`, suspended, 403},
		{main, "POST", "/api/v1/messaging", `{"phone_number":"12025550123"}`, suspended, 403},
		{main, "POST", "/api/v1/trust", `{"phone_number":"12025550123"}`, suspended, 403},
		{main, "POST", "/metrics", "", nil, 405},
		{main, "POST", "/readyz", "", nil, 405},
		{main, "POST", "/api/v1/lrn/bulk", `{"phone_numbers":["12025550123"]}`, []string{"Content-Type", "text/plain", "Authorization", "Bearer " + testKey}, 415},
		{main, "POST", "/api/v1/lrn/bulk", `{"phone_numbers":["` + strings.Repeat("1", MaxBodyBytes) + `"]}`, jsonKey, 413},
		{panics, "GET", get, "", jsonKey, 500},
		{notable, "GET", get, "", jsonKey, 503},
		// The limited key (3 a window) spent, then refused everywhere.
		{main, "GET", "/api/v1/usage", "", limited, 200},
		{main, "GET", "/api/v1/usage", "", limited, 200},
		{main, "GET", "/api/v1/usage", "", limited, 200},
		{main, "GET", "/api/v1/usage", "", limited, 429},
		{main, "GET", get, "", limited, 429},
		{main, "POST", "/api/v1/messaging", `{"phone_number":"12025550123"}`, append([]string{"Content-Type", "application/json"}, limited...), 429},
	} {
		r := c.s.do(t, c.method, c.path, c.body, c.hdr...)
		assert.Equal(t, c.status, r.StatusCode, "%s %s: %s", c.method, c.path, r.body)
	}

	admin := []string{"Authorization", "Bearer " + adminKey}
	csv := append([]string{"Content-Type", "text/csv"}, admin...)
	const feed = "action,tn,lrn,spid,activated_at\nD,2014814567,,,\n"
	a := newAdminServer(t)
	r := a.do(t, http.MethodGet, "/admin/v1/compact", "", admin...)
	assert.Equal(t, http.StatusMethodNotAllowed, r.StatusCode, "%s", r.body)
	r = a.do(t, http.MethodPost, "/admin/v1/updates", feed, append(csv, "Idempotency-Key", "k1")...)
	assert.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
	r = a.do(t, http.MethodPost, "/admin/v1/updates", "action,tn,lrn,spid,activated_at\nD,2014814568,,,\n", append(csv, "Idempotency-Key", "k1")...)
	checkErrorBody(t, r, http.StatusUnprocessableEntity, CodeIdempotencyKeyReused)
	r = rawRequest(t, a.server, "POST /admin/v1/updates HTTP/1.1\r\nHost: x\r\nContent-Type: text/csv\r\nAuthorization: Bearer "+adminKey+
		"\r\nContent-Length: "+strconv.Itoa(MaxUpdateBodyBytes+1)+"\r\n\r\n")
	assert.Equal(t, http.StatusRequestEntityTooLarge, r.StatusCode, "%s", r.body)

	// No table being served: the admin API answers 503.
	none := newAdminServerWith(t, new(Table), nil)
	r = none.do(t, http.MethodPost, "/admin/v1/compact", "", admin...)
	checkErrorBody(t, r, http.StatusServiceUnavailable, CodeUnavailable)
	r = none.do(t, http.MethodPost, "/admin/v1/updates", feed, csv...)
	checkErrorBody(t, r, http.StatusServiceUnavailable, CodeUnavailable)

	// A shared update log whose other nodes have not applied the batch in
	// time: 202.
	logged := newAdminServerWith(t, nil, slowLog{})
	r = logged.do(t, http.MethodPost, "/admin/v1/updates?wait=2", feed, csv...)
	assert.Equal(t, http.StatusAccepted, r.StatusCode, "%s", r.body)

	// One whose other node refused the batch (its table lacks the SPID):
	// 202, naming it, and not counted as applied.
	refused := newAdminServerWith(t, nil, slowLog{refused: []string{"node2"}})
	r = refused.do(t, http.MethodPost, "/admin/v1/updates?wait=2", feed, csv...)
	assert.Equal(t, http.StatusAccepted, r.StatusCode, "%s", r.body)
	assert.Contains(t, string(r.body), `"nodes_applied":1,"nodes_refused":["node2"]`)
}

// slowLog is a shared update log where the batch is logged and applied
// here, but not yet by the other nodes waited for, or refused by them.
type slowLog struct{ refused []string }

func (l slowLog) Post(_ context.Context, ups []format.Update, _ string, _ int) (updatelog.Result, error) {
	var res updatelog.Result
	res.Seq, res.Deleted, res.Nodes, res.Refused = 1, len(ups), 1, l.refused
	return res, nil
}

// rawRequest sends req, a request head as it goes on the wire, to s and
// reads the answer: for a head no client would send without its body.
func rawRequest(t *testing.T, s *server, req string) response {
	t.Helper()
	c, err := net.Dial("tcp", s.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, req)
	require.NoError(t, err)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return response{res, b}
}

// TestOpenAPIForGenerators: the document is OpenAPI 3.1 (null as a type,
// JSON Schema 2020-12), which kin-openapi validates; what generators read
// is exact: every required name is a property, and a request property that
// is not required has no "default" (openapi-typescript, by default, makes a
// property with a default non-optional).
func TestOpenAPIForGenerators(t *testing.T) {
	doc := openAPIDoc(t)
	require.True(t, doc.IsOpenAPI31OrLater(), "openapi %s", doc.OpenAPI)
	assert.NotContains(t, string(OpenAPI()), `"nullable"`, "3.0's nullable; 3.1 says null in type")
	for name, ref := range doc.Components.Schemas {
		s := ref.Value
		for _, r := range s.Required {
			assert.Contains(t, s.Properties, r, "%s requires %s, which it does not declare", name, r)
		}
		if !strings.HasSuffix(name, "Request") {
			continue
		}
		for prop, p := range s.Properties {
			if !slices.Contains(s.Required, prop) {
				assert.Nil(t, p.Value.Default, "%s.%s is optional but has a default", name, prop)
			}
		}
	}
}
