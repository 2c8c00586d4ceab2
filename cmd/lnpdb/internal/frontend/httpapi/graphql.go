package httpapi

//go:generate go tool gqlgen generate --config gqlgen.yml

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/httpapi/graph"
)

//go:embed schema.graphql
var schemaText string

// Schema returns the GraphQL schema (SDL) that /graphql serves.
func Schema() string { return schemaText }

// servedSchema is schema.graphql as gqlgen loads it, without the @defer
// directive that gqlparser's prelude declares: a deferred fragment would be
// answered inline in one response, not incrementally, so the server does
// not advertise @defer (introspection leaves it out) and a document using
// it fails validation as an unknown directive, as on any server without
// incremental delivery.
var servedSchema = func() *ast.Schema {
	s := gqlparser.MustLoadSchema(&ast.Source{Name: "schema.graphql", Input: schemaText})
	delete(s.Directives, "defer")
	return s
}()

// Limits on one GraphQL request, on top of MaxBodyBytes.
const (
	// MaxGraphQLLookups is the most single lookups (top-level fields,
	// aliases included) one request may make; the rest answer null with an
	// error. lookupLrnBulk is bounded by MaxBulkNumbers instead.
	MaxGraphQLLookups = 10
	// maxGraphQLDepth admits the introspection queries of common tools
	// (depth 13 to 16) and nothing much deeper; lookups nest at most 3 deep.
	maxGraphQLDepth = 20
	// maxGraphQLSelections bounds the fields an operation expands to once
	// fragments are spread; the introspection query needs a few hundred.
	maxGraphQLSelections = 2000
	maxGraphQLQueryBytes = 16 << 10
	// maxGraphQLComplexity is gqlgen's complexity (one per field, a bulk
	// lookup's fields once per number) that one request may reach: a full
	// bulk lookup of every field fits, twice over.
	maxGraphQLComplexity = 50000
	// maxGraphQLErrors bounds the errors array, so that a document built to
	// fail validation many times over answers a small response.
	maxGraphQLErrors = 20
	// maxErrorMessage clips an error message, which may quote the document.
	maxErrorMessage = 200
	// graphQLCacheSize is how many parsed and validated documents, and how
	// many persisted queries, are kept.
	graphQLCacheSize = 1000
)

// newGraphQL returns the executor of the schema, resolving with h;
// operations and fields answer the usual lookupLrn without gqlgen's
// execution of the operation (lrnOperation) or of the field's fields
// (lrnFields).
func (h *Handler) newGraphQL(operations, fields bool) *executor.Executor {
	q := &gqlResolver{h: h}
	cfg := graph.Config{Resolvers: q, Schema: servedSchema}
	cfg.Complexity.Query.LookupLrnBulk = func(child int, phoneNumbers []string, _, _ *bool) int {
		return 1 + child*max(len(phoneNumbers), 1)
	}
	ex := executor.New(graph.NewExecutableSchema(cfg))
	docs := lru.New[*ast.QueryDocument](graphQLCacheSize)
	ex.SetQueryCache(docs)
	ex.Use(extension.Introspection{})
	h.apq = lru.New[string](graphQLCacheSize)
	ex.Use(persistedQueries{extension.AutomaticPersistedQuery{Cache: h.apq}})
	ex.Use(conflictGuard{docs})
	ex.Use(cachedComplexity{extension.FixedComplexityLimit(maxGraphQLComplexity), lru.New[struct{}](graphQLCacheSize)})
	h.plans = nil
	if operations {
		h.plans = lru.New[*lrnPlan](graphQLCacheSize)
		ex.Use(lrnOperation{q})
	}
	if fields {
		ex.Use(lrnFields{q})
	}
	ex.SetDefaultRulesFn(boundedRules)
	ex.SetRecoverFunc(func(ctx context.Context, v any) error {
		h.log.LogAttrs(ctx, slog.LevelError, "panic in GraphQL resolver",
			slog.String("panic", fmt.Sprint(v)), slog.String("stack", string(debug.Stack())))
		return errors.New("internal server error")
	})
	return ex
}

