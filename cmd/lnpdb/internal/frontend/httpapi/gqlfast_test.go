package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gqlServers are servers on the same tables answering lookupLrn as lnpdb
// serve does (fast: lrnOperation, then lrnFields), with lrnFields only, and
// with gqlgen's own execution only (plain).
type gqlServers struct{ fast, fields, plain *server }

func gqlPair(t *testing.T, opts ...option) gqlServers {
	opts = append([]option{unlimited}, opts...)
	s := gqlServers{newServer(t, opts...), newServer(t, opts...), newServer(t, opts...)}
	s.fields.h.gql = s.fields.h.newGraphQL(false, true)
	s.plain.h.gql = s.plain.h.newGraphQL(false, false)
	return s
}

// agree posts body to each and requires the same status, Content-Type and
// bytes; it returns the plain answer. The fast server is asked twice: a
// document its lrnOperation answers the first time, its plan (gqlplan.go)
// answers the second.
func agree(t *testing.T, s gqlServers, body string, hdr ...string) response {
	t.Helper()
	return agreeOn(t, s, http.MethodPost, "/graphql", body, hdr...)
}

// agreeOn is agree with a method and path (a GET's query string).
func agreeOn(t *testing.T, s gqlServers, method, path, body string, hdr ...string) response {
	t.Helper()
	h := append([]string{"Content-Type", "application/json", "Authorization", "Bearer " + testKey}, hdr...)
	want := s.plain.do(t, method, path, body, h...)
	for _, srv := range []struct {
		name string
		*server
	}{{"fast", s.fast}, {"fields", s.fields}, {"fast again", s.fast}} {
		got := srv.do(t, method, path, body, h...)
		require.Equal(t, want.StatusCode, got.StatusCode, "%s: %s %s", srv.name, path, body)
		require.Equal(t, want.Header.Get("Content-Type"), got.Header.Get("Content-Type"), "%s: %s %s", srv.name, path, body)
		require.Equal(t, string(want.body), string(got.body), "%s: %s %s", srv.name, path, body)
	}
	return want
}

func gqlBody(t *testing.T, query string, vars map[string]any) string {
	b, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(t, err)
	return string(b)
}

