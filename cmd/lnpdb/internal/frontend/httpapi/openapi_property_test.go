package httpapi

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"
)

// TestOpenAPIRequestBodies generates request bodies from the document's
// schemas — values of the declared types, of wrong types, null, missing
// and unknown fields, arrays of every length around the limits — and holds
// the server to what the document says of each: a body the schema admits is
// never refused as INVALID_REQUEST (a string that the schema admits as a
// phone number but is no NANP number is the lookup's own 400
// INVALID_PHONE_NUMBER, which no JSON schema can tell), and a body the
// schema forbids is refused with 400.
func TestOpenAPIRequestBodies(t *testing.T) {
	doc := openAPIDoc(t)
	s := newServer(t, unlimited)
	rng := rand.New(rand.NewPCG(1, 2))

	const perOperation = 400
	for path, item := range doc.Paths.Map() {
		op := item.Post
		if op == nil || op.RequestBody == nil || strings.HasPrefix(path, "/admin/") || accountsAdminPath(path) {
			continue
		}
		media := op.RequestBody.Value.Content.Get("application/json")
		require.NotNil(t, media, path)
		schema := media.Schema.Value
		counts := map[bool]int{}
		for range perOperation {
			body := genValue(rng, schema, 0)
			b, err := json.Marshal(body)
			require.NoError(t, err)
			valid := schema.VisitJSON(body, openapi3.EnableJSONSchema2020()) == nil
			counts[valid]++
			r := s.post(t, path, string(b))
			var e struct{ Code string }
			_ = json.Unmarshal(r.body, &e)
			if valid {
				refused := r.StatusCode == http.StatusBadRequest && e.Code != CodeInvalidPhoneNumber
				require.False(t, refused || r.StatusCode >= 500, "%s admits %s, the server refused it: %d %s", path, b, r.StatusCode, r.body)
			} else {
				require.Equal(t, http.StatusBadRequest, r.StatusCode, "%s forbids %s, the server answered %s", path, b, r.body)
			}
		}
		// Both kinds were tried, enough to mean something.
		require.Greater(t, counts[true], perOperation/10, path)
		require.Greater(t, counts[false], perOperation/10, path)
	}
}

// Values the generator draws from: strings a person sends as a number, and
// others.
var genStrings = []string{
	"12025550123", "+1 (202) 555-0124", "202.555.0125", "tel:+12025550123;npdi", "2025550123",
	"", "1", "123", "1-800-FLOWERS", "１２０２５５５０１２３", "12025550123x", strings.Repeat("1", 65), "(202) 555-0123",
	"{ __typename }", `{ lookupLrn(phoneNumber: "12025550123") { lrn } }`,
}

// genValue returns a JSON value for schema: mostly what it declares, often
// not.
func genValue(rng *rand.Rand, s *openapi3.Schema, depth int) any {
	switch rng.IntN(10) {
	case 0:
		return nil
	case 1:
		return genWrong(rng, s)
	}
	if len(s.Examples) > 0 && rng.IntN(4) == 0 {
		return s.Examples[rng.IntN(len(s.Examples))]
	}
	switch {
	case s.Type.Includes("object") || len(s.Properties) > 0:
		m := map[string]any{}
		for name, p := range s.Properties {
			if slices.Contains(s.Required, name) && rng.IntN(8) != 0 || rng.IntN(2) == 0 {
				m[name] = genValue(rng, p.Value, depth+1)
			}
		}
		if rng.IntN(5) == 0 {
			m["unknown_field"] = genWrong(rng, s)
		}
		if depth == 0 && len(s.Properties) == 0 {
			return genWrong(rng, s)
		}
		return m
	case s.Type.Includes("array"):
		n := []int{0, 1, 2, 3, 999, 1000, 1001}[rng.IntN(7)]
		a := make([]any, n)
		for i := range a {
			a[i] = genStrings[rng.IntN(5)] // valid numbers: the array's length is what is tested
		}
		if n > 0 && rng.IntN(4) == 0 {
			a[rng.IntN(n)] = genValue(rng, s.Items.Value, depth+1)
		}
		return a
	case s.Type.Includes("string"):
		return genStrings[rng.IntN(len(genStrings))]
	case s.Type.Includes("boolean"):
		return rng.IntN(2) == 0
	}
	return genWrong(rng, s)
}

// genWrong returns a value of another JSON type than s declares, mostly.
func genWrong(rng *rand.Rand, s *openapi3.Schema) any {
	for {
		var v any
		switch rng.IntN(5) {
		case 0:
			v = 12025550123.0
		case 1:
			v = "x"
		case 2:
			v = true
		case 3:
			v = []any{"12025550123"}
		case 4:
			v = map[string]any{"a": 1.0}
		}
		if s.Type == nil || !s.Type.Includes(jsonType(v)) || rng.IntN(4) == 0 {
			return v
		}
	}
}

func jsonType(v any) string {
	switch v.(type) {
	case float64:
		return "number"
	case string:
		return "string"
	case bool:
		return "boolean"
	case []any:
		return "array"
	}
	return "object"
}
