package httpapi

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/diptest"
	"io/fs"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cnam"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/lrn"
	"github.com/lnpdb/lnpdb/messaging"
	"github.com/lnpdb/lnpdb/trust"
)

var wireTime = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$`)

// lookupPaths are the REST lookup endpoints.
var lookupPaths = []string{"/api/v1/lrn", "/api/v1/cnam", "/api/v1/messaging", "/api/v1/trust"}

// find returns a canonical number of the sample, from its assigned codes,
// for which ok holds of its LRN lookup.
func find(t *testing.T, db *format.DB, ok func(lrn.Result, error) bool) string {
	t.Helper()
	b, err := fs.ReadFile(lnpdb.Sample(), "blocks.csv")
	require.NoError(t, err)
	recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	require.NoError(t, err)
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, r := range recs[1:] {
		for line := range 10000 {
			n := fmt.Sprintf("1%s%s%04d", r[col["npa"]], r[col["nxx"]], line)
			if ok(lrn.Lookup(db, n, lrn.Options{Enhanced: true})) {
				return n
			}
		}
	}
	t.Fatal("the sample has no such number")
	return ""
}

// assertSame checks a REST answer against the library's answer for the
// same question: the body is the library's Result marshalled, or the error
// maps to its status.
func assertSame(t *testing.T, r response, want any, err error) {
	t.Helper()
	switch {
	case err == nil:
		require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
		b, merr := json.Marshal(want)
		require.NoError(t, merr)
		assert.JSONEq(t, string(b), string(r.body))
	case errors.Is(err, lnpdb.ErrNotFound):
		assert.Equal(t, http.StatusNotFound, r.StatusCode)
	case errors.Is(err, lnpdb.ErrInvalidNumber):
		assert.Equal(t, http.StatusBadRequest, r.StatusCode)
	default:
		t.Fatalf("library error %v", err)
	}
}

func TestRESTBodiesAreTheLibraryResults(t *testing.T) {
	s := newServer(t, unlimited)
	db := s.h.tables.DB()
	numbers := append(sampleNumbers(t), diptest.Vacant(t, db), "+1 (202) 555-0123", "202.555.0124", "tel:+12025550123;npdi;rn=+12025569000")
	for _, n := range numbers {
		for _, opt := range []lrn.Options{{}, {Enhanced: true}, {Messaging: true}, {Enhanced: true, Messaging: true}} {
			want, err := lrn.Lookup(db, n, opt)
			r := s.post(t, "/api/v1/lrn", fmt.Sprintf(`{"phone_number":%q,"include_enhanced_lrn":%t,"messaging_lookup":%t}`, n, opt.Enhanced, opt.Messaging))
			assertSame(t, r, want, err)
		}
		body := fmt.Sprintf(`{"phone_number":%q}`, n)
		c, err := cnam.Lookup(db, n, cnam.Options{})
		assertSame(t, s.post(t, "/api/v1/cnam", body), c, err)
		m, err := messaging.Lookup(db, n, messaging.Options{})
		assertSame(t, s.post(t, "/api/v1/messaging", body), m, err)
		tr, err := trust.Lookup(db, n, trust.Options{Now: testNow})
		assertSame(t, s.post(t, "/api/v1/trust", body), tr, err)
	}
}

func TestRESTLRNWire(t *testing.T) {
	s := newServer(t)
	db := s.h.tables.DB()
	ported := find(t, db, func(r lrn.Result, err error) bool { return err == nil && r.Ported && !r.ActivatedAt.IsZero() })
	own := find(t, db, func(r lrn.Result, err error) bool { return err == nil && r.Source == lrn.SourceCode })

	t.Run("ported", func(t *testing.T) {
		m := s.post(t, "/api/v1/lrn", `{"phone_number":"`+ported+`"}`).json(t)
		assert.ElementsMatch(t, []string{"lrn", "phone_number", "lrn_activated_at"}, keys(m))
		assert.Equal(t, ported, m["phone_number"])
		assert.Regexp(t, `^1\d{10}$`, m["lrn"])
		assert.Regexp(t, wireTime, m["lrn_activated_at"])
		assert.NotContains(t, m["lrn_activated_at"], "Z")
	})
	t.Run("routes on itself", func(t *testing.T) {
		m := s.post(t, "/api/v1/lrn", `{"phone_number":"`+own+`"}`).json(t)
		assert.ElementsMatch(t, []string{"lrn", "phone_number"}, keys(m), "lrn_activated_at is omitted when unknown")
		assert.Equal(t, own, m["lrn"])
	})
	t.Run("enhanced and messaging on request", func(t *testing.T) {
		m := s.post(t, "/api/v1/lrn", `{"phone_number":"`+ported+`","include_enhanced_lrn":true,"messaging_lookup":true}`).json(t)
		require.Contains(t, m, "enhanced_lrn_data")
		require.Contains(t, m, "messaging")
		assert.ElementsMatch(t, []string{"carrier", "carrier_type", "ocn", "city", "state", "county", "zip_code", "lata", "rate_center", "timezone"},
			keys(m["enhanced_lrn_data"].(map[string]any)))
		assert.ElementsMatch(t, []string{"provider", "enabled", "country", "country_code", "reference_id"},
			keys(m["messaging"].(map[string]any)))
		assert.NotContains(t, m, "enhanced_lrn")
	})
	t.Run("unknown fields ignored, null flags absent", func(t *testing.T) {
		r := s.post(t, "/api/v1/lrn", `{"phone_number":"`+ported+`","enhanced_lrn":true,"x":{"y":[1,2,{}]},"include_enhanced_lrn":null,"messaging_lookup":null}`)
		require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
		assert.NotContains(t, r.json(t), "enhanced_lrn_data")
	})
	t.Run("number forms echo canonical", func(t *testing.T) {
		for _, in := range []string{"+1 (202) 555-0123", "202-555-0123", "2025550123", "1.202.555.0123", "tel:+12025550123;npdi"} {
			r := s.post(t, "/api/v1/cnam", `{"phone_number":"`+in+`"}`)
			require.Equal(t, http.StatusOK, r.StatusCode, "%s: %s", in, r.body)
			assert.Equal(t, "12025550123", r.json(t)["phone_number"], in)
		}
	})
	t.Run("charset", func(t *testing.T) {
		for _, ct := range []string{"application/json; charset=utf-8", `application/json; charset="UTF-8"`, "Application/JSON"} {
			r := s.do(t, http.MethodPost, "/api/v1/lrn", `{"phone_number":"`+ported+`"}`, "Content-Type", ct, "Authorization", "Bearer "+testKey)
			assert.Equal(t, http.StatusOK, r.StatusCode, ct)
		}
	})
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// errCase is one request that must fail with status and code.
type errCase struct {
	name         string
	method, path string
	hdr          []string
	body         string
	status       int
	code         string
}

func (c errCase) check(t *testing.T, s *server) response {
	t.Helper()
	r := s.do(t, c.method, c.path, c.body, c.hdr...)
	require.Equal(t, c.status, r.StatusCode, "%s", r.body)
	assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
	m := r.json(t)
	assert.Equal(t, c.code, m["code"])
	if c.code != CodeRateLimitExceeded {
		assert.ElementsMatch(t, []string{"error", "code", "details"}, keys(m), "%s", r.body)
	}
	assert.NotEmpty(t, m["error"])
	assert.NotEmpty(t, m["details"])
	return r
}

var (
	jsonKey = []string{"Content-Type", "application/json", "Authorization", "Bearer " + testKey}
	big     = `{"phone_number":"12025550123","pad":"` + strings.Repeat("x", MaxBodyBytes) + `"}`
)

// ruleDetails are the details of TestRESTErrors' numbers that have a
// number's shape but break a NANP rule (CONTRACT §1).
var ruleDetails = map[string]string{
	"N11 area code": "NPA 211 is an N11 code, which is not a geographic area code",
	"911 area code": "NPA 911 is an N11 code, which is not a geographic area code",
	"N9X area code": "NPA 290 is an N9X code, reserved for expanding the numbering plan, not a geographic area code",
	"911 exchange":  "NXX 911 is an N11 code, which is reserved for service codes such as 411 and 911 and never assigned as an exchange code",
}

func TestRESTErrors(t *testing.T) {
	s := newServer(t)
	vac := diptest.Vacant(t, s.h.tables.DB())
	for _, path := range lookupPaths {
		cases := []errCase{
			{"invalid number", "POST", path, jsonKey, `{"phone_number":"123"}`, 400, CodeInvalidPhoneNumber},
			{"N11 area code", "POST", path, jsonKey, `{"phone_number":"12115550123"}`, 400, CodeInvalidPhoneNumber},
			{"911 area code", "POST", path, jsonKey, `{"phone_number":"19115550123"}`, 400, CodeInvalidPhoneNumber},
			{"N9X area code", "POST", path, jsonKey, `{"phone_number":"12905550123"}`, 400, CodeInvalidPhoneNumber},
			{"911 exchange", "POST", path, jsonKey, `{"phone_number":"+1 202 911 0123"}`, 400, CodeInvalidPhoneNumber},
			{"10 digits with a leading 1", "POST", path, jsonKey, `{"phone_number":"1202555012"}`, 400, CodeInvalidPhoneNumber},
			{"empty number", "POST", path, jsonKey, `{"phone_number":""}`, 400, CodeInvalidPhoneNumber},
			{"letters", "POST", path, jsonKey, `{"phone_number":"1202555O123"}`, 400, CodeInvalidPhoneNumber},
			{"vacant code", "POST", path, jsonKey, `{"phone_number":"` + vac + `"}`, 404, CodeNumberNotFound},
			{"not JSON", "POST", path, jsonKey, `{"phone_number":`, 400, CodeInvalidRequest},
			{"empty body", "POST", path, jsonKey, ``, 400, CodeInvalidRequest},
			{"array", "POST", path, jsonKey, `[{"phone_number":"12025550123"}]`, 400, CodeInvalidRequest},
			{"string", "POST", path, jsonKey, `"12025550123"`, 400, CodeInvalidRequest},
			{"null", "POST", path, jsonKey, `null`, 400, CodeInvalidRequest},
			{"no number", "POST", path, jsonKey, `{}`, 400, CodeInvalidRequest},
			{"null number", "POST", path, jsonKey, `{"phone_number":null}`, 400, CodeInvalidRequest},
			{"number as number", "POST", path, jsonKey, `{"phone_number":12025550123}`, 400, CodeInvalidRequest},
			{"number as array", "POST", path, jsonKey, `{"phone_number":["12025550123"]}`, 400, CodeInvalidRequest},
			{"trailing data", "POST", path, jsonKey, `{"phone_number":"12025550123"} {}`, 400, CodeInvalidRequest},
			{"too large", "POST", path, jsonKey, big, 413, CodeInvalidRequest},
			{"text/plain", "POST", path, []string{"Content-Type", "text/plain", "Authorization", "Bearer " + testKey}, `{"phone_number":"12025550123"}`, 415, CodeInvalidRequest},
			{"form", "POST", path, []string{"Content-Type", "application/x-www-form-urlencoded", "Authorization", "Bearer " + testKey}, `phone_number=12025550123`, 415, CodeInvalidRequest},
			{"no content type", "POST", path, []string{"Authorization", "Bearer " + testKey}, `{"phone_number":"12025550123"}`, 415, CodeInvalidRequest},
			{"latin1", "POST", path, []string{"Content-Type", "application/json; charset=iso-8859-1", "Authorization", "Bearer " + testKey}, `{"phone_number":"12025550123"}`, 415, CodeInvalidRequest},
			{"no key", "POST", path, []string{"Content-Type", "application/json"}, `{"phone_number":"12025550123"}`, 401, CodeMissingAPIKey},
			{"basic auth", "POST", path, []string{"Content-Type", "application/json", "Authorization", "Basic dXNlcjpwYXNz"}, `{"phone_number":"12025550123"}`, 401, CodeMissingAPIKey},
			{"empty bearer", "POST", path, []string{"Content-Type", "application/json", "Authorization", "Bearer   "}, `{"phone_number":"12025550123"}`, 401, CodeMissingAPIKey},
			{"unknown key", "POST", path, []string{"Content-Type", "application/json", "Authorization", "Bearer lnp_nope"}, `{"phone_number":"12025550123"}`, 401, CodeInvalidAPIKey},
			{"GET", "GET", path, jsonKey, ``, 405, CodeMethodNotAllowed},
			{"PUT", "PUT", path, jsonKey, `{"phone_number":"12025550123"}`, 405, CodeMethodNotAllowed},
			{"DELETE", "DELETE", path, nil, ``, 405, CodeMethodNotAllowed},
		}
		if path == "/api/v1/lrn" {
			cases = append(cases,
				errCase{"flag as string", "POST", path, jsonKey, `{"phone_number":"12025550123","include_enhanced_lrn":"true"}`, 400, CodeInvalidRequest},
				errCase{"flag as number", "POST", path, jsonKey, `{"phone_number":"12025550123","messaging_lookup":1}`, 400, CodeInvalidRequest},
			)
		}
		for _, c := range cases {
			t.Run(path+"/"+c.name, func(t *testing.T) {
				r := c.check(t, s)
				switch c.status {
				case 405:
					assert.Equal(t, "POST", r.Header.Get("Allow"))
					assert.Empty(t, r.Header.Get("X-RateLimit-Limit"), "405 precedes authentication")
				case 401:
					assert.NotEmpty(t, r.Header.Get("WWW-Authenticate"))
					assert.Empty(t, r.Header.Get("X-RateLimit-Limit"), "no key, no rate limit")
				default:
					assert.NotEmpty(t, r.Header.Get("X-RateLimit-Limit"), "authenticated responses carry the rate limit")
					assert.NotEmpty(t, r.Header.Get("X-RateLimit-Remaining"))
					assert.NotEmpty(t, r.Header.Get("X-RateLimit-Reset"))
				}
				if c.code == CodeInvalidPhoneNumber {
					m := r.json(t)
					assert.Equal(t, "Invalid phone number format", m["error"])
					want, ok := ruleDetails[c.name]
					if !ok {
						want = "Phone number must be 11 digits starting with 1"
					}
					assert.Equal(t, want, m["details"])
				}
			})
		}
	}
	t.Run("wrong type names the field", func(t *testing.T) {
		m := errCase{"", "POST", "/api/v1/lrn", jsonKey, `{"phone_number":"12025550123","include_enhanced_lrn":"yes"}`, 400, CodeInvalidRequest}.check(t, s).json(t)
		assert.Contains(t, m["details"], "include_enhanced_lrn must be a boolean")
	})
	t.Run("too large without Content-Length", func(t *testing.T) {
		// A reader of unknown length: the client sends the body chunked.
		req, err := http.NewRequest(http.MethodPost, s.URL+"/api/v1/lrn", struct{ *strings.Reader }{strings.NewReader(big)})
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+testKey)
		res, err := s.Client().Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		assert.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode)
	})
	for _, c := range []errCase{
		{"no such path", "POST", "/api/v1/nope", jsonKey, `{}`, 404, CodeNotFound},
		{"root", "GET", "/", nil, ``, 404, CodeNotFound},
		{"trailing slash", "POST", "/api/v1/lrn/", jsonKey, `{"phone_number":"12025550123"}`, 404, CodeNotFound},
		{"unclean path", "POST", "/api/v1//lrn", jsonKey, `{"phone_number":"12025550123"}`, 404, CodeNotFound},
		{"dot path", "POST", "/api/v1/x/../lrn", jsonKey, `{"phone_number":"12025550123"}`, 404, CodeNotFound},
		{"POST status", "POST", "/api/v1/status", jsonKey, `{}`, 405, CodeMethodNotAllowed},
		{"PATCH graphql", "PATCH", "/graphql?query={__typename}", jsonKey, ``, 405, CodeMethodNotAllowed},
	} {
		t.Run(c.name, func(t *testing.T) { c.check(t, s) })
	}
}

// panicTables is a TableSource that fails like a bug.
type panicTables struct{}

func (panicTables) DB() *format.DB { panic("table source bug") }

func TestInternalError(t *testing.T) {
	s := newServer(t, func(c *Config) { c.Tables = panicTables{} })
	for _, path := range append(lookupPaths, "/graphql") {
		body := `{"phone_number":"12025550123"}`
		if path == "/graphql" {
			body = `{"query":"{ lookupCnam(phoneNumber: \"12025550123\") { cnam } }"}`
		}
		r := errCase{path, "POST", path, jsonKey, body, 500, CodeInternalError}.check(t, s)
		assert.NotContains(t, string(r.body), "table source bug", "internals never leak")
	}
	assert.Contains(t, s.logs.String(), "table source bug", "a panic is logged")
	assert.Contains(t, s.logs.String(), "panic serving request")
}

func TestUnavailable(t *testing.T) {
	closed := func() *format.DB {
		db := sampleDBCopy(t)
		require.NoError(t, db.Close())
		return db
	}()
	for name, tables := range map[string]TableSource{"no table": new(Table), "closed table": NewTable(closed)} {
		t.Run(name, func(t *testing.T) {
			s := newServer(t, func(c *Config) { c.Tables = tables })
			for _, path := range lookupPaths {
				errCase{path, "POST", path, jsonKey, `{"phone_number":"12025550123"}`, 503, CodeUnavailable}.check(t, s)
			}
			errCase{"status", "GET", "/api/v1/status", nil, ``, 503, CodeUnavailable}.check(t, s)
			if name == "no table" {
				errCase{"graphql", "POST", "/graphql", jsonKey, `{"query":"{ __typename }"}`, 503, CodeUnavailable}.check(t, s)
			} else {
				// The table went away between the request's start and its
				// lookup: the lookup fails, the request does not.
				_, g := s.gql(t, `{ lookupLrn(phoneNumber: "12025550123") { success error } }`, nil)
				assert.JSONEq(t, `{"success":false,"error":"Service unavailable"}`, string(g.Data["lookupLrn"]))
			}
		})
	}
}

func TestTableSwap(t *testing.T) {
	s := newServer(t)
	tbl := s.h.tables.(*Table)
	old := tbl.Swap(nil)
	errCase{"", "POST", "/api/v1/lrn", jsonKey, `{"phone_number":"12025550123"}`, 503, CodeUnavailable}.check(t, s)
	tbl.Swap(old)
	assert.Equal(t, http.StatusOK, s.post(t, "/api/v1/lrn", `{"phone_number":"12025550123"}`).StatusCode)
}

// accounts is a wallet per key for tests: it allows credit answered lookups.
// accounts is an Accounts with a credit of whole lookups. GraphQL resolves
// a request's fields concurrently, so it locks.
type accounts struct {
	mu     sync.Mutex
	credit int
	fail   error
	kinds  []string
	// settled counts the payments settled, and delivered those whose
	// answers were delivered.
	settled, delivered int
}

func (a *accounts) Charge(_ context.Context, _ auth.Key, kind string) (Payment, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fail != nil {
		return nil, a.fail
	}
	if a.credit == 0 {
		return nil, fmt.Errorf("wallet empty: %w", ErrInsufficientBalance)
	}
	a.credit--
	a.kinds = append(a.kinds, kind)
	return a, nil
}

// Settle implements Payment: a payment not delivered gives its lookup back.
func (a *accounts) Settle(delivered bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.settled++
	if delivered {
		a.delivered++
	} else {
		a.credit++
	}
}

func TestInsufficientBalance(t *testing.T) {
	acct := &accounts{credit: 2}
	s := newServer(t, func(c *Config) { c.Accounts = acct })
	assert.Equal(t, 200, s.post(t, "/api/v1/lrn", `{"phone_number":"12025550123"}`).StatusCode)
	assert.Equal(t, 400, s.post(t, "/api/v1/lrn", `{"phone_number":"1"}`).StatusCode, "an unanswered lookup is not charged")
	assert.Equal(t, 200, s.post(t, "/api/v1/cnam", `{"phone_number":"12025550123"}`).StatusCode)
	for _, path := range lookupPaths {
		errCase{path, "POST", path, jsonKey, `{"phone_number":"12025550123"}`, 402, CodeInsufficientBalance}.check(t, s)
	}
	assert.Equal(t, []string{"lrn", "cnam"}, acct.kinds)
	_, g := s.gql(t, `{ lookupLrn(phoneNumber: "12025550123") { lrn success error } }`, nil)
	assert.JSONEq(t, `{"lrn":null,"success":false,"error":"Insufficient balance"}`, string(g.Data["lookupLrn"]))

	acct.fail = errors.New("wallet store down")
	r := errCase{"", "POST", "/api/v1/lrn", jsonKey, `{"phone_number":"12025550123"}`, 503, CodeStorageUnavailable}.check(t, s)
	assert.NotContains(t, string(r.body), "wallet store down")
	assert.Contains(t, s.logs.String(), "wallet store down")
}

func TestStatus(t *testing.T) {
	s := newServer(t)
	r := s.do(t, http.MethodGet, "/api/v1/status", "")
	require.Equal(t, http.StatusOK, r.StatusCode, "no key needed")
	var got statusBody
	require.NoError(t, json.Unmarshal(r.body, &got))
	info := s.h.tables.DB().Info()
	assert.Equal(t, "ok", got.Status)
	assert.Equal(t, info.Version, got.Table.Version)
	assert.Equal(t, info.Counts, got.Table.Counts)
	assert.Equal(t, "2026-11-01T00:00:00+00:00", got.Table.BuiltAt.String())
	assert.NotContains(t, string(r.body), info.Path, "the file's path is not the client's business")
	assert.Equal(t, http.StatusOK, s.do(t, http.MethodHead, "/api/v1/status", "").StatusCode)
}

func TestOpenAPIServed(t *testing.T) {
	s := newServer(t)
	r := s.do(t, http.MethodGet, "/openapi.json", "")
	require.Equal(t, http.StatusOK, r.StatusCode)
	assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
	assert.Equal(t, OpenAPI(), r.body)
}

func TestMetrics(t *testing.T) {
	s := newServer(t)
	s.post(t, "/api/v1/lrn", `{"phone_number":"12025550123"}`)
	s.post(t, "/api/v1/lrn", `{"phone_number":"1"}`)
	s.post(t, "/api/v1/lrn", `{"phone_number":"12025550123"}`) // a series seen before
	s.gql(t, `{ lookupCnam(phoneNumber: "12025550123") { cnam } }`, nil)
	s.do(t, http.MethodGet, "/no/such/path/"+strings.Repeat("x", 10), "")
	r := s.do(t, http.MethodGet, "/metrics", "")
	require.Equal(t, http.StatusOK, r.StatusCode)
	body := string(r.body)
	for _, want := range []string{
		`lnpdb_http_requests_total{code="200",path="/api/v1/lrn"} 2`,
		`lnpdb_http_requests_total{code="400",path="/api/v1/lrn"} 1`,
		`lnpdb_http_requests_total{code="200",path="/graphql"} 1`,
		`lnpdb_http_requests_total{code="404",path="other"} 1`,
		`lnpdb_http_request_duration_seconds_count{path="/api/v1/lrn"} 3`,
		`lnpdb_lookups_total{result="ok",type="lrn"} 2`,
		`lnpdb_lookups_total{result="invalid_number",type="lrn"} 1`,
		`lnpdb_lookups_total{result="ok",type="cnam"} 1`,
		`go_goroutines`,
	} {
		assert.Contains(t, body, want)
	}
}

func TestAccessLog(t *testing.T) {
	s := newServer(t)
	s.post(t, "/api/v1/lrn", `{"phone_number":"12025550123"}`)
	var entry map[string]any
	line, _, _ := strings.Cut(s.logs.String(), "\n")
	require.NoError(t, json.Unmarshal([]byte(line), &entry))
	assert.Equal(t, "INFO", entry["level"])
	assert.Equal(t, "request", entry["msg"])
	ts, err := time.Parse(time.RFC3339Nano, fmt.Sprint(entry["time"]))
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), ts, time.Minute)
	assert.Equal(t, "POST", entry["method"])
	assert.Equal(t, "/api/v1/lrn", entry["path"])
	assert.EqualValues(t, 200, entry["status"])
	assert.Contains(t, entry, "duration")
	assert.Equal(t, auth.HashKey(testKey).ID(), entry["key"])
	assert.Len(t, entry["key"], 8)
	assert.NotContains(t, s.logs.String(), testKey, "the key itself is never logged")
}