// TestGraphQLFastPathAgrees: lookupLrn answered by lrnFields is byte for
// byte what gqlgen's execution answers, for every selection it takes and
// every one it leaves to gqlgen, on answers and on failures.
func TestGraphQLFastPathAgrees(t *testing.T) {
	s := gqlPair(t)
	all := `phoneNumber lrn lrn_activated_at carrier success error code details __typename
		enhanced_lrn_data { __typename carrier carrier_type city zip_code county timezone state rate_center lata ocn }
		messaging { __typename provider enabled country country_code reference_id }`
	selections := []string{
		all,
		`lrn`,
		`success carrier`,
		`lrn lrn_activated_at enhanced_lrn_data { carrier carrier_type city zip_code county timezone state rate_center lata ocn }`,
		`a: lrn b: carrier c: success enhanced_lrn_data { x: city y: state } m: messaging { p: provider e: enabled }`,
		`lrn lrn`,                          // merged by gqlgen: left to it
		`lrn ... on LrnResult { carrier }`, // a fragment: left to gqlgen
		`lrn carrier @include(if: $inc)`,   // a directive: left to gqlgen
		`enhanced_lrn_data { city city }`,  // merged: left to gqlgen
		`enhanced_lrn_data { city @skip(if: $inc) }`,
	}
	answered := 0
	numbers := append(sampleNumbers(t)[:12], "1", "", "19115550123", "2025550123", "+1 (202) 555-0123", "1202555012x")
	for _, sel := range selections {
		for _, n := range numbers {
			for _, args := range []string{
				`includeEnhancedLrn: true, includeMessaging: true`,
				``,
				`includeEnhancedLrn: $enh, includeMessaging: $msg`,
				`includeEnhancedLrn: null`,
			} {
				if args != "" {
					args = ", " + args
				}
				decl, vars := "$n: String!", map[string]any{"n": n}
				if strings.Contains(args, "$enh") {
					decl, vars["enh"], vars["msg"] = decl+", $enh: Boolean, $msg: Boolean", true, nil
				}
				if strings.Contains(sel, "$inc") {
					decl += ", $inc: Boolean = true"
				}
				q := fmt.Sprintf(`query(%s) { lookupLrn(phoneNumber: $n%s) { %s } }`, decl, args, sel)
				r := agree(t, s, gqlBody(t, q, vars))
				require.NotContains(t, string(r.body), `"errors"`, "%s", q)
				answered++
			}
		}
	}
	require.Equal(t, len(selections)*len(numbers)*4, answered)
	// Literal arguments, several fields, other lookups beside.
	agree(t, s, gqlBody(t, `{ a: lookupLrn(phoneNumber: "12025550123", includeEnhancedLrn: true) { lrn enhanced_lrn_data { ocn } }
		b: lookupLrn(phoneNumber: "1") { success error code details }
		c: lookupCnam(phoneNumber: "12025550123") { cnam } __typename }`, nil))
	// Several lookupLrn fields, and root fields lrnOperation leaves alone.
	for _, q := range []string{
		`{ a: lookupLrn(phoneNumber: "12025550123", includeMessaging: true) { lrn messaging { provider } } b: lookupLrn(phoneNumber: "1") { success error code details } c: lookupLrn(phoneNumber: "19115550123") { phoneNumber success code } }`,
		`{ a: lookupLrn(phoneNumber: "12025550123") { lrn } a: lookupLrn(phoneNumber: "12025550123") { carrier } }`,
		`{ a: lookupLrn(phoneNumber: "12025550123") @include(if: true) { lrn } b: lookupLrn(phoneNumber: "12025550123") @skip(if: true) { lrn } }`,
		`{ __typename lookupLrn(phoneNumber: "12025550123") { lrn } }`,
		`query Named { lookupLrn(phoneNumber: "12025550123") { lrn } }`,
	} {
		r := agree(t, s, gqlBody(t, q, nil))
		require.NotContains(t, string(r.body), `"errors"`, "%s", q)
	}
	// More lookups than a request may make: the rest fail as gqlgen fails them.
	var many strings.Builder
	many.WriteString("{")
	for i := range MaxGraphQLLookups + 3 {
		fmt.Fprintf(&many, ` f%d: lookupLrn(phoneNumber: "12025550123") { lrn }`, i)
	}
	many.WriteString("}")
	// The fields run concurrently, so which of them fail differs from run
	// to run: the same number fail, with the same error.
	outcome := func(s *server) (answered, refused int, messages []string) {
		r, g := s.gql(t, many.String(), nil)
		require.Equal(t, http.StatusOK, r.StatusCode)
		for _, v := range g.Data {
			if string(v) == "null" {
				refused++
			} else {
				answered++
			}
		}
		for _, e := range g.Errors {
			messages = append(messages, e.Message)
		}
		return answered, refused, messages
	}
	fa, fr, fm := outcome(s.fast)
	pa, pr, pm := outcome(s.plain)
	assert.Equal(t, []int{MaxGraphQLLookups, 3}, []int{fa, fr})
	assert.Equal(t, []int{pa, pr}, []int{fa, fr})
	assert.Equal(t, pm, fm)
	assert.Contains(t, fm, errTooManyLookups.Error())
	// The graphql-response media type.
	agree(t, s, gqlBody(t, `{ lookupLrn(phoneNumber: "12025550123") { lrn } }`, nil), "Accept", mediaGraphQLResponse)
}

// TestGraphQLFastPathUnpaid: a lookup refused for want of balance answers,
// and reports its error on the field's path, as gqlgen's execution does.
func TestGraphQLFastPathUnpaid(t *testing.T) {
	s := gqlPair(t, func(c *Config) { c.Accounts = &priced{} })
	r := agree(t, s, gqlBody(t, `{ ok: lookupLrn(phoneNumber: "1") { success } paid: lookupLrn(phoneNumber: "12025550123") { lrn success error code details } }`, nil))
	assert.Contains(t, string(r.body), `"path":["paid"]`)
	assert.Contains(t, string(r.body), CodeInsufficientBalance)
}

// TestGraphQLFastPathUsed: the usual lookup takes the fast path, which
// allocates a fraction of what gqlgen's execution does.
func TestGraphQLFastPathUsed(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	allocs := func(h http.Handler) float64 {
		body := gqlBody(t, graphQLLoadQuery, map[string]any{"n": "12025550123"})
		w := &discardWriter{h: http.Header{}}
		rb := new(rereader)
		req, err := http.NewRequest(http.MethodPost, "/graphql", nil)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+testKey)
		return testing.AllocsPerRun(200, func() {
			rb.Reset([]byte(body))
			req.Body = rb
			clear(w.h)
			h.ServeHTTP(w, req)
		})
	}
	s := gqlPair(t)
	f, o, p := allocs(s.fast.h), allocs(s.fields.h), allocs(s.plain.h)
	s.fast.h.plans = nil
	op := allocs(s.fast.h)
	t.Logf("allocations per lookupLrn: %v as served (a plan), %v with lrnOperation, %v with lrnFields only, %v with neither", f, op, o, p)
	assert.Less(t, o, p/2, "lrnFields is not taken, or allocates as much as gqlgen")
	assert.Less(t, op, o-10, "lrnOperation is not taken, or allocates as much as lrnFields")
	assert.Less(t, f, op-10, "the plan is not taken, or allocates as much as gqlgen's operation context")
	assert.LessOrEqual(t, f, float64(maxPlanAllocs), "a planned lookupLrn allocates more than it did")
}

