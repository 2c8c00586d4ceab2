package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/diptest"
	"github.com/lnpdb/lnpdb/lrn"
)

// seedQuery is the LRN operation as the hosted service's description shows
// it, variables included.
const seedQuery = `query LookupLrn($number: String!, $includeEnhanced: Boolean, $includeMessaging: Boolean) {
  lookupLrn(phoneNumber: $number, includeEnhancedLrn: $includeEnhanced, includeMessaging: $includeMessaging) {
    lrn
    lrn_activated_at
    enhanced_lrn_data { carrier carrier_type city zip_code county timezone state rate_center lata ocn }
    messaging { provider enabled country country_code reference_id }
  }
}`

func TestGraphQLLRN(t *testing.T) {
	s := newServer(t)
	t.Run("seed operation", func(t *testing.T) {
		r, g := s.gql(t, seedQuery, map[string]any{"number": "12025550123", "includeEnhanced": true, "includeMessaging": true})
		require.Equal(t, http.StatusOK, r.StatusCode)
		require.Empty(t, g.Errors)
		rest := s.post(t, "/api/v1/lrn", `{"phone_number":"12025550123","include_enhanced_lrn":true,"messaging_lookup":true}`).json(t)
		var got map[string]any
		require.NoError(t, json.Unmarshal(g.Data["lookupLrn"], &got))
		delete(rest, "phone_number")
		assert.Equal(t, rest, got)
	})
	t.Run("flags absent", func(t *testing.T) {
		_, g := s.gql(t, seedQuery, map[string]any{"number": "12025550123"})
		require.Empty(t, g.Errors)
		var got map[string]any
		require.NoError(t, json.Unmarshal(g.Data["lookupLrn"], &got))
		assert.Nil(t, got["enhanced_lrn_data"])
		assert.Nil(t, got["messaging"])
	})
	t.Run("simple form", func(t *testing.T) {
		_, g := s.gql(t, `{ lookupLrn(phoneNumber: "+1 202 555 0123") { phoneNumber lrn carrier success error } }`, nil)
		require.Empty(t, g.Errors)
		rest := s.post(t, "/api/v1/lrn", `{"phone_number":"12025550123","include_enhanced_lrn":true}`).json(t)
		want := fmt.Sprintf(`{"phoneNumber":"12025550123","lrn":%q,"carrier":%q,"success":true,"error":null}`,
			rest["lrn"], rest["enhanced_lrn_data"].(map[string]any)["carrier"])
		assert.JSONEq(t, want, string(g.Data["lookupLrn"]))
	})
	t.Run("unknown activation is null", func(t *testing.T) {
		own := find(t, s.h.tables.DB(), func(r lrn.Result, err error) bool { return err == nil && r.ActivatedAt.IsZero() })
		_, g := s.gql(t, `query($n: String!) { lookupLrn(phoneNumber: $n) { lrn lrn_activated_at } }`, map[string]any{"n": own})
		require.Empty(t, g.Errors)
		assert.Contains(t, string(g.Data["lookupLrn"]), `"lrn_activated_at":null`)
	})
}

func TestGraphQLLookupFailures(t *testing.T) {
	s := newServer(t)
	vac := diptest.Vacant(t, s.h.tables.DB())
	const mustBe11 = "Phone number must be 11 digits starting with 1"
	for _, c := range []struct{ number, phone, err, code, details string }{
		{"123", "null", "Invalid phone number format", CodeInvalidPhoneNumber, mustBe11},
		{"", "null", "Invalid phone number format", CodeInvalidPhoneNumber, mustBe11},
		{"19115550123", "null", "Invalid phone number format", CodeInvalidPhoneNumber, "NPA 911 is an N11 code, which is not a geographic area code"},
		{"12029110123", "null", "Invalid phone number format", CodeInvalidPhoneNumber, ruleDetails["911 exchange"]},
		{vac, `"` + vac + `"`, "Number not found", CodeNumberNotFound, "The number's NPA-NXX code is not assigned to any carrier"},
	} {
		q := `query($n: String!) {
			lookupLrn(phoneNumber: $n, includeEnhancedLrn: true, includeMessaging: true) { phoneNumber lrn lrn_activated_at carrier enhanced_lrn_data { carrier } messaging { provider } success error code details }
			lookupCnam(phoneNumber: $n) { phoneNumber cnam success error code details }
			lookupMessagingProvider(phoneNumber: $n) { phoneNumber messagingProvider messagingEnabled success error code details }
			lookupTrust(phoneNumber: $n) { phoneNumber trustScore trustLevel reasons success error code details }
		}`
		r, g := s.gql(t, q, map[string]any{"n": c.number})
		require.Equal(t, http.StatusOK, r.StatusCode, "a lookup's failure is not an HTTP failure")
		require.Empty(t, g.Errors, "nor a GraphQL error")
		fail := fmt.Sprintf(`"phoneNumber":%s,"success":false,"error":%q,"code":%q,"details":%q`, c.phone, c.err, c.code, c.details)
		assert.JSONEq(t, `{`+fail+`,"lrn":null,"lrn_activated_at":null,"carrier":null,"enhanced_lrn_data":null,"messaging":null}`, string(g.Data["lookupLrn"]))
		assert.JSONEq(t, `{`+fail+`,"cnam":null}`, string(g.Data["lookupCnam"]))
		assert.JSONEq(t, `{`+fail+`,"messagingProvider":null,"messagingEnabled":null}`, string(g.Data["lookupMessagingProvider"]))
		assert.JSONEq(t, `{`+fail+`,"trustScore":null,"trustLevel":null,"reasons":null}`, string(g.Data["lookupTrust"]))
		// The REST error body is the GraphQL error, code and details.
		rest := s.post(t, "/api/v1/lrn", `{"phone_number":"`+c.number+`"}`).json(t)
		assert.Equal(t, c.err, rest["error"])
		assert.Equal(t, c.code, rest["code"])
		assert.Equal(t, c.details, rest["details"])
	}
}

