package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/diptest"
)

type bulkBody struct {
	Results []json.RawMessage `json:"results"`
}

// TestBulkIsSingleLookups: every result of a bulk request is, byte for
// byte, the body POST /api/v1/lrn answers for that number, in input order.
func TestBulkIsSingleLookups(t *testing.T) {
	s := newServer(t, unlimited)
	numbers := append(sampleNumbers(t), diptest.Vacant(t, s.h.tables.DB()), "123", "", "(202) 555-0124", "12115550123", "tel:+12025550123;npdi")
	for _, flags := range [][2]bool{{false, false}, {true, false}, {true, true}} {
		b, _ := json.Marshal(map[string]any{"phone_numbers": numbers, "include_enhanced_lrn": flags[0], "messaging_lookup": flags[1]})
		r := s.post(t, "/api/v1/lrn/bulk", string(b))
		require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
		assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
		var got bulkBody
		require.NoError(t, json.Unmarshal(r.body, &got))
		require.Len(t, got.Results, len(numbers))
		for i, n := range numbers {
			one, _ := json.Marshal(map[string]any{"phone_number": n, "include_enhanced_lrn": flags[0], "messaging_lookup": flags[1]})
			want := s.post(t, "/api/v1/lrn", string(one))
			assert.Equal(t, strings.TrimSpace(string(want.body)), string(got.Results[i]), "%q %v", n, flags)
		}
	}
}

func TestBulkCostsPerNumber(t *testing.T) {
	s := newServer(t)
	r := s.post(t, "/api/v1/lrn/bulk", `{"phone_numbers":["12025550123","12025550124","x","12025550125"]}`)
	require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
	assert.Equal(t, "196", r.Header.Get("X-RateLimit-Remaining"), "4 numbers cost 4, the invalid one too")

	limited := []string{"Content-Type", "application/json", "Authorization", "Bearer " + limitedKey}
	r = s.do(t, http.MethodPost, "/api/v1/lrn/bulk", `{"phone_numbers":["12025550123","12025550124","12025550125","12025550126"]}`, limited...)
	checkErrorBody(t, r, http.StatusUnprocessableEntity, CodeBulkExceedsRateLimit)
	assert.Equal(t, "2", r.Header.Get("X-RateLimit-Remaining"), "more than the whole limit is a bad request: it counts one")
	r = s.do(t, http.MethodPost, "/api/v1/lrn/bulk", `{"phone_numbers":["12025550123","12025550124","12025550125"]}`, limited...)
	checkErrorBody(t, r, http.StatusTooManyRequests, CodeRateLimitExceeded)
	assert.Equal(t, "2", r.Header.Get("X-RateLimit-Remaining"), "a request over what is left counts nothing")
	r = s.do(t, http.MethodPost, "/api/v1/lrn/bulk", `{"phone_numbers":["12025550123","12025550124"]}`, limited...)
	require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
	assert.Equal(t, "0", r.Header.Get("X-RateLimit-Remaining"))
}

func TestBulkErrors(t *testing.T) {
	s := newServer(t, unlimited)
	many := `{"phone_numbers":[` + strings.Repeat(`"12025550123",`, MaxBulkNumbers) + `"12025550123"]}`
	for _, c := range []errCase{
		{"no numbers", "POST", "/api/v1/lrn/bulk", jsonKey, `{"include_enhanced_lrn":true}`, 400, CodeInvalidRequest},
		{"null numbers", "POST", "/api/v1/lrn/bulk", jsonKey, `{"phone_numbers":null}`, 400, CodeInvalidRequest},
		{"empty", "POST", "/api/v1/lrn/bulk", jsonKey, `{"phone_numbers":[]}`, 400, CodeInvalidRequest},
		{"too many", "POST", "/api/v1/lrn/bulk", jsonKey, many, 400, CodeInvalidRequest},
		{"not an array", "POST", "/api/v1/lrn/bulk", jsonKey, `{"phone_numbers":"12025550123"}`, 400, CodeInvalidRequest},
		{"a number", "POST", "/api/v1/lrn/bulk", jsonKey, `{"phone_numbers":["12025550123",12025550124]}`, 400, CodeInvalidRequest},
		{"a null", "POST", "/api/v1/lrn/bulk", jsonKey, `{"phone_numbers":["12025550123",null]}`, 400, CodeInvalidRequest},
		{"flag not a boolean", "POST", "/api/v1/lrn/bulk", jsonKey, `{"phone_numbers":["12025550123"],"include_enhanced_lrn":"yes"}`, 400, CodeInvalidRequest},
		{"not JSON", "POST", "/api/v1/lrn/bulk", jsonKey, `{`, 400, CodeInvalidRequest},
		{"no key", "POST", "/api/v1/lrn/bulk", []string{"Content-Type", "application/json"}, `{"phone_numbers":["12025550123"]}`, 401, CodeMissingAPIKey},
		{"GET", "GET", "/api/v1/lrn/bulk", jsonKey, ``, 405, CodeMethodNotAllowed},
	} {
		t.Run(c.name, func(t *testing.T) { c.check(t, s) })
	}
	r := s.post(t, "/api/v1/lrn/bulk", `{"phone_numbers":[`+strings.Repeat(`"12025550123",`, MaxBulkNumbers-1)+`"12025550123"]}`)
	require.Equal(t, http.StatusOK, r.StatusCode, "exactly the most is fine")
}

// TestGraphQLBulkAgrees: lookupLrnBulk answers what lookupLrn answers for
// each number.
func TestGraphQLBulkAgrees(t *testing.T) {
	s := newServer(t, unlimited)
	numbers := append(sampleNumbers(t)[:50], diptest.Vacant(t, s.h.tables.DB()), "123", "(202) 555-0124")
	const fields = `phoneNumber lrn lrn_activated_at carrier success error enhanced_lrn_data { carrier city ocn } messaging { provider enabled }`
	_, g := s.gql(t, `query($ns: [String!]!) { lookupLrnBulk(phoneNumbers: $ns, includeEnhancedLrn: true, includeMessaging: true) { `+fields+` } }`, map[string]any{"ns": numbers})
	require.Empty(t, g.Errors)
	var got []json.RawMessage
	require.NoError(t, json.Unmarshal(g.Data["lookupLrnBulk"], &got))
	require.Len(t, got, len(numbers))
	for i, n := range numbers {
		_, one := s.gql(t, `query($n: String!) { lookupLrn(phoneNumber: $n, includeEnhancedLrn: true, includeMessaging: true) { `+fields+` } }`, map[string]any{"n": n})
		require.Empty(t, one.Errors)
		assert.JSONEq(t, string(one.Data["lookupLrn"]), string(got[i]), n)
	}

	var q strings.Builder
	q.WriteString(`{ a: lookupLrnBulk(phoneNumbers: [`)
	for i := range MaxBulkNumbers + 1 {
		fmt.Fprintf(&q, `"1202555%04d",`, i)
	}
	q.WriteString(`]) { lrn } }`)
	r := s.post(t, "/graphql", mustJSON(t, map[string]any{"query": q.String()}))
	require.Equal(t, http.StatusOK, r.StatusCode)
	assert.Contains(t, string(r.body), "too many numbers")
	_, g = s.gql(t, `{ lookupLrnBulk(phoneNumbers: []) { lrn } }`, nil)
	require.Len(t, g.Errors, 1)
	assert.Contains(t, g.Errors[0].Message, "at least one")
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