// shapeRule refuses operations nested deeper than maxGraphQLDepth or
// expanding to more than maxGraphQLSelections fields and fragments once
// fragments are spread: what costs the server before any resolver runs. As
// a validation rule it runs once per document, not once per request.
var shapeRule = core.Rule{Name: "OperationShape", RuleFunc: func(ev *core.Events, addError core.AddErrFunc) {
	ev.OnOperation(func(wk *core.Walker, op *ast.OperationDefinition) {
		n := 0
		if !withinShape(wk.Document, op.SelectionSet, 1, &n) {
			addError(core.Message("the operation is too large: at most %d fields, nested at most %d deep", maxGraphQLSelections, maxGraphQLDepth), core.At(op.Position))
		}
	})
}}

func withinShape(doc *ast.QueryDocument, set ast.SelectionSet, depth int, n *int) bool {
	if depth > maxGraphQLDepth {
		return false
	}
	for _, s := range set {
		var sub ast.SelectionSet
		if *n++; *n > maxGraphQLSelections {
			return false
		}
		switch s := s.(type) {
		case *ast.Field:
			if len(s.SelectionSet) > 0 && !withinShape(doc, s.SelectionSet, depth+1, n) {
				return false
			}
			continue
		case *ast.InlineFragment:
			sub = s.SelectionSet
		case *ast.FragmentSpread:
			if f := doc.Fragments.ForName(s.Name); f != nil {
				sub = f.SelectionSet
			}
		}
		if !withinShape(doc, sub, depth, n) {
			return false
		}
	}
	return true
}

// persistedQueries is gqlgen's automatic persisted queries (Apollo's
// protocol) with a fast path for the usual request, a known hash without
// its query: gqlgen's own decodes the extension by reflection
// (mapstructure), which costs a tenth of a lookup.
type persistedQueries struct {
	extension.AutomaticPersistedQuery
}

func (p persistedQueries) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	if params.Query == "" {
		pq, _ := params.Extensions["persistedQuery"].(map[string]any)
		hash, _ := pq["sha256Hash"].(string)
		if v, _ := pq["version"].(float64); v == 1 && hash != "" {
			if q, ok := p.Cache.Get(ctx, hash); ok {
				params.Query = q
				return nil
			}
		}
	}
	return p.AutomaticPersistedQuery.MutateOperationParameters(ctx, params)
}

// Bounds on what makes validation quadratic: the rule that fields of one
// response name can be merged compares every pair of them, and each pair of
// fragments. A document a client means has a few of each.
const (
	maxSameResponseName = 16
	maxFragments        = 64
)

// conflictGuard parses a document not seen before and refuses it, before
// validation, when one selection set holds more than maxSameResponseName
// fields of one response name or the document more than maxFragments
// fragments: such a document costs validation tens of megabytes and
// answers only errors. A cached document (valid, so within the bounds)
// skips the parse.
type conflictGuard struct {
	docs graphql.Cache[*ast.QueryDocument]
}

func (conflictGuard) ExtensionName() string                   { return "ConflictGuard" }
func (conflictGuard) Validate(graphql.ExecutableSchema) error { return nil }

func (g conflictGuard) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	if params.Query == "" {
		return nil
	}
	if _, ok := g.docs.Get(ctx, params.Query); ok {
		return nil
	}
	doc, err := parser.ParseQuery(&ast.Source{Input: params.Query})
	if err != nil {
		return nil // validation reports it
	}
	fail := func(format string, args ...any) *gqlerror.Error {
		e := gqlerror.Errorf(format, args...)
		errcode.Set(e, errcode.ValidationFailed)
		return e
	}
	if len(doc.Fragments) > maxFragments {
		return fail("the document has %d fragments: at most %d", len(doc.Fragments), maxFragments)
	}
	var sets []ast.SelectionSet
	for _, op := range doc.Operations {
		sets = append(sets, op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		sets = append(sets, f.SelectionSet)
	}
	counts := map[string]int{}
	for len(sets) > 0 {
		set := sets[len(sets)-1]
		sets = sets[:len(sets)-1]
		clear(counts)
		for _, s := range set {
			switch s := s.(type) {
			case *ast.Field:
				name := s.Alias
				if name == "" {
					name = s.Name
				}
				if counts[name]++; counts[name] > maxSameResponseName {
					return fail("more than %d fields named %q in one selection set", maxSameResponseName, clip(name))
				}
				sets = append(sets, s.SelectionSet)
			case *ast.InlineFragment:
				sets = append(sets, s.SelectionSet)
			}
		}
	}
	return nil
}

