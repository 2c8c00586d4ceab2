package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
)

func TestGraphQLGet(t *testing.T) {
	s := newServer(t)
	q := url.Values{"query": {`query($n: String!) { lookupLrn(phoneNumber: $n) { lrn success } }`}, "variables": {`{"n":"12025550123"}`}}
	r := s.do(t, http.MethodGet, "/graphql?"+q.Encode(), "", "Authorization", "Bearer "+testKey)
	require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
	_, g := s.gql(t, q.Get("query"), map[string]any{"n": "12025550123"})
	assert.JSONEq(t, string(g.Data["lookupLrn"]), string(decodeRaw(t, r.body)["lookupLrn"]))

	r = s.do(t, http.MethodGet, "/graphql?variables=[1]&query={__typename}", "", "Authorization", "Bearer "+testKey)
	checkErrorBody(t, r, http.StatusBadRequest, CodeInvalidRequest)
	r = s.do(t, http.MethodGet, "/graphql?query={__typename}", "")
	checkErrorBody(t, r, http.StatusUnauthorized, CodeMissingAPIKey)
}

func decodeRaw(t *testing.T, body []byte) map[string]json.RawMessage {
	t.Helper()
	var g gqlResponse
	require.NoError(t, json.Unmarshal(body, &g), "%s", body)
	require.Empty(t, g.Errors, "%s", body)
	return g.Data
}

func TestGraphQLResponseMediaType(t *testing.T) {
	s := newServer(t)
	hdr := []string{"Content-Type", "application/json", "Authorization", "Bearer " + testKey}
	for _, c := range []struct {
		accept, query, ct string
		status            int
	}{
		{"", `{ __typename }`, "application/json", 200},
		{"", `{ nope }`, "application/json", 200},
		{"application/graphql-response+json", `{ __typename }`, "application/graphql-response+json; charset=utf-8", 200},
		{"application/graphql-response+json, application/json;q=0.9", `{ nope }`, "application/graphql-response+json; charset=utf-8", 400},
		{"application/graphql-response+json;q=0, application/json", `{ nope }`, "application/json", 200},
	} {
		b, _ := json.Marshal(map[string]any{"query": c.query})
		r := s.do(t, http.MethodPost, "/graphql", string(b), append(hdr, "Accept", c.accept)...)
		assert.Equal(t, c.status, r.StatusCode, "%+v: %s", c, r.body)
		assert.Equal(t, c.ct, r.Header.Get("Content-Type"), "%+v", c)
		assert.True(t, json.Valid(r.body))
	}
}

func TestGraphQLPersistedQueries(t *testing.T) {
	s := newServer(t)
	query := `{ lookupCnam(phoneNumber: "12025550123") { cnam success } }`
	sum := sha256.Sum256([]byte(query))
	ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
	send := func(withQuery bool) gqlResponse {
		body := map[string]any{"extensions": ext}
		if withQuery {
			body["query"] = query
		}
		b, _ := json.Marshal(body)
		r := s.post(t, "/graphql", string(b))
		require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
		var g gqlResponse
		require.NoError(t, json.Unmarshal(r.body, &g))
		return g
	}
	g := send(false)
	require.Len(t, g.Errors, 1)
	assert.Equal(t, "PersistedQueryNotFound", g.Errors[0].Message)
	g = send(true)
	require.Empty(t, g.Errors)
	want := g.Data["lookupCnam"]
	g = send(false)
	require.Empty(t, g.Errors, "the hash alone now names the query")
	assert.JSONEq(t, string(want), string(g.Data["lookupCnam"]))

	// A hash that is not the query's is refused.
	ext["persistedQuery"].(map[string]any)["sha256Hash"] = strings.Repeat("0", 64)
	g = send(true)
	require.NotEmpty(t, g.Errors)
	assert.Nil(t, g.Data)
}

// TestIntrospectionCurrent asks what the 2021 spec added, as graphql-js's
// getIntrospectionQuery with every option asks it.
func TestIntrospectionCurrent(t *testing.T) {
	s := newServer(t)
	_, g := s.gql(t, `{
		__schema { description directives { name isRepeatable args(includeDeprecated: true) { name isDeprecated } } }
		__type(name: "LrnResult") { name isOneOf specifiedByURL fields { name } inputFields(includeDeprecated: true) { name } }
	}`, nil)
	require.Empty(t, g.Errors)
	var sch struct {
		Description string
		Directives  []struct {
			Name         string
			IsRepeatable *bool
		}
	}
	require.NoError(t, json.Unmarshal(g.Data["__schema"], &sch))
	assert.Contains(t, sch.Description, "docs/CONTRACT.md")
	require.NotEmpty(t, sch.Directives)
	for _, d := range sch.Directives {
		assert.NotNil(t, d.IsRepeatable, d.Name)
	}
	assert.Contains(t, string(g.Data["__type"]), `"isOneOf":false`)
}

