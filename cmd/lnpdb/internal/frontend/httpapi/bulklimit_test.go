package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bulkOf returns a bulk body of n copies of one valid number.
func bulkOf(n int) string {
	nums := make([]string, n)
	for i := range nums {
		nums[i] = `"12025550123"`
	}
	return `{"phone_numbers":[` + strings.Join(nums, ",") + `]}`
}

// TestBulkOverWholeLimitIsRefused: a bulk request of more numbers than the
// key may look up in a whole window can never succeed; it is refused as
// such (422, no Retry-After, the limit and the size named), not told to
// wait, and a request within the limit still goes through afterwards.
func TestBulkOverWholeLimitIsRefused(t *testing.T) {
	s := newServer(t)
	r := s.post(t, "/api/v1/lrn/bulk", bulkOf(201)) // the default key allows 200
	require.Equal(t, http.StatusUnprocessableEntity, r.StatusCode, "%s", r.body)
	assert.Empty(t, r.Header.Get("Retry-After"))
	m := r.json(t)
	assert.Equal(t, CodeBulkExceedsRateLimit, m["code"])
	assert.Contains(t, m["details"], "201 lookups")
	assert.Contains(t, m["details"], "200 lookups per 60 s")
	assert.ElementsMatch(t, []string{"error", "code", "details"}, keys(m))
	// It counted one, as any refused request does; the whole limit less
	// that one is still there.
	assert.Equal(t, "199", r.Header.Get("X-RateLimit-Remaining"))
	r = s.post(t, "/api/v1/lrn/bulk", bulkOf(199))
	require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)

	// The limited key (3 a window): 4 numbers are refused as such.
	limited := []string{"Content-Type", "application/json", "Authorization", "Bearer " + limitedKey}
	r = s.do(t, http.MethodPost, "/api/v1/lrn/bulk", bulkOf(4), limited...)
	require.Equal(t, http.StatusUnprocessableEntity, r.StatusCode, "%s", r.body)
	assert.Contains(t, r.json(t)["details"], "3 lookups per 60 s")
	// 3 do not fit in what is left (2) and are told to wait, in lookups.
	r = s.do(t, http.MethodPost, "/api/v1/lrn/bulk", bulkOf(3), limited...)
	require.Equal(t, http.StatusTooManyRequests, r.StatusCode, "%s", r.body)
	assert.NotEmpty(t, r.Header.Get("Retry-After"))
	d := r.json(t)["details"].(string)
	assert.Contains(t, d, "3 lookups per window")
	assert.NotContains(t, d, "requests")
}

// TestGraphQLBulkOverWholeLimitIsRefused: the same for lookupLrnBulk, as a
// GraphQL error whose extensions carry the code, the limit and the size.
func TestGraphQLBulkOverWholeLimitIsRefused(t *testing.T) {
	s := newServer(t)
	nums := make([]string, 250)
	for i := range nums {
		nums[i] = "12025550123"
	}
	r, _ := s.gql(t, `query($n: [String!]!) { lookupLrnBulk(phoneNumbers: $n) { lrn } }`, map[string]any{"n": nums})
	require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
	assert.Empty(t, r.Header.Get("Retry-After"))
	var g struct {
		Data   any `json:"data"`
		Errors []struct {
			Message    string         `json:"message"`
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	require.NoError(t, json.Unmarshal(r.body, &g), "%s", r.body)
	require.Len(t, g.Errors, 1, "%s", r.body)
	assert.Nil(t, g.Data)
	e := g.Errors[0]
	assert.Equal(t, CodeBulkExceedsRateLimit, e.Extensions["code"])
	assert.EqualValues(t, 200, e.Extensions["limit"])
	assert.EqualValues(t, 250, e.Extensions["lookups"])
	assert.Contains(t, e.Message, "250 lookups")
	assert.Contains(t, e.Extensions["details"], "200 lookups per 60 s")

	// In the GraphQL-over-HTTP media type, a request that cannot run is a
	// 400.
	b, _ := json.Marshal(map[string]any{"query": `query($n: [String!]!) { lookupLrnBulk(phoneNumbers: $n) { lrn } }`, "variables": map[string]any{"n": nums}})
	r = s.do(t, http.MethodPost, "/graphql", string(b), "Content-Type", "application/json",
		"Accept", "application/graphql-response+json", "Authorization", "Bearer "+testKey)
	require.Equal(t, http.StatusBadRequest, r.StatusCode, "%s", r.body)
	assert.Contains(t, string(r.body), CodeBulkExceedsRateLimit)
	assert.Equal(t, strconv.Itoa(198), r.Header.Get("X-RateLimit-Remaining"))
}