func TestGraphQLErrors(t *testing.T) {
	s := newServer(t)
	t.Run("malformed documents answer the errors array", func(t *testing.T) {
		for _, q := range []string{
			`{ lookupLrn(`,
			`{ lookupLrn(phoneNumber: "12025550123") { nope } }`,
			`{ lookupLrn { lrn } }`,
			`{ lookupLrn(phoneNumber: 12025550123) { lrn } }`,
			`query($n: String!) { lookupLrn(phoneNumber: $n) { lrn } }`,
			`mutation { lookupLrn(phoneNumber: "12025550123") { lrn } }`,
			`subscription { x }`,
			``,
			`query A { __typename } query B { __typename }`,
			`{ __schema { types { fields { type { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } } } } } } } } } } } } } }`,
			`{ ` + strings.Repeat("a: __typename ", maxGraphQLQueryBytes/14+1) + `}`,
		} {
			r, g := s.gql(t, q, nil)
			require.Equal(t, http.StatusOK, r.StatusCode, q)
			assert.NotEmpty(t, g.Errors, "%.60s: %s", q, r.body)
			assert.Nil(t, g.Data, "%.60s", q)
		}
	})
	t.Run("operationName picks the operation", func(t *testing.T) {
		b, _ := json.Marshal(map[string]any{"query": `query A { a: __typename } query B { b: __typename }`, "operationName": "B"})
		r := s.post(t, "/graphql", string(b))
		assert.JSONEq(t, `{"data":{"b":"Query"}}`, string(r.body))
	})
	t.Run("at most MaxGraphQLLookups lookups", func(t *testing.T) {
		var q strings.Builder
		q.WriteString("{")
		for i := range MaxGraphQLLookups + 2 {
			fmt.Fprintf(&q, ` l%d: lookupCnam(phoneNumber: "12025550123") { cnam }`, i)
		}
		q.WriteString("}")
		r, g := s.gql(t, q.String(), nil)
		require.Equal(t, http.StatusOK, r.StatusCode)
		require.Len(t, g.Errors, 2, "%s", r.body)
		assert.Contains(t, g.Errors[0].Message, "too many lookups")
		nulls := 0
		for _, v := range g.Data {
			if string(v) == "null" {
				nulls++
			}
		}
		assert.Equal(t, 2, nulls)
	})
	for _, c := range []errCase{
		{"no query", "POST", "/graphql", jsonKey, `{"variables":{}}`, 400, CodeInvalidRequest},
		{"query not a string", "POST", "/graphql", jsonKey, `{"query":{"a":1}}`, 400, CodeInvalidRequest},
		{"variables not an object", "POST", "/graphql", jsonKey, `{"query":"{ __typename }","variables":[1]}`, 400, CodeInvalidRequest},
		{"batch", "POST", "/graphql", jsonKey, `[{"query":"{ __typename }"}]`, 400, CodeInvalidRequest},
		{"not JSON", "POST", "/graphql", jsonKey, `query { __typename }`, 400, CodeInvalidRequest},
		{"application/graphql", "POST", "/graphql", []string{"Content-Type", "application/graphql", "Authorization", "Bearer " + testKey}, `{ __typename }`, 415, CodeInvalidRequest},
		{"too large", "POST", "/graphql", jsonKey, `{"query":"{ __typename }","pad":"` + strings.Repeat("x", MaxBodyBytes) + `"}`, 413, CodeInvalidRequest},
		{"no key", "POST", "/graphql", []string{"Content-Type", "application/json"}, `{"query":"{ __typename }"}`, 401, CodeMissingAPIKey},
		{"unknown key", "POST", "/graphql", []string{"Content-Type", "application/json", "Authorization", "Bearer x"}, `{"query":"{ __typename }"}`, 401, CodeInvalidAPIKey},
		{"PUT", "PUT", "/graphql", jsonKey, `{"query":"{ __typename }"}`, 405, CodeMethodNotAllowed},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.check(t, s)
			// Authentication answers exactly as REST does.
			if c.status == 401 {
				rest := s.do(t, c.method, "/api/v1/lrn", `{"phone_number":"12025550123"}`, c.hdr...)
				assert.Equal(t, rest.body, r.body)
			}
		})
	}
}