// cachedComplexity is gqlgen's complexity limit, computed once for a
// document whose complexity its variables cannot change (no lookupLrnBulk,
// no @skip or @include, one operation): walking the document again for
// every request was a fourteenth of a lookup's cost.
type cachedComplexity struct {
	*extension.ComplexityLimit
	within graphql.Cache[struct{}] // such documents, known to be within the limit
}

func (c cachedComplexity) MutateOperationContext(ctx context.Context, rc *graphql.OperationContext) *gqlerror.Error {
	q := rc.RawQuery
	single := rc.OperationName == "" && len(rc.Doc.Operations) == 1
	if single {
		if _, ok := c.within.Get(ctx, q); ok { // fixed, as it was when added
			return nil
		}
	}
	fixed := single &&
		!strings.Contains(q, "lookupLrnBulk") && !strings.Contains(q, "@skip") && !strings.Contains(q, "@include")
	if err := c.ComplexityLimit.MutateOperationContext(ctx, rc); err != nil {
		return err
	}
	if fixed {
		c.within.Add(ctx, q, struct{}{})
	}
	return nil
}

// boundedRules returns the standard validation rules for one document,
// stopping to record errors once there are more than maxGraphQLErrors: a
// document built to conflict with itself would otherwise make tens of
// thousands, each a message formatted and kept.
func boundedRules() *rules.Rules {
	r := rules.NewDefaultRules()
	r.AddRule(shapeRule.Name, shapeRule.RuleFunc)
	n := 0 // one Rules validates one document, on one goroutine
	for name, fn := range r.GetInner() {
		r.ReplaceRule(name, func(ev *core.Events, addError core.AddErrFunc) {
			fn(ev, func(opts ...core.ErrorOption) {
				if n++; n <= maxGraphQLErrors+1 {
					addError(opts...)
				}
			})
		})
	}
	return r
}

// graphqlRequest is the body of POST /graphql, and the parameters of GET.
type graphqlRequest struct {
	Query         *string        `json:"query"`
	OperationName *string        `json:"operationName"`
	Variables     map[string]any `json:"variables"`
	Extensions    map[string]any `json:"extensions"`

	// apq is the hash of the usual extensions, {"persistedQuery":
	// {"version": 1, "sha256Hash": apq}}, which decodeGraphQLFast does not
	// make into maps; Extensions is nil then.
	apq string
	// vars are the variables as decodeGraphQLFast reads them, when
	// varsSet, in their order (a name twice: the later wins); Variables is
	// nil then.
	vars    []gqlVar
	varsSet bool
}

// gqlVar is one variable of a request, as decodeGraphQLFast reads it.
type gqlVar struct {
	name string
	kind byte // varNull, varString, varBool, or varOther (another JSON type)
	s    string
	b    bool
}

const (
	varNull byte = iota
	varString
	varBool
	varOther
)

// variables returns the request's variables, as encoding/json decodes
// them.
func (r *graphqlRequest) variables() map[string]any {
	if !r.varsSet {
		return r.Variables
	}
	m := make(map[string]any, len(r.vars))
	for _, v := range r.vars {
		switch v.kind {
		case varString:
			m[v.name] = v.s
		case varBool:
			m[v.name] = v.b
		default:
			m[v.name] = nil
		}
	}
	return m
}

// variable returns the variable name, and whether the request has it.
func (r *graphqlRequest) variable(name string) (gqlVar, bool) {
	if !r.varsSet {
		v, has := r.Variables[name]
		if !has {
			return gqlVar{}, false
		}
		switch v := v.(type) {
		case nil:
			return gqlVar{name: name, kind: varNull}, true
		case string:
			return gqlVar{name: name, kind: varString, s: v}, true
		case bool:
			return gqlVar{name: name, kind: varBool, b: v}, true
		}
		return gqlVar{name: name, kind: varOther}, true
	}
	for i := len(r.vars) - 1; i >= 0; i-- {
		if r.vars[i].name == name {
			return r.vars[i], true
		}
	}
	return gqlVar{}, false
}

// extensions returns the request's extensions, as encoding/json decodes
// them.
func (r *graphqlRequest) extensions() map[string]any {
	if r.apq == "" {
		return r.Extensions
	}
	return map[string]any{"persistedQuery": map[string]any{"version": float64(1), "sha256Hash": r.apq}}
}

var (
	errNoQuery      = invalidRequest("query is required")
	errGetMutation  = &apiError{http.StatusMethodNotAllowed, errorBody{"Method not allowed", CodeMethodNotAllowed, "GET runs queries only; send other operations with POST"}}
	errBadGetParams = invalidRequest("variables and extensions must be JSON objects")
)

