package httpapi

import (
	"context"
	"errors"
	"fmt"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/ratelimit"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/redislimit"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/distribute"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/live"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/updatelog"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/buildinfo"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/delivery"
	"github.com/lnpdb/lnpdb/cnam"
	"github.com/lnpdb/lnpdb/lrn"
	"github.com/lnpdb/lnpdb/messaging"
	"github.com/lnpdb/lnpdb/trust"
)

// Config configures a Handler. Tables and Keys are required.
type Config struct {
	// Tables gives the table each request answers from.
	Tables TableSource
	// Keys authenticates API keys.
	Keys auth.KeyStore
	// Limiter counts requests per key; nil means a MemoryLimiter with
	// DefaultWindow.
	Limiter ratelimit.Limiter
	// DefaultLimit is the budget per window of a key that has none of its
	// own; 0 means DefaultLimit.
	DefaultLimit int
	// Accounts, when set, is charged for every answered lookup; nil means
	// accounts are disabled and lookups are free.
	Accounts Accounts
	// Logger receives errors, panics and, with AccessLog, one line per
	// request; nil discards everything.
	Logger *slog.Logger
	// AccessLog logs every request: method, path, status, duration, bytes
	// and the key id (the first 8 hex digits of the key's hash).
	AccessLog bool
	// AccessLogTo, when set, receives the access log instead of Logger:
	// one JSON object per line, as slog.NewJSONHandler(AccessLogTo, LogOptions(nil))
	// writes the record, written without slog's generic encoding for the
	// requests whose strings are plain ASCII (nearly all). Each line comes
	// in one Write.
	AccessLogTo io.Writer
	// Metrics, when set, counts requests and lookups.
	Metrics *Metrics
	// ServeMetrics serves Metrics at GET /metrics on this handler, without
	// a key; otherwise the caller serves [Metrics.Handler] elsewhere.
	ServeMetrics bool
	// Now is the clock of trust lookups ("now" of CONTRACT §5); nil means
	// time.Now.
	Now func() time.Time
	// Live, when set, reports reloads, pending updates and refusals for
	// GET /api/v1/status.
	Live func() live.Status
	// Pull, when set, reports the fetch of the table from an origin
	// (serve --db-url).
	Pull func() distribute.Status
	// Redis, when set, reports the health of the shared rate limiter
	// (serve --redis).
	Redis func() redislimit.Status
	// UpdateLog, when set, reports this node's place in the shared update
	// log (serve --updates-log).
	UpdateLog func() updatelog.Status
	// Ready are the checks of GET /readyz besides the table's: one per
	// store the server is configured with.
	Ready []Check
	// Build is the binary's identity, reported by GET /api/v1/status.
	Build buildinfo.Info
	// Keyed are routes of other packages served behind the key check
	// (the lookup jobs' API): ServeMux patterns with their method.
	Keyed map[string]KeyedHandler
	// Tracer, when set, makes a server span of every request, a child of
	// the caller's span when the request carries a valid W3C traceparent
	// (serve --otlp-endpoint). Without it, a valid traceparent is still
	// logged: its trace-id, and a span id of the request's own.
	Tracer trace.Tracer
}

// Accounts charges answered lookups to the key's prepaid account (the hosted
// service's free tier and wallet). It must be safe for concurrent use.
type Accounts interface {
	// Charge pays for one answered lookup by key: "cnam", "messaging",
	// "trust", or for LRN one of the Charge* constants (with or without
	// enhanced data and the messaging add-on). The handler settles the
	// payment once, after writing the response: Settle(true) when the
	// answer reached the connection (only then is the lookup charged),
	// Settle(false) when it did not. An error matching
	// ErrInsufficientBalance withholds the answer with 402
	// INSUFFICIENT_BALANCE (its details are the error's Details() string,
	// when it has that method); any other error with 503
	// STORAGE_UNAVAILABLE.
	Charge(ctx context.Context, key auth.Key, lookup string) (Payment, error)
}

// Payment is a lookup's payment, held until its answer is written.
type Payment interface {
	Settle(delivered bool)
}

// What an LRN lookup is charged as.
const (
	ChargeLRN                  = "lrn"
	ChargeLRNEnhanced          = "lrn_enhanced"
	ChargeLRNMessaging         = "lrn+messaging_addon"
	ChargeLRNEnhancedMessaging = "lrn_enhanced+messaging_addon"
)

func lrnCharge(enhanced, messaging bool) string {
	switch {
	case enhanced && messaging:
		return ChargeLRNEnhancedMessaging
	case enhanced:
		return ChargeLRNEnhanced
	case messaging:
		return ChargeLRNMessaging
	}
	return ChargeLRN
}

// UsageReporter is what Accounts may also do: report the caller's usage,
// served as GET /api/v1/usage (a JSON object).
type UsageReporter interface {
	Usage(ctx context.Context, key auth.Key) (any, error)
}