// maxPlanAllocs is what a planned lookupLrn allocated, access log on, when
// plans were made (BenchmarkGraphQLLRNPersisted, without the access log:
// 6): the body's string, the answer's phone number, the rate limit's
// header values, net/http's body limit, the log's.
const maxPlanAllocs = 8

// FuzzAppendQuoted: appendQuoted writes what gqlgen's graphql.MarshalString
// writes.
func FuzzAppendQuoted(f *testing.F) {
	for _, s := range []string{"", "plain", "quote\" back\\slash", "\t\r\n\x00\x1f\x7f", "\u2028 é \xff\xfe invalid", "<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want, got bytes.Buffer
		graphql.MarshalString(s).MarshalGQL(&want)
		got.Write(appendQuoted(nil, s))
		if !bytes.Equal(want.Bytes(), got.Bytes()) {
			t.Fatalf("appendQuoted(%q) = %q, gqlgen writes %q", s, got.Bytes(), want.Bytes())
		}
	})
}

// TestWriteGraphQLEscapes: the data of a GraphQL answer goes out as
// encoding/json writes a raw message without HTML escaping, whichever
// bytes it holds.
func TestWriteGraphQLEscapes(t *testing.T) {
	for _, data := range []string{
		`{"a":"plain"}`,
		"{\"a\":\"AT&T <x> \u2028 \u2029 € ‰ – ✓\"}",
		"{\"a\":\"line\u2028separator only\"}",
		`{"a":"€ only: no escape"}`,
		`{"a":"\"quoted\" \\ back"}`,
	} {
		want := encodingJSON(t, struct {
			Data json.RawMessage `json:"data"`
		}{json.RawMessage(data)})
		w := &recorder{ResponseWriter: newDiscardRecorder()}
		writeGraphQL(w, http.StatusOK, &graphql.Response{Data: json.RawMessage(data)})
		assert.Equal(t, want, w.ResponseWriter.(*bodyRecorder).b.String(), "%s", data)
	}
}

// bodyRecorder keeps what is written.
type bodyRecorder struct {
	discardWriter
	b bytes.Buffer
}

func newDiscardRecorder() *bodyRecorder {
	return &bodyRecorder{discardWriter: discardWriter{h: http.Header{}}}
}

func (w *bodyRecorder) Write(b []byte) (int, error) { return w.b.Write(b) }

// TestGraphQLClientGone: a request whose client has gone by the time
// gqlgen executes it is dropped quietly, not taken for a panic.
func TestGraphQLClientGone(t *testing.T) {
	s := newServer(t, unlimited)
	s.h.gql = s.h.newGraphQL(false, false) // gqlgen's execution, which checks the context
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(gqlBody(t, `{ lookupLrn(phoneNumber: "12025550123") { lrn } }`, nil))).WithContext(ctx)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testKey)
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, req)
	assert.NotContains(t, s.logs.String(), "panic")
	assert.NotEqual(t, http.StatusInternalServerError, w.Code)
}

// planned reports whether s's fast server keeps a plan of query.
func (s gqlServers) planned(query string) bool {
	_, ok := s.fast.h.plans.Get(context.Background(), query)
	return ok
}

