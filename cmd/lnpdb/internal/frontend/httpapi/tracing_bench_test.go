package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// discardExporter is an exporter that drops what it is given: the cost
// measured is the SDK's (span, attributes, batching), not a collector's.
type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }

// BenchmarkTracing is a REST LRN lookup through the handler, with the JSON
// access log on, in four ways: off (no traceparent, no tracer);
// traceparent (the header parsed and logged, no tracer); sdk (a tracer of
// the OpenTelemetry SDK batching to an exporter that drops the spans, the
// request carrying a traceparent); memory (the same, spans kept in memory,
// reset every 10,000). Run the ways interleaved (-count) to compare them:
//
//	go test -run '^$' -bench 'BenchmarkTracing' -count 5 ./cmd/lnpdb/internal/frontend/httpapi
func BenchmarkTracing(b *testing.B) {
	const body = `{"phone_number":"12025550123"}`
	newHandler := func(tp *sdktrace.TracerProvider) *Handler {
		cfg := Config{
			Tables: NewTable(testdb.Sample(b)), Keys: testKeys(), DefaultLimit: 1 << 30,
			Now: func() time.Time { return testNow }, AccessLog: true, AccessLogTo: io.Discard,
			Logger: slog.New(slog.DiscardHandler),
		}
		if tp != nil {
			cfg.Tracer = tp.Tracer("bench")
		}
		h, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		return h
	}
	run := func(b *testing.B, h *Handler, traceparent bool, each func()) {
		req := &http.Request{
			Method: http.MethodPost, URL: &url.URL{Path: "/api/v1/lrn"}, Host: "localhost",
			Header:        http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + testKey}},
			ContentLength: int64(len(body)),
		}
		if traceparent {
			req.Header["Traceparent"] = []string{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
		}
		rb := new(rereader)
		w := &discardWriter{h: http.Header{}}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			rb.Reset([]byte(body))
			req.Body = rb
			clear(w.h)
			h.ServeHTTP(w, req)
			if w.status != http.StatusOK {
				b.Fatalf("status %d", w.status)
			}
			if i++; each != nil && i%10000 == 0 {
				each()
			}
		}
	}
	b.Run("off", func(b *testing.B) { run(b, newHandler(nil), false, nil) })
	b.Run("traceparent", func(b *testing.B) { run(b, newHandler(nil), true, nil) })
	b.Run("sdk", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardExporter{}))
		defer tp.Shutdown(context.Background())
		run(b, newHandler(tp), true, nil)
	})
	b.Run("memory", func(b *testing.B) {
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
		defer tp.Shutdown(context.Background())
		run(b, newHandler(tp), true, exp.Reset)
	})
}
