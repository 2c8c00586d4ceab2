// Package tracing owns the server's OpenTelemetry traces: a tracer provider
// of the official SDK that batches the spans of the HTTP API's requests to
// an OTLP/HTTP collector (serve --otlp-endpoint). Without it the server
// makes no spans.
package tracing

import (
	"context"
	"fmt"
	"net/url"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Scope is the instrumentation scope of the server's spans.
const Scope = "github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/httpapi"

// Start returns a tracer whose spans are batched to the OTLP/HTTP collector
// at endpoint (http://host:4318, or a full URL ending in /v1/traces), and
// the function that flushes and stops it. service.name is "lnpdb",
// service.version version. Every span is sampled unless the caller's
// traceparent says not (the parent's decision).
func Start(ctx context.Context, endpoint, version string) (trace.Tracer, func(context.Context) error, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, nil, fmt.Errorf("tracing: --otlp-endpoint %q: want http://HOST:PORT or https://HOST:PORT[/v1/traces]", endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u.String()))
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: %w", err)
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())),
		sdktrace.WithResource(resource.NewSchemaless(
			attribute.String("service.name", "lnpdb"), attribute.String("service.version", version))),
	)
	return tp.Tracer(Scope), tp.Shutdown, nil
}
