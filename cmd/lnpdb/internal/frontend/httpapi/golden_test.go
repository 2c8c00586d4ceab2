package httpapi

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/internal/testutil/golden"
)

// TestGoldenBodies checks every wire body of the lookup packages' golden
// files, errors included, over HTTP.
func TestGoldenBodies(t *testing.T) {
	s := newServer(t, func(c *Config) { c.Now = func() time.Time { return golden.Now } })
	for _, typ := range []string{"lrn", "cnam", "messaging", "trust"} {
		cases := golden.Read(t, "../../../../..", typ+".json")
		require.NotEmpty(t, cases)
		for _, c := range cases {
			t.Run(typ+"/"+c.Case, func(t *testing.T) {
				req, _ := json.Marshal(map[string]any{"phone_number": c.Number, "include_enhanced_lrn": c.Enhanced, "messaging_lookup": c.Messaging})
				r := s.post(t, "/api/v1/"+typ, string(req))
				var probe struct{ Code string }
				require.NoError(t, json.Unmarshal(c.Body, &probe))
				want := map[string]int{"": http.StatusOK, CodeNumberNotFound: http.StatusNotFound, CodeInvalidPhoneNumber: http.StatusBadRequest}[probe.Code]
				assert.Equal(t, want, r.StatusCode)
				assert.JSONEq(t, string(c.Body), string(r.body))
			})
		}
	}
}
