package httpapi

import (
	"net/http"
	"testing"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestErrorTextNotHTMLEscaped: error details read as they are written —
// "<API_KEY>", not "\u003cAPI_KEY\u003e" — in every body that carries
// them, the bulk answer's included.
func TestErrorTextNotHTMLEscaped(t *testing.T) {
	s := newServer(t)
	r := s.do(t, http.MethodPost, "/api/v1/lrn", `{"phone_number":"12025550123"}`, "Content-Type", "application/json")
	assert.Equal(t, http.StatusUnauthorized, r.StatusCode)
	assert.Contains(t, string(r.body), "Authorization: Bearer <API_KEY>")
	assert.NotContains(t, string(r.body), `\u003c`)
	w := &recorder{ResponseWriter: newDiscardRecorder()}
	writeError(w, invalidRequest("a < b & c > d"))
	assert.Contains(t, w.ResponseWriter.(*bodyRecorder).b.String(), `"a < b & c > d"`)
	assert.Equal(t, `{"error":"Invalid request","code":"INVALID_REQUEST","details":"a < b & c > d"}`,
		string(appendErrorBody(nil, invalidRequest("a < b & c > d"))))
}

// TestGraphQLMethodNotAllowedAgreesWithAllow: a PUT to /graphql is told
// what Allow says, GET and POST, not that lookups take POST alone.
func TestGraphQLMethodNotAllowedAgreesWithAllow(t *testing.T) {
	s := newServer(t)
	r := s.do(t, http.MethodPut, "/graphql", `{}`, jsonKey...)
	assert.Equal(t, http.StatusMethodNotAllowed, r.StatusCode)
	assert.Equal(t, "GET, HEAD, POST", r.Header.Get("Allow"))
	d := r.json(t)["details"].(string)
	assert.Contains(t, d, "GET")
	assert.Contains(t, d, "POST")
	// The REST lookups take POST alone, and say so.
	r = s.do(t, http.MethodPut, "/api/v1/lrn", `{}`, jsonKey...)
	assert.Equal(t, "POST", r.Header.Get("Allow"))
	assert.Equal(t, "Lookups take POST", r.json(t)["details"])
}

// TestGraphQLDoesNotAdvertiseDefer: @defer is not delivered incrementally,
// so it is not in the schema introspection shows, and a document using it
// is refused as using an unknown directive rather than answered as if the
// fragment were not deferred.
func TestGraphQLDoesNotAdvertiseDefer(t *testing.T) {
	s := newServer(t)
	r, g := s.gql(t, `{ __schema { directives { name } } }`, nil)
	require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
	assert.NotContains(t, string(g.Data["__schema"]), `"defer"`)
	assert.Contains(t, string(g.Data["__schema"]), `"skip"`)
	_, g = s.gql(t, `{ lookupLrn(phoneNumber: "12025550123") { lrn ... @defer { carrier } } }`, nil)
	require.NotEmpty(t, g.Errors)
	assert.Contains(t, g.Errors[0].Message, "defer")
	assert.Nil(t, g.Data["lookupLrn"])
}

// suspendedKeys is a key store with one suspended account's key.
type suspendedKeys struct{ *auth.KeySet }

const suspendedKey = "lnp_suspendedsuspendedsuspendedsu"

func (suspendedKeys) Suspended(tok string) bool { return tok == suspendedKey }

// TestSuspendedAccountIs403: a valid key of a suspended account is told
// so, 403 ACCOUNT_SUSPENDED, on REST and GraphQL alike; an unknown key is
// still 401.
func TestSuspendedAccountIs403(t *testing.T) {
	s := newServer(t, func(c *Config) { c.Keys = suspendedKeys{testKeys()} })
	for _, path := range []string{"/api/v1/lrn", "/api/v1/lrn/bulk", "/graphql"} {
		r := s.do(t, http.MethodPost, path, `{"phone_number":"12025550123"}`, "Content-Type", "application/json", "Authorization", "Bearer "+suspendedKey)
		checkErrorBody(t, r, http.StatusForbidden, CodeAccountSuspended)
		assert.Contains(t, r.json(t)["details"], "suspended")
		assert.Empty(t, r.Header.Get("WWW-Authenticate"), "the key is right: no challenge")
		r = s.do(t, http.MethodPost, path, `{"phone_number":"12025550123"}`, "Content-Type", "application/json", "Authorization", "Bearer lnp_unknown")
		checkErrorBody(t, r, http.StatusUnauthorized, CodeInvalidAPIKey)
	}
}
