package main

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/root"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestServeOTLPTraces: with --otlp-endpoint, a lookup's server span reaches
// an OTLP/HTTP collector (here a real HTTP server decoding the protobuf
// export), in the caller's trace, named after its route, by the time serve
// has stopped; the access log names the same trace.
func TestServeOTLPTraces(t *testing.T) {
	var mu sync.Mutex
	var spans []string // "name trace-id parent-span-id"
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(body)
		var req collectortrace.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(b, &req)
		}
		if r.URL.Path != "/v1/traces" || err != nil {
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					spans = append(spans, sp.Name+" "+hex.EncodeToString(sp.TraceId)+" "+hex.EncodeToString(sp.ParentSpanId))
				}
			}
		}
		mu.Unlock()
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(collector.Close)

	s := startServe(t, "--addr", "127.0.0.1:0", "--log-format", "json", "--otlp-endpoint", collector.URL)
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	key := s.await(t, &s.stdout, `development API key[^:]*: (lnp_[a-z2-7]{32})`)
	req, err := http.NewRequest(http.MethodPost, base+"/api/v1/lrn", strings.NewReader(`{"phone_number":"12025550123"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, 0, s.stop(t)) // flushes the batch

	mu.Lock()
	defer mu.Unlock()
	assert.Contains(t, spans, "POST /api/v1/lrn 4bf92f3577b34da6a3ce929d0e0e4736 00f067aa0ba902b7")
	assert.Contains(t, s.stderr.String(), `"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"`)
}

// TestServeOTLPEndpointRefused: an --otlp-endpoint that is no URL is a
// usage error, before anything is served.
func TestServeOTLPEndpointRefused(t *testing.T) {
	var out, errb strings.Builder
	code := root.Run(t.Context(), &cliutil.Env{Stdout: &out, Stderr: &errb}, []string{"serve", "--addr", "127.0.0.1:0", "--otlp-endpoint", "collector:4318"})
	assert.Equal(t, 2, code, "%s", errb.String())
	assert.Contains(t, errb.String(), "otlp-endpoint")
}
