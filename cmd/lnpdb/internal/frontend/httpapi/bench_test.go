package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// discardWriter is a reusable ResponseWriter, so that a benchmark counts
// the handler's allocations only.
type discardWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(s int)   { w.status = s }
func (w *discardWriter) Write(b []byte) (int, error) {
	w.n += len(b)
	return len(b), nil
}

// rereader is a request body that can be rewound.
type rereader struct{ bytes.Reader }

func (*rereader) Close() error { return nil }

// benchHandler is the real handler on the sample table, with a rate limit
// high enough that lookups keep running, for benchmarks and fuzzers.
func benchHandler(b testing.TB, metrics bool) *Handler {
	cfg := Config{
		Tables:       NewTable(testdb.Sample(b)),
		Keys:         testKeys(),
		DefaultLimit: 1 << 30,
		Now:          func() time.Time { return testNow },
	}
	if metrics {
		m, err := NewMetrics(nil)
		if err != nil {
			b.Fatal(err)
		}
		cfg.Metrics = m
	}
	h, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return h
}

func benchPost(b *testing.B, h http.Handler, path, body string) {
	req := &http.Request{
		Method: http.MethodPost,
		URL:    &url.URL{Path: path},
		Header: http.Header{
			"Content-Type":  {"application/json"},
			"Authorization": {"Bearer " + testKey},
		},
		Host:          "localhost",
		ContentLength: int64(len(body)),
	}
	rb := new(rereader)
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		rb.Reset([]byte(body))
		req.Body = rb
		clear(w.h)
		h.ServeHTTP(w, req)
	}
	if w.status != http.StatusOK {
		b.Fatalf("status %d", w.status)
	}
}

func BenchmarkRESTLRN(b *testing.B) {
	benchPost(b, benchHandler(b, true), "/api/v1/lrn", `{"phone_number":"12025550123"}`)
}

func BenchmarkRESTLRNEnhancedMessaging(b *testing.B) {
	benchPost(b, benchHandler(b, true), "/api/v1/lrn", `{"phone_number":"12025550123","include_enhanced_lrn":true,"messaging_lookup":true}`)
}

func BenchmarkRESTLRNNoMetrics(b *testing.B) {
	benchPost(b, benchHandler(b, false), "/api/v1/lrn", `{"phone_number":"12025550123"}`)
}

func BenchmarkGraphQLLRN(b *testing.B) {
	benchPost(b, benchHandler(b, true), "/graphql", `{"query":"query($n: String!) { lookupLrn(phoneNumber: $n, includeEnhancedLrn: true) { lrn carrier success } }","variables":{"n":"12025550123"}}`)
}

// BenchmarkFixedJSON is the floor: a bare handler writing a fixed body.
func BenchmarkFixedJSON(b *testing.B) {
	body := []byte(`{"lrn":"12025569000","phone_number":"12025550123","lrn_activated_at":"2019-03-14T15:09:26+00:00"}`)
	benchPost(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	}), "/", `{"phone_number":"12025550123"}`)
}

// graphQLBenchQuery is the operation of the GraphQL benchmarks, and of
// benchmarks/http/run.sh.
const graphQLBenchQuery = `query($n: String!) { lookupLrn(phoneNumber: $n, includeEnhancedLrn: true) { lrn carrier success } }`

// graphQLLoadQuery is the operation benchmarks/http/run.sh sends: every
// field of the enhanced answer.
const graphQLLoadQuery = `query($n: String!) { lookupLrn(phoneNumber: $n, includeEnhancedLrn: true) { lrn lrn_activated_at enhanced_lrn_data { carrier carrier_type city zip_code county timezone state rate_center lata ocn } } }`

// BenchmarkGraphQLLRNPersisted sends the operation as Apollo's automatic
// persisted queries do once the server knows it: its hash and variables.
func BenchmarkGraphQLLRNPersisted(b *testing.B) {
	b.Run("short", func(b *testing.B) { benchPersisted(b, graphQLBenchQuery) })
	b.Run("enhanced", func(b *testing.B) { benchPersisted(b, graphQLLoadQuery) })
}

func benchPersisted(b *testing.B, query string) {
	h := benchHandler(b, true)
	sum := sha256.Sum256([]byte(query))
	ext := `"extensions":{"persistedQuery":{"version":1,"sha256Hash":"` + hex.EncodeToString(sum[:]) + `"}}`
	q, _ := json.Marshal(query)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(`{"query":`+string(q)+`,`+ext+`,"variables":{"n":"12025550123"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testKey)
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "errors") {
		b.Fatalf("registering the query: %d %s", rec.Code, rec.Body)
	}
	benchPost(b, h, "/graphql", `{`+ext+`,"variables":{"n":"12025550123"}}`)
}

// BenchmarkRESTLRNBulk asks 1,000 of the sample's numbers, with enhanced
// data, in one request, and reports numbers per second.
func BenchmarkRESTLRNBulk(b *testing.B) {
	numbers := sampleNumbers(b)
	for len(numbers) < MaxBulkNumbers {
		numbers = append(numbers, numbers...)
	}
	body, _ := json.Marshal(map[string]any{"phone_numbers": numbers[:MaxBulkNumbers], "include_enhanced_lrn": true})
	benchPost(b, benchHandler(b, true), "/api/v1/lrn/bulk", string(body))
	b.ReportMetric(float64(b.N)*MaxBulkNumbers/b.Elapsed().Seconds(), "numbers/s")
}

// BenchmarkGraphQLAmplification sends documents built to fail validation
// many times over; B/op is what one costs the server.
func BenchmarkGraphQLAmplification(b *testing.B) {
	for name, q := range map[string]string{"conflicts": amplification(15), "errors": manyErrors(15)} {
		b.Run(name, func(b *testing.B) {
			body, _ := json.Marshal(map[string]any{"query": q})
			benchPost(b, benchHandler(b, false), "/graphql", string(body))
		})
	}
}

// BenchmarkRESTLRNConventions is BenchmarkRESTLRN through Conventions, as
// lnpdb serve answers: what compression's wrapper, request ids and CORS
// cost a lookup that is neither compressed nor cross-origin.
func BenchmarkRESTLRNConventions(b *testing.B) {
	h, err := Conventions(benchHandler(b, true), ConventionsConfig{})
	if err != nil {
		b.Fatal(err)
	}
	benchPost(b, h, "/api/v1/lrn", `{"phone_number":"12025550123"}`)
}