// TestGraphQLErrorsSpeakJSON: a variable of the wrong type is named, with
// JSON's name for what was sent, never a Go type's.
func TestGraphQLErrorsSpeakJSON(t *testing.T) {
	s := newServer(t)
	for v, want := range map[string]string{
		`{"a":1}`: "variable $n: cannot use an object as String",
		`5`:       "variable $n: cannot use a number as String",
		`[1]`:     "variable $n: cannot use an array as String",
		`true`:    "variable $n: cannot use a boolean as String",
		`null`:    "variable $n: cannot be null",
	} {
		body := `{"query":"query($n: String!) { lookupLrn(phoneNumber: $n) { lrn } }","variables":{"n":` + v + `}}`
		r := s.post(t, "/graphql", body)
		require.Equal(t, http.StatusOK, r.StatusCode)
		var g gqlResponse
		require.NoError(t, json.Unmarshal(r.body, &g))
		require.Len(t, g.Errors, 1, "%s", r.body)
		assert.Equal(t, want, g.Errors[0].Message)
		for _, goName := range []string{"map[", "float64", "interface {}", "[]interface", "bool as"} {
			assert.NotContains(t, string(r.body), goName)
		}
	}
}

// TestGraphQLCostsPerLookup: every lookup field counts against the limit,
// and a request that would exceed what is left runs none of its lookups.
func TestGraphQLCostsPerLookup(t *testing.T) {
	s := newServer(t)
	aliases := func(n int) string {
		var q strings.Builder
		q.WriteString("{")
		for i := range n {
			fmt.Fprintf(&q, ` l%d: lookupCnam(phoneNumber: "12025550123") { cnam }`, i)
		}
		q.WriteString(" __typename }")
		return q.String()
	}
	r, g := s.gql(t, aliases(10), nil)
	require.Empty(t, g.Errors)
	assert.Equal(t, "190", r.Header.Get("X-RateLimit-Remaining"), "10 aliases cost 10")
	assert.Equal(t, `"default";r=190;t=60`, r.Header.Get("RateLimit"))
	assert.Equal(t, `"default";q=200;w=60`, r.Header.Get("RateLimit-Policy"))
	r, _ = s.gql(t, `{ __typename }`, nil)
	assert.Equal(t, "189", r.Header.Get("X-RateLimit-Remaining"), "a request without lookups costs 1")
	r, _ = s.gql(t, `{ a: lookupLrnBulk(phoneNumbers: ["12025550123", "12025550124", "1"]) { lrn } }`, nil)
	assert.Equal(t, "186", r.Header.Get("X-RateLimit-Remaining"), "a bulk lookup costs its numbers")
	r, _ = s.gql(t, `{ a: lookupCnam(phoneNumber: "12025550123") @skip(if: true) { cnam } }`, nil)
	assert.Equal(t, "185", r.Header.Get("X-RateLimit-Remaining"), "a skipped lookup is not made")
	r, _ = s.gql(t, `{ a: lookupCnam(phoneNumber: "12025550123") { cnam } a: lookupCnam(phoneNumber: "12025550123") { success } lookupTrust(phoneNumber: "12025550123") { trustScore } }`, nil)
	assert.Equal(t, "183", r.Header.Get("X-RateLimit-Remaining"), "fields merged into one are one lookup")
	r, _ = s.gql(t, `query($skip: Boolean!) { ...F a: lookupCnam(phoneNumber: "12025550123") @include(if: $skip) { cnam } } fragment F on Query { lookupTrust(phoneNumber: "12025550123") { trustScore } }`, map[string]any{"skip": true})
	assert.Equal(t, "181", r.Header.Get("X-RateLimit-Remaining"), "fragments and directives are followed")

	// limitedKey has 3: a 4-lookup request can never run; it is refused
	// whole, makes no lookup and costs one, as any refused request.
	limited := []string{"Content-Type", "application/json", "Authorization", "Bearer " + limitedKey}
	b, _ := json.Marshal(map[string]any{"query": aliases(4)})
	cnamLookups := func() string {
		for line := range strings.SplitSeq(string(s.do(t, http.MethodGet, "/metrics", "").body), "\n") {
			if strings.HasPrefix(line, `lnpdb_lookups_total{result="ok",type="cnam"}`) {
				return line
			}
		}
		t.Fatal("no cnam lookups counted")
		return ""
	}
	before := cnamLookups()
	assert.Contains(t, before, "} 12", "10, 1 merged and 1 included")
	r = s.do(t, http.MethodPost, "/graphql", string(b), limited...)
	require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
	assert.Contains(t, string(r.body), `"code":"BULK_EXCEEDS_RATE_LIMIT"`)
	assert.Equal(t, "2", r.Header.Get("X-RateLimit-Remaining"))
	assert.Empty(t, r.Header.Get("Retry-After"))
	assert.Equal(t, before, cnamLookups(), "no lookup was made")
	// 3 exceed what is left (2): refused whole, told to wait, costs nothing.
	b, _ = json.Marshal(map[string]any{"query": aliases(3)})
	r = s.do(t, http.MethodPost, "/graphql", string(b), limited...)
	checkErrorBody(t, r, http.StatusTooManyRequests, CodeRateLimitExceeded)
	assert.Equal(t, "2", r.Header.Get("X-RateLimit-Remaining"))
	assert.NotEmpty(t, r.Header.Get("Retry-After"))
	assert.Equal(t, before, cnamLookups(), "no lookup was made")
	b, _ = json.Marshal(map[string]any{"query": aliases(2)})
	r = s.do(t, http.MethodPost, "/graphql", string(b), limited...)
	require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
	assert.Equal(t, "0", r.Header.Get("X-RateLimit-Remaining"))
}