// The media types of GraphQL over HTTP: application/graphql-response+json
// when the client accepts it, else application/json.
const mediaGraphQLResponse = "application/graphql-response+json"

var hdrGraphQLResponse = []string{mediaGraphQLResponse + "; charset=utf-8"}

// graphql answers POST and GET /graphql.
func (h *Handler) graphql(w *recorder, r *http.Request) {
	key, ok := h.authenticate(w, r)
	if !ok {
		return
	}
	st := gqlStates.get()
	*st = gqlState{key: key, rec: w, data: st.data[:0], req: graphqlRequest{vars: st.req.vars[:0]}}
	defer gqlStates.put(st) // the answer is written then: nothing holds st or its data
	req := &st.req
	if r.Method == http.MethodGet {
		q := r.URL.Query()
		if v, ok := q["query"]; ok {
			req.Query = &v[0]
		}
		if v := q.Get("operationName"); v != "" {
			req.OperationName = &v
		}
		for _, p := range []struct {
			name string
			dst  *map[string]any
		}{{"variables", &req.Variables}, {"extensions", &req.Extensions}} {
			if v := q.Get(p.name); v != "" {
				if err := json.Unmarshal([]byte(v), p.dst); err != nil {
					h.refuse(w, r, key, errBadGetParams)
					return
				}
			}
		}
	} else if e := decodeBody(w, r, req); e != nil {
		h.refuse(w, r, key, e)
		return
	}
	if req.Query == nil && req.apq == "" && req.Extensions["persistedQuery"] == nil {
		h.refuse(w, r, key, errNoQuery)
		return
	}
	if h.tables.DB() == nil {
		h.refuse(w, r, key, errUnavailable)
		return
	}
	gqlMedia := acceptsGraphQLResponse(header(r.Header, "Accept"))
	params := &st.params
	*params = graphql.RawParams{Extensions: req.Extensions}
	if req.Query != nil {
		params.Query = *req.Query
	}
	if req.apq != "" {
		// Apollo's usual request, a known hash without its query, as
		// persistedQueries answers it; anything else is gqlgen's.
		if q, ok := h.apq.Get(r.Context(), req.apq); ok && req.Query == nil {
			params.Query = q
		} else {
			params.Extensions = req.extensions()
		}
	}
	if req.OperationName != nil {
		params.OperationName = *req.OperationName
	}
	place, ok := h.inflight.acquire(w, r, key)
	if !ok {
		return
	}
	defer h.inflight.release(place)

	if p, roots := h.planned(r.Context(), st, params); p != nil {
		// A document lrnOperation answered before, with variables gqlgen
		// would take as they are: its lookups, as lrnOperation makes them.
		if !h.allowGraphQL(w, r, key, len(roots), gqlMedia) {
			return
		}
		st.singles = len(roots)
		st.lookups.Add(int32(len(roots)))
		data := p.q.appendRoots(r.Context(), st, roots)
		if gqlMedia {
			w.Header()["Content-Type"] = hdrGraphQLResponse
		}
		writeGraphQL(w, http.StatusOK, &graphql.Response{Data: data})
		return
	}
	params.Variables = req.variables()
	ctx := context.WithValue(r.Context(), gqlStateKey{}, st)
	ctx = graphql.StartOperationTrace(ctx)
	var errs gqlerror.List
	var rc *graphql.OperationContext
	if len(params.Query) > maxGraphQLQueryBytes {
		errs = gqlerror.List{gqlerror.Errorf("the query is longer than %d bytes", maxGraphQLQueryBytes)}
	} else {
		rc, errs = h.gql.CreateOperationContext(ctx, params)
	}
	if errs == nil && r.Method == http.MethodGet && rc.Operation.Operation != ast.Query {
		w.Header()["Allow"] = hdrPost
		h.refuse(w, r, key, errGetMutation)
		return
	}
	cost := 1
	if errs == nil {
		st.singles, st.bulk = countLookups(rc)
		cost = max(1, min(st.singles, MaxGraphQLLookups)+min(st.bulk, MaxBulkNumbers))
	}
	if !h.allowGraphQL(w, r, key, cost, gqlMedia) {
		return
	}
	var resp *graphql.Response
	status := http.StatusOK
	if errs != nil {
		resp = h.gql.DispatchError(graphql.WithOperationContext(ctx, rc), errs)
		if gqlMedia {
			// GraphQL over HTTP: a document that cannot run is a 400 in
			// the new media type (application/json keeps 200).
			status = http.StatusBadRequest
		}
	} else {
		handler, rctx := h.gql.DispatchOperation(ctx, rc)
		if resp = handler(rctx); resp == nil {
			return // gqlgen answers nothing once the client is gone
		}
	}
	boundErrors(resp)
	if gqlMedia {
		w.Header()["Content-Type"] = hdrGraphQLResponse
	}
	writeGraphQL(w, status, resp)
}

