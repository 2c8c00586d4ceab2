package httpapi

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/ratelimit"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testclock"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testio"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// testNow is the trust lookups' "now" in tests.
var testNow = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// testKey is the API key of the test servers; limitedKey has a limit of 3.
const (
	testKey    = "lnp_testkeytestkeytestkeytestkeyte"
	limitedKey = "lnp_limitedlimitedlimitedlimitedli"
)

func testKeys() *auth.KeySet {
	k := auth.HashKey(limitedKey)
	k.Limit = 3
	return auth.NewKeySet(auth.HashKey(testKey), k)
}

type server struct {
	*httptest.Server
	h     *Handler
	clock *testclock.Clock
	logs  *testio.Buffer
}

type option func(*Config)

// newServer starts the real handler on the sample table over real HTTP.
func newServer(t testing.TB, opts ...option) *server {
	t.Helper()
	c := testclock.New(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	logs := new(testio.Buffer)
	m, err := NewMetrics(nil)
	require.NoError(t, err)
	cfg := Config{
		Tables:       NewTable(testdb.Sample(t)),
		Keys:         testKeys(),
		Limiter:      ratelimit.NewMemoryLimiter(time.Minute, c.Now),
		Logger:       slog.New(slog.NewJSONHandler(logs, nil)),
		AccessLog:    true,
		Metrics:      m,
		ServeMetrics: true,
		Now:          func() time.Time { return testNow },
	}
	for _, o := range opts {
		o(&cfg)
	}
	h, err := New(cfg)
	require.NoError(t, err)
	s := &server{Server: httptest.NewServer(recording(h.mux, h)), h: h, clock: c, logs: logs}
	t.Cleanup(s.Close)
	return s
}

// response is a finished response with its body read.
type response struct {
	*http.Response
	body []byte
}

func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.body, &m), "body: %s", r.body)
	return m
}

// do sends a request; hdr holds header pairs ("Authorization", "Bearer x").
func (s *server) do(t testing.TB, method, path, body string, hdr ...string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, s.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := s.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return response{res, b}
}

// post sends an authenticated JSON POST with testKey.
func (s *server) post(t testing.TB, path, body string) response {
	t.Helper()
	return s.do(t, http.MethodPost, path, body, "Content-Type", "application/json", "Authorization", "Bearer "+testKey)
}

// gql runs a GraphQL query with testKey and returns the decoded body.
func (s *server) gql(t testing.TB, query string, vars map[string]any) (response, gqlResponse) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(t, err)
	r := s.post(t, "/graphql", string(b))
	var g gqlResponse
	require.NoError(t, json.Unmarshal(r.body, &g), "body: %s", r.body)
	return r, g
}

type gqlResponse struct {
	Data   map[string]json.RawMessage `json:"data"`
	Errors []struct {
		Message string `json:"message"`
	} `json:"errors"`
}

// unlimited lifts the default rate limit, for tests that ask many questions.
func unlimited(c *Config) { c.DefaultLimit = 1 << 30 }

// maxSampleNumbers bounds what sampleNumbers returns, so that a bigger
// sample does not slow the tests down.
const maxSampleNumbers = 400

// sampleNumbers returns the numbers that the sample's per-number files name,
// canonical: all of them, or an even spread of maxSampleNumbers.
func sampleNumbers(t testing.TB) []string {
	t.Helper()
	seen := map[string]bool{}
	var out []string
	for _, f := range []string{"ported.csv", "messaging.csv", "cnam.csv", "trust.csv"} {
		b, err := fs.ReadFile(lnpdb.Sample(), f)
		require.NoError(t, err)
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		require.NoError(t, err)
		col := -1
		for i, h := range recs[0] {
			if h == "tn" {
				col = i
			}
		}
		require.GreaterOrEqual(t, col, 0, f)
		for _, r := range recs[1:] {
			tn := r[col]
			if len(tn) == 10 {
				tn = "1" + tn
			}
			if !seen[tn] {
				seen[tn] = true
				out = append(out, tn)
			}
		}
	}
	if len(out) > maxSampleNumbers {
		spread := make([]string, maxSampleNumbers)
		for i := range spread {
			spread[i] = out[i*len(out)/maxSampleNumbers]
		}
		out = spread
	}
	return out
}

// sampleDBCopy opens a table of its own, for a test that closes it.
func sampleDBCopy(t testing.TB) *format.DB {
	t.Helper()
	return testdb.Sample(t)
}
