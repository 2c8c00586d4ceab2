package httpapi

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDecodeFast checks which bodies the fast path takes (the usual ones)
// and which it leaves to encoding/json.
func TestDecodeFast(t *testing.T) {
	p := func(s string) *string { return &s }
	for _, c := range []struct {
		body string
		ok   bool
		want lrnRequest
	}{
		{`{"phone_number":"12025550123"}`, true, lrnRequest{PhoneNumber: p("12025550123")}},
		{` { "phone_number" : "+1 (202) 555-0123" , "include_enhanced_lrn" : true, "messaging_lookup":false }` + "\n", true,
			lrnRequest{PhoneNumber: p("+1 (202) 555-0123"), IncludeEnhancedLRN: true}},
		{`{"messaging_lookup":true,"phone_number":"1","phone_number":"2"}`, true, lrnRequest{PhoneNumber: p("2"), MessagingLookup: true}},
		{`{}`, true, lrnRequest{}},
		{`{"phone_number":""}`, true, lrnRequest{PhoneNumber: p("")}},
		{`{"phone_number":"12025550123","extra":1}`, false, lrnRequest{}},
		{`{"Phone_Number":"12025550123"}`, false, lrnRequest{}},
		{`{"phone_number":"1202555\u0030123"}`, false, lrnRequest{}},
		{`{"phone_number":"1202555012é"}`, false, lrnRequest{}},
		{`{"phone_number":null}`, false, lrnRequest{}},
		{`{"phone_number":12025550123}`, false, lrnRequest{}},
		{`{"phone_number":"12025550123","include_enhanced_lrn":"true"}`, false, lrnRequest{}},
		{`{"phone_number":"12025550123",}`, false, lrnRequest{}},
		{`{"phone_number":"12025550123"} {}`, false, lrnRequest{}},
		{`{"phone_number":"12025550123"`, false, lrnRequest{}},
		{`{"include_enhanced_lrn":truex}`, false, lrnRequest{}},
		{"\ufeff{}", false, lrnRequest{}},
		{``, false, lrnRequest{}},
	} {
		var got lrnRequest
		ok := decodeFast([]byte(c.body), &got)
		require.Equal(t, c.ok, ok, "%s", c.body)
		if ok {
			assert.Equal(t, c.want, got, "%s", c.body)
		}
	}
	var pr phoneRequest
	assert.True(t, decodeFast([]byte(`{"phone_number":"12025550123"}`), &pr))
	assert.Equal(t, "12025550123", *pr.PhoneNumber)
	assert.False(t, decodeFast([]byte(`{"phone_number":"12025550123","include_enhanced_lrn":true}`), &pr),
		"a field of another request is unknown here: encoding/json ignores it")
	assert.False(t, decodeFast([]byte(`{}`), &graphqlRequest{}))
}

// FuzzDecodeFast holds the fast path to encoding/json: whatever it accepts,
// encoding/json accepts too and decodes to the same request.
func FuzzDecodeFast(f *testing.F) {
	for _, s := range []string{
		`{"phone_number":"12025550123","include_enhanced_lrn":true,"messaging_lookup":true}`,
		`{"phone_number":"1202555\u0030123"}`,
		`{"PHONE_NUMBER":"12025550123"}`,
		`{"phone_number":"12025550123","phone_number":null}`,
		"{\"phone_number\":\"\xff\"}",
		` {"include_enhanced_lrn" :false} `,
		`{"phone_number":"1"}x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		agreesWithJSON(t, body, func(b []byte, r *lrnRequest) bool { return decodeFast(b, r) })
		agreesWithJSON(t, body, func(b []byte, r *phoneRequest) bool { return decodeFast(b, r) })
	})
}

// agreesWithJSON holds a fast decoder to encoding/json: when fast accepts
// body, encoding/json accepts it too and decodes it to the same value.
func agreesWithJSON[T any](t *testing.T, body []byte, fast func([]byte, *T) bool) {
	t.Helper()
	var got, want T
	if fast(body, &got) {
		require.NoError(t, json.Unmarshal(body, &want), "the fast path took a body encoding/json refuses: %q", body)
		require.Equal(t, want, got, "%q", body)
	}
}