// TestGraphQLPlanAgrees: a document answered by its plan is answered byte
// for byte as gqlgen answers it, with every kind of variables, operation
// name, persisted query and method; what a plan does not take (a wrong
// type, a missing variable, a default) is gqlgen's, errors included.
func TestGraphQLPlanAgrees(t *testing.T) {
	s := gqlPair(t)
	docs := []struct {
		query string
		plan  bool
	}{
		{graphQLLoadQuery, true},
		{`query Q($n: String!, $e: Boolean, $m: Boolean) { a: lookupLrn(phoneNumber: $n, includeEnhancedLrn: $e) { lrn carrier enhanced_lrn_data { city } }
			b: lookupLrn(phoneNumber: "12025550123", includeMessaging: $m) { phoneNumber messaging { provider enabled } __typename } }`, true},
		{`query($n: String!, $e: Boolean!) { lookupLrn(phoneNumber: $n, includeEnhancedLrn: $e, includeMessaging: null) { x: success lrn_activated_at code details error } }`, true},
		{`query($e: Boolean) { lookupLrn(phoneNumber: "12025550123", includeEnhancedLrn: $e) { lrn carrier } }`, true},
		{`query($n: String!, $e: Boolean = true) { lookupLrn(phoneNumber: $n, includeEnhancedLrn: $e) { lrn carrier } }`, false}, // a default
		{`query($n: String) { lookupLrn(phoneNumber: $n) { lrn } }`, false},                                                      // invalid
		{`query($n: String!) { lookupLrn(phoneNumber: $n) { lrn } } query Other { __typename }`, false},                          // two operations
		{`query($n: String!, $x: Int) { lookupLrn(phoneNumber: $n) { lrn } }`, false},                                            // an Int
		{`query($n: String!) @include(if: true) { lookupLrn(phoneNumber: $n) { lrn } }`, false},                                  // a directive where none goes
	}
	varSets := []string{
		`{"n":"12025550123"}`,
		`{"n":"12025550123","e":true,"m":true}`,
		`{"n":"19115550123","e":false,"m":null}`,
		`{"n":"1","e":null}`,
		`{"n":"+1 (202) 555-0123","e":true,"x":3}`,
		`{"n":"12025550123","n":"1","e":true,"e":false}`,
		`{}`,
		`null`,
		`{"n":null,"e":true}`,
		`{"n":12025550123}`,
		`{"n":"12025550123","e":"true"}`,
		`{"n":"12025550123","e":1}`,
		`{"n":["12025550123"],"e":true}`,
		`{"n":{"a":"1"}}`,
		`{"n":"1202555012\u0033","e":true}`,
		`{"n":"","e":true,"m":false}`,
	}
	for _, d := range docs {
		q, err := json.Marshal(d.query)
		require.NoError(t, err)
		sum := sha256.Sum256([]byte(d.query))
		ext := `"extensions":{"persistedQuery":{"version":1,"sha256Hash":"` + hex.EncodeToString(sum[:]) + `"}}`
		// The hash before the query is known: gqlgen's error, either way.
		agree(t, s, `{`+ext+`,"variables":{"n":"1"}}`)
		agree(t, s, `{"query":`+string(q)+`,`+ext+`,"variables":{"n":"12025550123","e":true}}`)
		for _, vars := range varSets {
			for _, op := range []string{``, `"operationName":null,`, `"operationName":"Q",`, `"operationName":"Other",`} {
				agree(t, s, `{`+op+`"query":`+string(q)+`,"variables":`+vars+`}`)
				agree(t, s, `{`+op+ext+`,"variables":`+vars+`}`)
				agree(t, s, `{`+op+ext+`,"variables":`+vars+`}`, "Accept", mediaGraphQLResponse)
			}
			agree(t, s, `{"query":`+string(q)+`}`)
			get := "/graphql?query=" + url.QueryEscape(d.query) + "&variables=" + url.QueryEscape(vars)
			agreeOn(t, s, http.MethodGet, get, "")
		}
		assert.Equal(t, d.plan, s.planned(d.query), "a plan of %s", d.query)
	}
}

// TestGraphQLPlanLimits: a plan's lookups count against the key's limit
// as gqlgen's do, one per field: the same headers, the same refusal, the
// same metrics.
func TestGraphQLPlanLimits(t *testing.T) {
	s := gqlPair(t, func(c *Config) { c.DefaultLimit = 1 << 20 })
	two := gqlBody(t, `query($n: String!) { a: lookupLrn(phoneNumber: $n) { lrn } b: lookupLrn(phoneNumber: "1") { success code } }`,
		map[string]any{"n": "12025550123"})
	hdr := []string{"Content-Type", "application/json", "Authorization", "Bearer " + limitedKey}
	for _, srv := range []*server{s.fast, s.plain} {
		srv.post(t, "/graphql", two) // testKey's: the plan made
	}
	require.True(t, s.planned(`query($n: String!) { a: lookupLrn(phoneNumber: $n) { lrn } b: lookupLrn(phoneNumber: "1") { success code } }`))
	// limitedKey has 3 a minute: 2, then a refusal of 2.
	for i, want := range []int{http.StatusOK, http.StatusTooManyRequests} {
		f := s.fast.do(t, http.MethodPost, "/graphql", two, hdr...)
		p := s.plain.do(t, http.MethodPost, "/graphql", two, hdr...)
		require.Equal(t, want, p.StatusCode, "request %d", i)
		require.Equal(t, p.StatusCode, f.StatusCode, "request %d", i)
		require.Equal(t, string(p.body), string(f.body), "request %d", i)
		for _, h := range []string{"X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset", "Ratelimit", "Ratelimit-Policy", "Retry-After"} {
			assert.Equal(t, p.Header.Values(h), f.Header.Values(h), "request %d: %s", i, h)
		}
	}
	counters := func(srv *server) []string {
		var out []string
		for line := range strings.SplitSeq(string(srv.do(t, http.MethodGet, "/metrics", "").body), "\n") {
			if strings.HasPrefix(line, "lnpdb_lookups_total") || strings.HasPrefix(line, "lnpdb_http_requests_total") {
				out = append(out, line)
			}
		}
		return out
	}
	assert.Equal(t, counters(s.plain), counters(s.fast))
	assert.NotEmpty(t, counters(s.fast))
}
