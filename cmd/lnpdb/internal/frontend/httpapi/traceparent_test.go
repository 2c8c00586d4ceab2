package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
)

// The example of the W3C Trace Context specification.
const (
	specTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	specTraceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
	specParentID    = "00f067aa0ba902b7"
)

func TestParseTraceparent(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{specTraceparent, true},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", true},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09", true},                       // unknown flags ignored
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-holds", true}, // a later version's extra fields
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-", false}, // version 00 has no more fields
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x", false}, // a later version's fields follow a dash
		{"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},  // version ff is invalid
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", false},  // all-zero trace-id
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false},  // all-zero parent-id
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false},  // upper-case hex
		{"00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01", false},  // misplaced dash
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0", false},
		{"0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
		{" 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
		{"", false},
	} {
		sc, ok := parseTraceparent(c.in)
		assert.Equal(t, c.ok, ok, "%q", c.in)
		if ok {
			assert.Equal(t, specTraceID, sc.TraceID.String(), c.in)
			assert.Equal(t, specParentID, sc.SpanID.String(), c.in)
		}
	}
}

// FuzzTraceparent holds parseTraceparent to the specification's rules and
// to OpenTelemetry's own propagator: both accept the same headers with the
// same ids and sampled flag, except version 00 with reserved flag bits,
// which the specification tells receivers to ignore and OpenTelemetry
// refuses.
func FuzzTraceparent(f *testing.F) {
	f.Add(specTraceparent)
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
	f.Add("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future")
	f.Add("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add("00-00000000000000000000000000000000-00f067aa0ba902b7-01")
	f.Add("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01")
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-ff")
	f.Fuzz(func(t *testing.T, s string) {
		sc, ok := parseTraceparent(s)
		otel := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(),
			propagation.HeaderCarrier(http.Header{"Traceparent": []string{s}})))
		reservedFlags := ok && strings.HasPrefix(s, "00-") && sc.TraceFlags > 3
		if !reservedFlags {
			require.Equal(t, otel.IsValid(), ok, "%q", s)
		}
		if !ok {
			return
		}
		require.True(t, sc.TraceID.IsValid() && sc.SpanID.IsValid())
		require.Equal(t, s[3:35], sc.TraceID.String())
		require.Equal(t, s[36:52], sc.SpanID.String())
		require.NotEqual(t, "ff", s[:2])
		if otel.IsValid() {
			require.Equal(t, otel.TraceID(), sc.TraceID)
			require.Equal(t, otel.SpanID(), sc.SpanID)
			require.Equal(t, otel.IsSampled(), sc.TraceFlags.IsSampled())
		}
	})
}

// accessLines returns the access log lines a server wrote to AccessLogTo.
func accessLines(t *testing.T, b *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(b.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		out = append(out, m)
	}
	return out
}

// TestTraceparentInAccessLog: a request with a valid traceparent is logged
// with its trace-id and a span id of its own (not the caller's); one with
// an invalid header, or none, without either.
func TestTraceparentInAccessLog(t *testing.T) {
	var access bytes.Buffer
	s := newServer(t, func(c *Config) { c.AccessLogTo = &access })
	body := `{"phone_number":"12025550123"}`
	hdr := append([]string{"Traceparent", specTraceparent}, jsonKey...)
	require.Equal(t, http.StatusOK, s.do(t, http.MethodPost, "/api/v1/lrn", body, hdr...).StatusCode)
	bad := append([]string{"Traceparent", strings.ToUpper(specTraceparent)}, jsonKey...)
	require.Equal(t, http.StatusOK, s.do(t, http.MethodPost, "/api/v1/lrn", body, bad...).StatusCode)
	require.Equal(t, http.StatusOK, s.post(t, "/api/v1/lrn", body).StatusCode)

	lines := accessLines(t, &access)
	require.Len(t, lines, 3)
	assert.Equal(t, specTraceID, lines[0]["trace_id"])
	span, _ := lines[0]["span_id"].(string)
	assert.Len(t, span, 16)
	assert.NotEqual(t, specParentID, span, "the request's own span, a child of the caller's")
	for _, l := range lines[1:] {
		assert.NotContains(t, l, "trace_id")
		assert.NotContains(t, l, "span_id")
	}
}

// TestTracingSpans: with a tracer, a lookup makes one server span, the
// child of the caller's span in the caller's trace, named after its route,
// with its status and key; the access log names the same span.
func TestTracingSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	var access bytes.Buffer
	s := newServer(t, func(c *Config) { c.Tracer = tp.Tracer("test"); c.AccessLogTo = &access })

	hdr := append([]string{"Traceparent", specTraceparent, "Tracestate", "vendor=x"}, jsonKey...)
	require.Equal(t, http.StatusOK, s.do(t, http.MethodPost, "/api/v1/lrn", `{"phone_number":"12025550123"}`, hdr...).StatusCode)
	require.Equal(t, http.StatusBadRequest, s.post(t, "/api/v1/cnam", `{"phone_number":"1"}`).StatusCode)

	spans := exp.GetSpans()
	require.Len(t, spans, 2)
	sp := spans[0]
	assert.Equal(t, "POST /api/v1/lrn", sp.Name)
	assert.Equal(t, trace.SpanKindServer, sp.SpanKind)
	assert.Equal(t, specTraceID, sp.SpanContext.TraceID().String())
	assert.Equal(t, specParentID, sp.Parent.SpanID().String())
	assert.True(t, sp.Parent.IsRemote())
	assert.Equal(t, "x", sp.SpanContext.TraceState().Get("vendor"))
	attrs := map[string]any{}
	for _, a := range sp.Attributes {
		attrs[string(a.Key)] = a.Value.AsInterface()
	}
	assert.EqualValues(t, 200, attrs["http.response.status_code"])
	assert.Equal(t, "/api/v1/lrn", attrs["http.route"])
	assert.Equal(t, auth.HashKey(testKey).ID(), attrs["lnpdb.key_id"])

	// Without a traceparent the request starts a trace of its own.
	assert.Equal(t, "POST /api/v1/cnam", spans[1].Name)
	assert.False(t, spans[1].Parent.IsValid())
	assert.NotEqual(t, specTraceID, spans[1].SpanContext.TraceID().String())

	lines := accessLines(t, &access)
	require.Len(t, lines, 2)
	assert.Equal(t, sp.SpanContext.SpanID().String(), lines[0]["span_id"])
	assert.Equal(t, spans[1].SpanContext.TraceID().String(), lines[1]["trace_id"])
}