// amplification is a document of kb KB that fails validation many times
// over: hundreds of fields under one response name with differing
// arguments (each pair a conflict), each also selecting an unknown field.
func amplification(kb int) string {
	var q strings.Builder
	q.WriteString("{")
	for i := 0; q.Len() < kb<<10-60; i++ {
		fmt.Fprintf(&q, ` a: lookupLrn(phoneNumber: "%d") { lrn x%d }`, i, i)
	}
	q.WriteString("}")
	return q.String()
}

// manyErrors is a document of kb KB whose every field is wrong twice: a
// number where a string belongs, and an unknown field.
func manyErrors(kb int) string {
	var q strings.Builder
	q.WriteString("{")
	for i := 0; q.Len() < kb<<10-60; i++ {
		fmt.Fprintf(&q, ` a%d: lookupLrn(phoneNumber: %d) { lrn x }`, i, i)
	}
	q.WriteString("}")
	return q.String()
}

// maxAmplifiedResponse is what the response to a 15 KB document built to
// fail stays under: 20 errors and a note.
const maxAmplifiedResponse = 8 << 10

func TestGraphQLAmplificationBounded(t *testing.T) {
	s := newServer(t)
	q := amplification(15)
	require.Greater(t, strings.Count(q, "lookupLrn"), 300)
	r, g := s.gql(t, q, nil)
	require.Equal(t, http.StatusOK, r.StatusCode)
	require.Len(t, g.Errors, 1, "refused before validation")
	assert.Contains(t, g.Errors[0].Message, `more than 16 fields named "a"`)
	assert.Less(t, len(r.body), maxAmplifiedResponse, "%d bytes", len(r.body))
	assert.Nil(t, g.Data)

	q = manyErrors(15)
	require.Greater(t, strings.Count(q, "lookupLrn"), 300)
	r, g = s.gql(t, q, nil)
	require.Equal(t, http.StatusOK, r.StatusCode)
	require.Len(t, g.Errors, maxGraphQLErrors+1)
	assert.Contains(t, g.Errors[maxGraphQLErrors].Message, "further errors not shown")
	assert.Less(t, len(r.body), maxAmplifiedResponse, "%d bytes", len(r.body))
	assert.Nil(t, g.Data)

	// A legitimate document with a response name repeated (merged) passes.
	_, g = s.gql(t, `{ a: lookupLrn(phoneNumber: "12025550123") { lrn } a: lookupLrn(phoneNumber: "12025550123") { success } }`, nil)
	require.Empty(t, g.Errors)
}