// TestRESTAndGraphQLAgree asks both interfaces the same questions about
// every number of the sample.
func TestRESTAndGraphQLAgree(t *testing.T) {
	s := newServer(t, unlimited)
	const q = `query($n: String!) {
		lrn: lookupLrn(phoneNumber: $n, includeEnhancedLrn: true, includeMessaging: true) {
			phoneNumber lrn lrn_activated_at carrier success error
			enhanced_lrn_data { carrier carrier_type city zip_code county timezone state rate_center lata ocn }
			messaging { provider enabled country country_code reference_id }
		}
		cnam: lookupCnam(phoneNumber: $n) { phoneNumber cnam success error }
		msg: lookupMessagingProvider(phoneNumber: $n) { phoneNumber messagingProvider messagingEnabled messagingCountry messagingCountryCode referenceId success error }
		trust: lookupTrust(phoneNumber: $n) { phoneNumber trustScore trustLevel spamType complaintCount firstReported lastReported reasons success error }
	}`
	numbers := append(sampleNumbers(t), diptest.Vacant(t, s.h.tables.DB()), "12115550123", "(202) 555-0124")
	for _, n := range numbers {
		_, g := s.gql(t, q, map[string]any{"n": n})
		require.Empty(t, g.Errors)
		body := `{"phone_number":"` + n + `","include_enhanced_lrn":true,"messaging_lookup":true}`

		rest := s.post(t, "/api/v1/lrn", body).json(t)
		gl := decode(t, g.Data["lrn"])
		if agreeOnFailure(t, n, rest, gl) {
			continue
		}
		assert.Equal(t, rest["phone_number"], gl["phoneNumber"], n)
		assert.Equal(t, rest["lrn"], gl["lrn"], n)
		assert.Equal(t, rest["lrn_activated_at"], gl["lrn_activated_at"], n) // absent == null
		assert.Equal(t, rest["enhanced_lrn_data"], gl["enhanced_lrn_data"], n)
		assert.Equal(t, rest["enhanced_lrn_data"].(map[string]any)["carrier"], gl["carrier"], n)
		assert.Equal(t, rest["messaging"], gl["messaging"], n)

		rest = s.post(t, "/api/v1/cnam", body).json(t)
		gl = decode(t, g.Data["cnam"])
		agreeOnFailure(t, n, rest, gl)
		assert.Equal(t, rest["cnam"], gl["cnam"], n)

		rest = s.post(t, "/api/v1/messaging", body).json(t)
		gl = decode(t, g.Data["msg"])
		agreeOnFailure(t, n, rest, gl)
		for restName, gqlName := range map[string]string{
			"messaging_provider": "messagingProvider", "messaging_enabled": "messagingEnabled", "messaging_country": "messagingCountry",
			"messaging_country_code": "messagingCountryCode", "reference_id": "referenceId",
		} {
			assert.Equal(t, rest[restName], gl[gqlName], "%s %s", n, restName)
		}

		rest = s.post(t, "/api/v1/trust", body).json(t)
		gl = decode(t, g.Data["trust"])
		agreeOnFailure(t, n, rest, gl)
		for restName, gqlName := range map[string]string{
			"trust_score": "trustScore", "trust_level": "trustLevel", "spam_type": "spamType", "complaint_count": "complaintCount",
			"first_reported": "firstReported", "last_reported": "lastReported", "reasons": "reasons",
		} {
			assert.Equal(t, rest[restName], gl[gqlName], "%s %s", n, restName)
		}
	}
}

// agreeOnFailure checks that a failed REST lookup failed the same way in
// GraphQL, and reports whether it failed.
func agreeOnFailure(t *testing.T, n string, rest, gql map[string]any) bool {
	t.Helper()
	if _, failed := rest["code"]; !failed {
		assert.Equal(t, true, gql["success"], n)
		assert.Nil(t, gql["error"], n)
		return false
	}
	assert.Equal(t, false, gql["success"], n)
	assert.Equal(t, rest["error"], gql["error"], n)
	return true
}