// allowGraphQL is allowLookups for a GraphQL request of n lookups: one of
// more lookups than its key may make in a whole window is answered as a
// document that cannot run (200, or 400 in the GraphQL-over-HTTP media
// type), its error's extensions holding BULK_EXCEEDS_RATE_LIMIT, the limit
// and the request's lookups; it counts one, as any refused request does.
func (h *Handler) allowGraphQL(w *recorder, r *http.Request, key auth.Key, n int, gqlMedia bool) bool {
	limit := h.keyLimit(key)
	if n <= limit {
		return h.allow(w, r, key, n)
	}
	if !h.allow(w, r, key, 1) {
		return false
	}
	e := exceedsLimit(n, limit, h.window)
	status := http.StatusOK
	if gqlMedia {
		status = http.StatusBadRequest
		w.Header()["Content-Type"] = hdrGraphQLResponse
	}
	writeGraphQL(w, status, &graphql.Response{Errors: gqlerror.List{{
		Message: e.body.Details,
		Extensions: map[string]any{"code": e.body.Code, "details": e.body.Details,
			"limit": limit, "lookups": n},
	}}})
	return false
}

// boundErrors keeps the first maxGraphQLErrors errors, clipped, and says
// how many more there were; it names the variable an error is about in
// JSON's words, not Go's.
func boundErrors(resp *graphql.Response) {
	if len(resp.Errors) > maxGraphQLErrors {
		resp.Errors = append(resp.Errors[:maxGraphQLErrors:maxGraphQLErrors],
			&gqlerror.Error{Message: fmt.Sprintf("further errors not shown: at most %d are reported", maxGraphQLErrors)})
	}
	for _, e := range resp.Errors {
		if len(e.Message) > maxErrorMessage {
			e.Message = clip(e.Message[:maxErrorMessage])
		}
		if len(e.Path) >= 2 && e.Path[0] == ast.PathName("variable") {
			e.Message = variableMessage(e.Path, e.Message)
		}
	}
}

// goKinds are the Go kinds gqlparser names when a variable's JSON value has
// the wrong type, and what JSON calls them.
var goKinds = map[string]string{
	"map": "an object", "slice": "an array", "float64": "a number", "string": "a string", "bool": "a boolean",
}

// variableMessage rewrites gqlparser's message about a variable
// ("cannot use float64 as String") to name the variable and the JSON type.
func variableMessage(path ast.Path, msg string) string {
	if rest, ok := strings.CutPrefix(msg, "cannot use "); ok {
		if kind, typ, ok := strings.Cut(rest, " as "); ok {
			if k, ok := goKinds[kind]; ok {
				msg = "cannot use " + k + " as " + typ
			}
		}
	}
	var name strings.Builder
	name.WriteString("variable $")
	for i, p := range path[1:] {
		switch p := p.(type) {
		case ast.PathName:
			if i > 0 {
				name.WriteByte('.')
			}
			name.WriteString(string(p))
		case ast.PathIndex:
			fmt.Fprintf(&name, "[%d]", int(p))
		}
	}
	return name.String() + ": " + msg
}

// writeGraphQL writes a GraphQL response with status; it keeps a
// Content-Type already set.
func writeGraphQL(w *recorder, status int, resp *graphql.Response) {
	ct, set := w.Header()["Content-Type"]
	j := jsonBufs.Get().(*jsonBuf)
	j.b.Reset()
	if len(resp.Errors) == 0 && len(resp.Extensions) == 0 && len(resp.Data) > 0 {
		// The usual answer, written as newJSONEncoder would write it
		// without decoding and re-encoding the data: gqlgen's output is
		// compact already, and a raw message is not escaped further.
		j.b.WriteString(`{"data":`)
		j.b.Write(resp.Data)
		j.b.WriteString("}\n")
	} else if err := j.enc.Encode(&gqlWire{resp.Errors, resp.Data, resp.Extensions}); err != nil {
		j.b.Reset()
		_ = j.enc.Encode(&errInternal.body)
		status, set = errInternal.status, false
	}
	if !set {
		ct = hdrJSON
	}
	writeBufferedAs(w, status, j, ct)
}

