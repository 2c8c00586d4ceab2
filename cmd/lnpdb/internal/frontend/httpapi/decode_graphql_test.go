package httpapi

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeGraphQLFast(t *testing.T) {
	for body, fast := range map[string]bool{
		`{"query":"query($n: String!) { lookupLrn(phoneNumber: $n) { lrn } }","variables":{"n":"12025550123","e":true,"m":null}}`: true,
		`{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"abc"}},"variables":{"n":"1"}}`:                                true,
		` {"query":"{ __typename }","operationName":null,"variables":null} `:                                                      true,
		`{"query":"{ lookupLrn(phoneNumber: \"1\") { lrn } }"}`:                                                                   false, // escapes
		`{"variables":{"n":1}}`:                                                 false, // a number
		`{"extensions":{"persistedQuery":{"version":10}}}`:                      false,
		`{"extensions":{"persistedQuery":{"version":1}}}`:                       true,
		`{"extensions":{"persistedQuery":{"sha256Hash":""}}}`:                   true,
		`{"extensions":{"persistedQuery":{"version":1,"sha256Hash":""}}}`:       true,
		`{"extensions":{"persistedQuery":{"sha256Hash":"a","sha256Hash":"b"}}}`: false,
		`{"extensions":{}}`:                                       true,
		`{"extensions":{"other":{}}}`:                             false,
		`{"Query":"{ __typename }"}`:                              false, // encoding/json folds case
		`{"query":"{ __typename }"} x`:                            false,
		`{"variables":{"n":"1"},"variables":{"m":"2"}}`:           true,
		`{"query":"{ __typename }","extensions":{},"query":null}`: false,
	} {
		var got, want graphqlRequest
		require.Equal(t, fast, decodeGraphQLFast([]byte(body), &got), body)
		if fast {
			require.NoError(t, json.Unmarshal([]byte(body), &want))
			got.asJSON()
			assert.Equal(t, want, got, body)
		} else {
			assert.Equal(t, graphqlRequest{}, got, "reset for encoding/json: %s", body)
		}
	}
}

// asJSON makes r as encoding/json decodes the same body: the fast path
// keeps a persisted query's extensions unparsed, and the variables in a
// list.
func (r *graphqlRequest) asJSON() {
	r.Extensions, r.apq = r.extensions(), ""
	r.Variables, r.vars, r.varsSet = r.variables(), nil, false
}

func FuzzDecodeGraphQLFast(f *testing.F) {
	for _, s := range []string{
		`{"query":"query($n: String!) { lookupLrn(phoneNumber: $n) { lrn } }","variables":{"n":"12025550123"}}`,
		`{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"abc"}},"variables":{"n":"1","b":false,"z":null}}`,
		`{"operationName":null,"variables":null}`,
		`{"variables":{"n":"1"},"variables":{"n":"2","m":true}}`,
		`{"extensions":{"persistedQuery":{"version":1.0}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		agreesWithJSON(t, body, func(b []byte, r *graphqlRequest) bool {
			if !decodeGraphQLFast(b, r) {
				return false
			}
			requireVariablesRead(t, r)
			r.asJSON()
			return true
		})
	})
}

// bulkNumbers returns what a bulk request's numbers decoded to, either
// way, and whether any was null.
func bulkNumbers(r *bulkRequest) (nums []string, present, null bool) {
	if r.fastNumbers {
		return r.numbers, true, false
	}
	if r.PhoneNumbers == nil {
		return nil, false, false
	}
	for _, p := range *r.PhoneNumbers {
		if p == nil {
			return nil, true, true
		}
		nums = append(nums, *p)
	}
	return nums, true, false
}

func FuzzDecodeBulkFast(f *testing.F) {
	for _, s := range []string{
		`{"phone_numbers":["12025550123","+1 202 555 0124"],"include_enhanced_lrn":true}`,
		`{"phone_numbers":[],"messaging_lookup":false}`,
		`{"phone_numbers":["1"],"phone_numbers":["2","3"]}`,
		`{"phone_numbers":["1",null]}`,
		`{"phone_numbers":["\u0031"]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var fast, slow bulkRequest
		if !decodeBulkFast(body, &fast) {
			return
		}
		require.NoError(t, json.Unmarshal(body, &slow), "the fast path took a body encoding/json refuses: %q", body)
		fn, fp, _ := bulkNumbers(&fast)
		sn, sp, snull := bulkNumbers(&slow)
		require.False(t, snull, "%q", body)
		require.Equal(t, sp, fp, "%q", body)
		require.Equal(t, len(sn), len(fn), "%q", body)
		for i := range sn {
			require.Equal(t, sn[i], fn[i], "%q", body)
		}
		require.Equal(t, slow.IncludeEnhancedLRN, fast.IncludeEnhancedLRN, "%q", body)
		require.Equal(t, slow.MessagingLookup, fast.MessagingLookup, "%q", body)
	})
}

// requireVariablesRead: variable reads each of the request's variables as
// its map holds it, and nothing else.
func requireVariablesRead(t *testing.T, r *graphqlRequest) {
	t.Helper()
	m := r.variables()
	for name, want := range m {
		v, has := r.variable(name)
		require.True(t, has, name)
		switch want := want.(type) {
		case nil:
			require.Equal(t, varNull, v.kind, name)
		case string:
			require.Equal(t, gqlVar{name: name, kind: varString, s: want}, v)
		case bool:
			require.Equal(t, gqlVar{name: name, kind: varBool, b: want}, v)
		default:
			require.Equal(t, varOther, v.kind, name)
		}
	}
	_, has := r.variable("\x00 not a variable")
	require.False(t, has)
}

// TestGraphQLVariableRead: variable reads what encoding/json decodes, for
// requests the fast decoder leaves to it too.
func TestGraphQLVariableRead(t *testing.T) {
	for _, body := range []string{
		`{"variables":{"n":"1","b":true,"z":null,"n":"2"}}`,
		`{"variables":{"n":1,"o":{},"a":[],"s":"\u0031"}}`,
		`{"variables":{"n":"1"},"variables":null,"variables":{"m":"2"}}`,
	} {
		var r graphqlRequest
		if !decodeGraphQLFast([]byte(body), &r) {
			require.NoError(t, json.Unmarshal([]byte(body), &r))
		}
		requireVariablesRead(t, &r)
		var want graphqlRequest
		require.NoError(t, json.Unmarshal([]byte(body), &want))
		assert.Equal(t, want.Variables, r.variables(), body)
	}
}