func decode(t *testing.T, b json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

// introspectionQuery is graphql-js's getIntrospectionQuery(), as GraphiQL
// and code generators send it.
const introspectionQuery = `
query IntrospectionQuery {
  __schema {
    queryType { name }
    mutationType { name }
    subscriptionType { name }
    types { ...FullType }
    directives { name description locations args { ...InputValue } }
  }
}
fragment FullType on __Type {
  kind name description
  fields(includeDeprecated: true) { name description args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
  inputFields { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
fragment TypeRef on __Type {
  kind name
  ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } } }
}`

type typeRef struct {
	Kind   string   `json:"kind"`
	Name   *string  `json:"name"`
	OfType *typeRef `json:"ofType"`
}

func (r *typeRef) String() string {
	switch r.Kind {
	case "NON_NULL":
		return r.OfType.String() + "!"
	case "LIST":
		return "[" + r.OfType.String() + "]"
	}
	return *r.Name
}

func TestIntrospection(t *testing.T) {
	s := newServer(t)
	r, g := s.gql(t, introspectionQuery, nil)
	require.Equal(t, http.StatusOK, r.StatusCode)
	require.Empty(t, g.Errors, "%s", r.body)
	var sch struct {
		QueryType        struct{ Name string } `json:"queryType"`
		MutationType     *struct{}             `json:"mutationType"`
		SubscriptionType *struct{}             `json:"subscriptionType"`
		Types            []struct {
			Kind   string `json:"kind"`
			Name   string `json:"name"`
			Fields []struct {
				Name string `json:"name"`
				Args []struct {
					Name string   `json:"name"`
					Type *typeRef `json:"type"`
				} `json:"args"`
				Type *typeRef `json:"type"`
			} `json:"fields"`
		} `json:"types"`
	}
	require.NoError(t, json.Unmarshal(g.Data["__schema"], &sch))
	assert.Equal(t, "Query", sch.QueryType.Name)
	assert.Nil(t, sch.MutationType, "lookups only: no mutations")
	assert.Nil(t, sch.SubscriptionType)

	// Every object type of the schema, field by field: "name: Type" and,
	// for Query, the arguments.
	got := map[string][]string{}
	for _, ty := range sch.Types {
		if ty.Kind != "OBJECT" || strings.HasPrefix(ty.Name, "__") {
			continue
		}
		for _, f := range ty.Fields {
			sig := f.Name
			if len(f.Args) > 0 {
				var args []string
				for _, a := range f.Args {
					args = append(args, a.Name+": "+a.Type.String())
				}
				sig += "(" + strings.Join(args, ", ") + ")"
			}
			got[ty.Name] = append(got[ty.Name], sig+": "+f.Type.String())
		}
		sort.Strings(got[ty.Name])
	}
	want := map[string][]string{
		"Query": {
			"lookupCnam(phoneNumber: String!): CnamResult",
			"lookupLrn(phoneNumber: String!, includeEnhancedLrn: Boolean, includeMessaging: Boolean): LrnResult",
			"lookupLrnBulk(phoneNumbers: [String!]!, includeEnhancedLrn: Boolean, includeMessaging: Boolean): [LrnResult!]",
			"lookupMessagingProvider(phoneNumber: String!): MessagingProviderResult",
			"lookupTrust(phoneNumber: String!): TrustResult",
		},
		"LrnResult": {
			"carrier: String", "code: String", "details: String", "enhanced_lrn_data: EnhancedLrnData", "error: String", "lrn: String",
			"lrn_activated_at: String", "messaging: MessagingData", "phoneNumber: String", "success: Boolean!",
		},
		"EnhancedLrnData": {
			"carrier: String!", "carrier_type: String!", "city: String!", "county: String!", "lata: String!",
			"ocn: String!", "rate_center: String!", "state: String!", "timezone: String!", "zip_code: String!",
		},
		"MessagingData": {
			"country: String!", "country_code: String!", "enabled: Boolean!", "provider: String!", "reference_id: String!",
		},
		"CnamResult": {"cnam: String", "code: String", "details: String", "error: String", "phoneNumber: String", "success: Boolean!"},
		"MessagingProviderResult": {
			"code: String", "details: String", "error: String", "messagingCountry: String", "messagingCountryCode: String", "messagingEnabled: Boolean",
			"messagingProvider: String", "phoneNumber: String", "referenceId: String", "success: Boolean!",
		},
		"TrustResult": {
			"code: String", "complaintCount: Int", "details: String", "error: String", "firstReported: String", "lastReported: String", "phoneNumber: String",
			"reasons: [String!]", "spamType: String", "success: Boolean!", "trustLevel: String", "trustScore: Int",
		},
	}
	assert.Equal(t, want, got)
}