// gqlWire is a GraphQL response as it goes out: without data when the
// document did not run (GraphQL spec, Response format).
type gqlWire struct {
	Errors     gqlerror.List   `json:"errors,omitempty"`
	Data       json.RawMessage `json:"data,omitempty"`
	Extensions map[string]any  `json:"extensions,omitempty"`
}

// acceptsGraphQLResponse reports whether an Accept header names
// application/graphql-response+json (with a q above 0).
func acceptsGraphQLResponse(accept string) bool {
	if !strings.Contains(accept, mediaGraphQLResponse) {
		return false
	}
	for part := range strings.SplitSeq(accept, ",") {
		mt, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(mt) != mediaGraphQLResponse {
			continue
		}
		for p := range strings.SplitSeq(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.TrimSpace(k) == "q" && strings.Trim(strings.TrimSpace(v), "0.") == "" {
				return false
			}
		}
		return true
	}
	return false
}

// countLookups returns the operation's single lookups and the numbers its
// bulk lookups ask, as its top-level fields say after @skip and @include.
func countLookups(rc *graphql.OperationContext) (singles, bulk int) {
	fields := rc.Operation.SelectionSet
	plain := true // fields only, no directives: nothing to collect
	for _, s := range fields {
		if f, ok := s.(*ast.Field); !ok || len(f.Directives) > 0 {
			plain = false
			break
		}
	}
	if !plain {
		fields = fields[:0:0]
		for _, f := range graphql.CollectFields(rc, rc.Operation.SelectionSet, []string{"Query"}) {
			fields = append(fields, f.Field)
		}
	}
	for i, s := range fields {
		f := s.(*ast.Field)
		if plain && mergedEarlier(fields[:i], f) {
			continue // one field, executed once
		}
		switch f.Name {
		case "lookupLrn", "lookupCnam", "lookupMessagingProvider", "lookupTrust":
			singles++
		case "lookupLrnBulk":
			if l, ok := f.ArgumentMap(rc.Variables)["phoneNumbers"].([]any); ok {
				bulk += len(l)
			}
		}
	}
	return singles, bulk
}

// mergedEarlier reports whether a field of earlier has f's response name:
// the executor merges them into one.
func mergedEarlier(earlier ast.SelectionSet, f *ast.Field) bool {
	for _, s := range earlier {
		if s.(*ast.Field).Alias == f.Alias {
			return true
		}
	}
	return false
}

// gqlState is what the resolvers of one request share.
type gqlState struct {
	key           auth.Key
	rec           *recorder // the response, which holds the lookups' payments
	singles, bulk int       // what the request asks, as counted before it runs
	lookups       atomic.Int32
	bulkNumbers   atomic.Int32
	req           graphqlRequest             // the request's body,
	params        graphql.RawParams          // and what gqlgen is given
	roots         [MaxGraphQLLookups]lrnRoot // lrnOperation's scratch,
	answer        lrnJSON                    // its first answer
	data          []byte                     // and the answer's JSON
}

// maxPooledVars bounds the variables a pooled request state keeps room for.
const maxPooledVars = 64

// gqlStates are pooled: a request's state, with lrnOperation's scratch,
// is a kilobyte and more.
var gqlStates = newStatePool(func(st *gqlState) bool {
	if cap(st.data) > maxPooledJSON || cap(st.req.vars) > maxPooledVars {
		return false
	}
	clear(st.req.vars[:cap(st.req.vars)]) // the request's strings
	*st = gqlState{data: st.data[:0], req: graphqlRequest{vars: st.req.vars[:0]}}
	return true
})

type gqlStateKey struct{}

var (
	errTooManyLookups = fmt.Errorf("too many lookups in one request: at most %d", MaxGraphQLLookups)
	errTooManyNumbers = fmt.Errorf("too many numbers in one request: at most %d", MaxBulkNumbers)
	errNoNumbers      = errors.New("phoneNumbers must hold at least one number")
)

// MaxBulkNumbers is the most numbers one bulk lookup, REST or GraphQL, may
// ask.
const MaxBulkNumbers = 1000