// ErrInsufficientBalance is what [Accounts.Charge] returns (or wraps) when
// the free tier is used up and the wallet is empty.
var ErrInsufficientBalance = errors.New("httpapi: insufficient balance")

// Handler is the http.Handler of the API. It is safe for concurrent use.
type Handler struct {
	tables   TableSource
	keys     auth.KeyStore
	limiter  ratelimit.Limiter
	limit    int
	window   time.Duration // the limiter's, when it says
	accounts Accounts
	log      *slog.Logger
	access   bool
	accessTo io.Writer
	metrics  *Metrics
	now      func() time.Time
	live     func() live.Status
	pull     func() distribute.Status
	redis    func() redislimit.Status
	updlog   func() updatelog.Status
	ready    []Check
	build    buildinfo.Info
	tracer   trace.Tracer
	gql      *executor.Executor
	apq      graphql.Cache[string]   // the persisted queries of gql
	plans    graphql.Cache[*lrnPlan] // documents answered without gql (gqlplan.go)
	inflight inflight
	mux      *routes
}

// required returns an error naming the first field of the configuration
// config that is nil; fields alternates names and values, as in
// required("Config", "Tables", cfg.Tables, "Keys", cfg.Keys).
func required(config string, fields ...any) error {
	for i := 0; i+1 < len(fields); i += 2 {
		if fields[i+1] == nil {
			return fmt.Errorf("httpapi: %s.%s is required", config, fields[i])
		}
	}
	return nil
}

// New returns the Handler for cfg.
func New(cfg Config) (*Handler, error) {
	if err := required("Config", "Tables", cfg.Tables, "Keys", cfg.Keys); err != nil {
		return nil, err
	}
	h := &Handler{
		tables:   cfg.Tables,
		keys:     cfg.Keys,
		limiter:  cfg.Limiter,
		limit:    cfg.DefaultLimit,
		accounts: cfg.Accounts,
		log:      cfg.Logger,
		access:   cfg.AccessLog,
		accessTo: cfg.AccessLogTo,
		metrics:  cfg.Metrics,
		now:      cfg.Now,
		live:     cfg.Live,
		pull:     cfg.Pull,
		redis:    cfg.Redis,
		updlog:   cfg.UpdateLog,
		ready:    cfg.Ready,
		build:    cfg.Build,
		tracer:   cfg.Tracer,
		mux:      newRoutes(),
	}
	if h.limiter == nil {
		h.limiter = ratelimit.NewMemoryLimiter(ratelimit.DefaultWindow, nil)
	}
	if l, ok := h.limiter.(windowed); ok {
		h.window = l.Window()
	}
	if h.limit <= 0 {
		h.limit = ratelimit.DefaultLimit
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.now == nil {
		h.now = time.Now
	}
	h.gql = h.newGraphQL(true, true)

	rest := map[string]func(*recorder, *http.Request){
		"/api/v1/lrn":       h.restLRN,
		"/api/v1/cnam":      h.restCNAM,
		"/api/v1/messaging": h.restMessaging,
		"/api/v1/trust":     h.restTrust,
		"/api/v1/lrn/bulk":  h.restLRNBulk,
	}
	for _, path := range RESTLookupPaths() {
		h.mux.handle("POST "+path, &route{path, rest[path]})
		h.mux.handle(path, &route{path, notAllowed(hdrPost, errMethodNotAllowed)})
	}
	h.handleKeyed(cfg.Keyed)
	// GraphQL over HTTP: queries may also come as GET.
	h.mux.handle("POST /graphql", &route{"/graphql", h.graphql})
	h.mux.handle("GET /graphql", &route{"/graphql", h.graphql})
	h.mux.handle("/graphql", &route{"/graphql", notAllowed(hdrGetPost, errMethodNotAllowedGraphQL)})
	gets := []struct {
		path string
		fn   func(*recorder, *http.Request)
	}{
		{"/api/v1/status", h.status},
		{"/healthz", h.healthz},
		{"/readyz", h.readyz},
		{"/openapi.json", serveOpenAPI},
	}
	if u, ok := cfg.Accounts.(UsageReporter); ok {
		gets = append(gets, struct {
			path string
			fn   func(*recorder, *http.Request)
		}{"/api/v1/usage", h.usage(u)})
	}
	if cfg.ServeMetrics && cfg.Metrics != nil {
		mh := cfg.Metrics.Handler()
		gets = append(gets, struct {
			path string
			fn   func(*recorder, *http.Request)
		}{"/metrics", func(w *recorder, r *http.Request) { mh.ServeHTTP(w, r) }})
	}
	for _, rt := range gets {
		h.mux.handle("GET "+rt.path, &route{rt.path, rt.fn})
		h.mux.handle(rt.path, &route{rt.path, notAllowed(hdrGet, errMethodNotAllowedGet)})
	}
	return h, nil
}

// routes is a handler's ServeMux, which remembers the patterns registered
// on it: ServeMux cannot list them, and a test holds them to openapi.json.
type routes struct {
	*http.ServeMux
	patterns []string
}

func newRoutes() *routes { return &routes{ServeMux: http.NewServeMux()} }

func (m *routes) handle(pattern string, rt *route) {
	m.ServeMux.Handle(pattern, rt)
	m.patterns = append(m.patterns, pattern)
}

// RESTLookupPaths returns the REST API's lookup endpoints, as its metrics
// label them.
func RESTLookupPaths() []string {
	return []string{"/api/v1/lrn", "/api/v1/cnam", "/api/v1/messaging", "/api/v1/trust", "/api/v1/lrn/bulk"}
}

// route is a registered endpoint: its path, as metrics label it, and its
// function, which gets the request's recorder.
type route struct {
	path string
	fn   func(*recorder, *http.Request)
}

func (rt *route) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt.fn(w.(*recorder), r)
}