func TestInFlightPerKey(t *testing.T) {
	f := inflight{wait: 50 * time.Millisecond}
	k := auth.HashKey(testKey)
	req := httptest.NewRequest(http.MethodPost, "/graphql", nil)
	var releases []*keySlots
	for range MaxInFlightPerKey {
		rel, ok := f.acquire(&discardWriter{h: http.Header{}}, req, k)
		require.True(t, ok)
		releases = append(releases, rel)
	}
	w := &discardWriter{h: http.Header{}}
	start := time.Now()
	_, ok := f.acquire(w, req, k)
	assert.False(t, ok, "no place frees")
	assert.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond, "after waiting")
	assert.Equal(t, http.StatusTooManyRequests, w.status)
	assert.Equal(t, "1", w.h.Get("Retry-After"))
	rel, ok := f.acquire(&discardWriter{h: http.Header{}}, req, auth.HashKey(limitedKey))
	assert.True(t, ok, "another key is unaffected")
	f.release(rel)

	// A waiting request gets the place a finished one frees.
	f.wait = 10 * time.Second
	got := make(chan bool)
	go func() {
		rel, ok := f.acquire(&discardWriter{h: http.Header{}}, req, k)
		if ok {
			f.release(rel)
		}
		got <- ok
	}()
	time.Sleep(20 * time.Millisecond)
	f.release(releases[0])
	assert.True(t, <-got)
	for _, rel := range releases[1:] {
		f.release(rel)
	}
	f.mu.Lock()
	assert.Empty(t, f.m, "no key is kept once its requests are done")
	f.mu.Unlock()

	// A key's places, pooled for the next key, come back all free.
	for range 3 {
		var held []*keySlots
		for range MaxInFlightPerKey {
			rel, ok := f.acquire(&discardWriter{h: http.Header{}}, req, k)
			require.True(t, ok)
			held = append(held, rel)
		}
		for _, rel := range held {
			f.release(rel)
		}
	}
}

// TestWriteGraphQLIsEncodingJSON: the fast path writes what encoding/json
// writes for the same response.
func TestWriteGraphQLIsEncodingJSON(t *testing.T) {
	for _, data := range []string{
		`{"lookupLrn":{"lrn":"12025569000","carrier":"Plain"}}`,
		`{"lookupLrn":{"carrier":"AT&T <Mobility>"}}`,
		"{\"lookupLrn\":{\"carrier\":\"line\u2028sep\u2029é\"}}",
	} {
		want := encodingJSON(t, &gqlWire{Data: json.RawMessage(data)})
		rec := httptest.NewRecorder()
		w := &recorder{ResponseWriter: rec}
		writeGraphQL(w, http.StatusOK, &graphql.Response{Data: json.RawMessage(data), Extensions: map[string]any{}})
		assert.Equal(t, want, rec.Body.String())
		assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	}
}

// TestGraphQLComplexityLimit: three full bulk lookups of a thousand numbers
// each exceed the complexity limit; the document is refused before any
// lookup, and a cached small document is not affected.
func TestGraphQLComplexityLimit(t *testing.T) {
	s := newServer(t, unlimited)
	numbers := make([]string, MaxBulkNumbers)
	for i := range numbers {
		numbers[i] = fmt.Sprintf("1202555%04d", i)
	}
	const sel = `{ phoneNumber lrn lrn_activated_at carrier success error
		enhanced_lrn_data { carrier carrier_type city zip_code county timezone state rate_center lata ocn }
		messaging { provider enabled country country_code reference_id } }`
	q := `query($a: [String!]!) { a: lookupLrnBulk(phoneNumbers: $a) ` + sel + ` b: lookupLrnBulk(phoneNumbers: $a) ` + sel + ` c: lookupLrnBulk(phoneNumbers: $a) ` + sel + ` }`
	r, g := s.gql(t, q, map[string]any{"a": numbers})
	require.Equal(t, http.StatusOK, r.StatusCode)
	require.Len(t, g.Errors, 1, "%.300s", r.body)
	assert.Contains(t, g.Errors[0].Message, "complexity")
	assert.True(t, g.Data == nil, "%.300s", r.body)
	// The same document with few numbers runs.
	_, g = s.gql(t, q, map[string]any{"a": numbers[:2]})
	require.Empty(t, g.Errors)
	for range 2 { // the second time from the complexity cache
		_, g = s.gql(t, `{ lookupCnam(phoneNumber: "12025550123") { cnam } }`, nil)
		require.Empty(t, g.Errors)
	}
}