func notAllowed(allow []string, e *apiError) func(*recorder, *http.Request) {
	return func(w *recorder, _ *http.Request) {
		w.Header()["Allow"] = allow
		writeError(w, e)
	}
}

// recorder wraps a request's ResponseWriter to remember what the access log
// and the metrics report. Recorders are pooled.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int
	route  string
	keyID  string
	// The request's place in a W3C trace, when traced: logged.
	traced  bool
	traceID trace.TraceID
	spanID  trace.SpanID
	line    []byte // the access log line, kept with the pooled recorder
	// post: the request is a POST, whose answers no cache stores without
	// explicit freshness and a Content-Location (RFC 9110 §9.3.3), which
	// they never have; so they carry no Cache-Control. Any other method's
	// JSON answer, errors included (a 404 is cacheable by default), is
	// sent with Cache-Control: no-store.
	post bool

	// Requests and answers live here, in pooled memory, so that decoding
	// and encoding them does not allocate them.
	lrnReq   lrnRequest
	phoneReq phoneRequest
	lrnRes   lrn.Result
	cnamRes  cnam.Result
	msgRes   messaging.Result
	trustRes trust.Result

	// The payments of the request's answered lookups, and while there
	// are any, the response, held so that it goes out whole with its
	// Content-Length and its delivery is known (settle).
	payMu    sync.Mutex
	payments []Payment
	billed   atomic.Bool // payments is not empty
	heldCode int
	held     []byte
}

var recorders = sync.Pool{New: func() any { return new(recorder) }}

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	if w.paid() {
		if w.heldCode == 0 {
			w.heldCode = code
		}
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.paid() {
		if w.heldCode == 0 {
			w.heldCode = http.StatusOK
		}
		w.held = append(w.held, b...)
		w.bytes += len(b)
		return len(b), nil
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := recorders.Get().(*recorder)
	*rec = recorder{ResponseWriter: w, route: "other", post: r.Method == http.MethodPost, payments: rec.payments, held: rec.held}
	var span trace.Span
	if h.tracer != nil {
		r, span = h.startSpan(rec, r)
	} else if tp := header(r.Header, "Traceparent"); tp != "" {
		if sc, ok := parseTraceparent(tp); ok {
			rec.traced, rec.traceID, rec.spanID = true, sc.TraceID, newSpanID()
		}
	}
	defer func() {
		v := recover()
		if rec.paid() {
			rec.settle(r, v == nil)
		}
		recoverRequest(v, h.log, rec, r)
		h.done(rec, r, start)
		if span != nil {
			endSpan(span, rec, r.Method)
		}
		held := rec.held[:0]
		if cap(held) > maxPooledJSON {
			held = nil
		}
		*rec = recorder{line: rec.line[:0], payments: rec.payments[:0], held: held}
		recorders.Put(rec)
	}()
	dispatch(h.mux.ServeMux, rec, r)
}

// hold keeps a lookup's payment until the response is written. Lookups
// of one GraphQL request may resolve concurrently.
func (w *recorder) hold(p Payment) {
	w.payMu.Lock()
	w.payments = append(w.payments, p)
	w.billed.Store(true)
	w.payMu.Unlock()
}

// paid reports whether the request holds payments, and so its response.
func (w *recorder) paid() bool { return w.billed.Load() }

// settle writes the held response and settles the request's payments: a
// lookup is charged only if its answer was delivered (delivery.Write). ok
// is false when the handler panicked: nothing is then delivered, and the
// 500 goes out unpaid. A response written to a delivery.Relay (the
// account playground's page) is delivered with the relay's own response:
// its payments are handed to the relay, to settle then.
func (w *recorder) settle(r *http.Request, ok bool) {
	w.payMu.Lock()
	payments := w.payments
	w.payments = nil
	w.billed.Store(false)
	w.payMu.Unlock()
	delivered := false
	if ok {
		if w.heldCode == 0 {
			w.heldCode = http.StatusOK
		}
		if rl, relayed := delivery.RelayOf(w.ResponseWriter); relayed {
			w.ResponseWriter.WriteHeader(w.heldCode)
			_, _ = w.ResponseWriter.Write(w.held)
			later := slices.Clone(payments)
			rl.Relay(func(delivered bool) {
				for _, p := range later {
					p.Settle(delivered)
				}
			})
			w.payments = payments[:0]
			return
		}
		delivered = delivery.Write(w.ResponseWriter, r, w.heldCode, w.held)
	} else {
		w.status, w.bytes = 0, 0
	}
	for _, p := range payments {
		p.Settle(delivered)
	}
	w.payments = payments[:0]
}

// startSpan starts the server span of r, the child of the span its
// traceparent names (with its tracestate) when that is valid, and returns r
// with the span in its context.
func (h *Handler) startSpan(rec *recorder, r *http.Request) (*http.Request, trace.Span) {
	ctx := r.Context()
	if sc, ok := parseTraceparent(header(r.Header, "Traceparent")); ok {
		sc.TraceState, _ = trace.ParseTraceState(header(r.Header, "Tracestate")) // a bad tracestate is dropped, the traceparent kept
		ctx = trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(sc))
	}
	ctx, span := h.tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("url.path", clip(r.URL.Path))))
	sc := span.SpanContext()
	rec.traced, rec.traceID, rec.spanID = true, sc.TraceID(), sc.SpanID()
	return r.WithContext(ctx), span
}

// endSpan names the span after its route, as OpenTelemetry's HTTP
// conventions do ("POST /api/v1/lrn"), records the answer and ends it.
func endSpan(span trace.Span, rec *recorder, method string) {
	if rec.route != "other" {
		span.SetName(method + " " + rec.route)
		span.SetAttributes(attribute.String("http.route", rec.route))
	}
	span.SetAttributes(attribute.Int("http.response.status_code", rec.status))
	if rec.keyID != "" {
		span.SetAttributes(attribute.String("lnpdb.key_id", rec.keyID))
	}
	if rec.status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(rec.status))
	}
	span.End()
}

// dispatch runs the route of mux that r asks for, naming it on rec.
func dispatch(mux *http.ServeMux, rec *recorder, r *http.Request) {
	handler, _ := mux.Handler(r)
	rt, ok := handler.(*route)
	if !ok {
		// No endpoint, or a path the mux would redirect to its clean form:
		// either way not an endpoint, and the answer is JSON.
		writeError(rec, errNoRoute)
		return
	}
	rec.route = rt.path
	rt.fn(rec, r)
}

// recoverRequest answers a request whose handler panicked with v (nil: it
// did not) with 500 INTERNAL_ERROR, unless an answer was begun, and logs
// the panic with its stack. http.ErrAbortHandler goes on up: it is how a
// handler asks net/http to drop the connection. Called deferred, with
// recover()'s value, by the API and admin handlers alike.
func recoverRequest(v any, log *slog.Logger, w *recorder, r *http.Request) {
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler {
		panic(v)
	}
	log.LogAttrs(r.Context(), slog.LevelError, "panic serving request",
		slog.String("method", clip(r.Method)), slog.String("path", clip(r.URL.Path)),
		slog.String("panic", fmt.Sprint(v)), slog.String("stack", string(debug.Stack())))
	if w.status == 0 {
		writeError(w, errInternal)
	}
}

// done logs and counts a finished request.
func (h *Handler) done(rec *recorder, r *http.Request, start time.Time) {
	d := time.Since(start)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	if h.metrics != nil {
		h.metrics.observe(rec.route, rec.status, d)
	}
	if !h.access {
		return
	}
	end := start.Add(d)
	if h.accessTo != nil {
		if rec.line == nil {
			rec.line = make([]byte, 0, 512) // a line is about 250 bytes
		}
		var ok bool
		if rec.line, ok = appendAccessJSON(rec.line[:0], rec, r, end, d); ok {
			_, _ = h.accessTo.Write(rec.line) // a log that fails is not the client's problem
			return
		}
		lr := accessRecord(rec, r, end, d)
		_ = slog.NewJSONHandler(h.accessTo, LogOptions(nil)).Handle(r.Context(), lr)
		return
	}
	if h.log.Enabled(r.Context(), slog.LevelInfo) {
		// A record of our own, straight to the handler: Logger.LogAttrs
		// would read the clock again and look up its caller (pc 0: none).
		_ = h.log.Handler().Handle(r.Context(), accessRecord(rec, r, end, d))
	}
}

// clip bounds what a client controls before it reaches a log line.
func clip(s string) string {
	const n = 200
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
