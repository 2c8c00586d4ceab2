package httpapi

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/graph-gophers/graphql-go"
	gqlerrors "github.com/graph-gophers/graphql-go/errors"
	gqllog "github.com/graph-gophers/graphql-go/log"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cnam"
	"github.com/lnpdb/lnpdb/internal/nanp"
	"github.com/lnpdb/lnpdb/lrn"
	"github.com/lnpdb/lnpdb/messaging"
	"github.com/lnpdb/lnpdb/trust"
)

//go:embed schema.graphql
var schemaText string

// Schema returns the GraphQL schema (SDL) that POST /graphql serves.
func Schema() string { return schemaText }

// Limits on one GraphQL request, on top of MaxBodyBytes.
const (
	// MaxGraphQLLookups is the most lookups (top-level fields, aliases
	// included) one request may make; the rest answer null with an error.
	MaxGraphQLLookups = 10
	// maxGraphQLDepth admits the introspection queries of common tools
	// (depth 13 to 16) and nothing much deeper; lookups nest at most 3 deep.
	maxGraphQLDepth = 20
	// maxGraphQLSelections bounds the fields an operation expands to once
	// fragments are spread; the introspection query needs a few hundred.
	maxGraphQLSelections = 2000
	maxGraphQLQueryBytes = 16 << 10
	maxGraphQLOverlaps   = 10000
)

func (h *Handler) newSchema() (*graphql.Schema, error) {
	s, err := graphql.ParseSchema(schemaText, &gqlQuery{h: h},
		graphql.UseStringDescriptions(),
		graphql.UseFieldResolvers(),
		graphql.MaxDepth(maxGraphQLDepth),
		graphql.MaxSelections(maxGraphQLSelections),
		graphql.MaxQueryLength(maxGraphQLQueryBytes),
		graphql.OverlapValidationLimit(maxGraphQLOverlaps),
		graphql.MaxParallelism(MaxGraphQLLookups),
		graphql.Logger(gqllog.LoggerFunc(func(ctx context.Context, v any) {
			h.log.LogAttrs(ctx, slog.LevelError, "panic in GraphQL resolver",
				slog.String("panic", fmt.Sprint(v)), slog.String("stack", string(debug.Stack())))
		})),
		graphql.PanicHandler(panicHandler{}),
	)
	if err != nil {
		return nil, fmt.Errorf("httpapi: schema.graphql: %w", err)
	}
	return s, nil
}

// panicHandler answers a resolver's panic (already logged) without
// revealing anything of it.
type panicHandler struct{}

func (panicHandler) MakePanicError(context.Context, any) *gqlerrors.QueryError {
	return &gqlerrors.QueryError{Message: "internal server error"}
}

// graphqlRequest is the body of POST /graphql.
type graphqlRequest struct {
	Query         *string        `json:"query"`
	OperationName *string        `json:"operationName"`
	Variables     map[string]any `json:"variables"`
}

var errNoQuery = invalidRequest("query is required")

func (h *Handler) graphql(w *recorder, r *http.Request) {
	key, ok := h.authorize(w, r)
	if !ok {
		return
	}
	var req graphqlRequest
	if e := decodeBody(w, r, &req); e != nil {
		writeError(w, e)
		return
	}
	if req.Query == nil {
		writeError(w, errNoQuery)
		return
	}
	if h.tables.DB() == nil {
		writeError(w, errUnavailable)
		return
	}
	var op string
	if req.OperationName != nil {
		op = *req.OperationName
	}
	st := &gqlState{key: key}
	res := h.schema.Exec(context.WithValue(r.Context(), gqlStateKey{}, st), *req.Query, op, req.Variables)
	res.Errors = append(res.Errors, st.errs...)
	writeJSON(w, http.StatusOK, res)
}

// gqlState is what the resolvers of one request share.
type gqlState struct {
	key     Key
	lookups atomic.Int32
	mu      sync.Mutex
	errs    []*gqlerrors.QueryError // lookups' failures the response's errors report
}

type gqlStateKey struct{}

var errTooManyLookups = fmt.Errorf("too many lookups in one request: at most %d", MaxGraphQLLookups)

// gqlQuery resolves the Query type.
type gqlQuery struct{ h *Handler }

// start counts a lookup against the request's budget.
func (q *gqlQuery) start(ctx context.Context) (*gqlState, error) {
	st, _ := ctx.Value(gqlStateKey{}).(*gqlState)
	if st == nil {
		return nil, errors.New("no request state")
	}
	if st.lookups.Add(1) > MaxGraphQLLookups {
		return nil, errTooManyLookups
	}
	return st, nil
}

// outcome charges an answered lookup and returns the failure text of an
// unanswered one, or nil.
func (q *gqlQuery) outcome(ctx context.Context, st *gqlState, kind, charge string, err error) *string {
	if err == nil {
		err = q.h.charge(ctx, st.key, charge)
	}
	e := q.h.lookupError(ctx, kind, err)
	if e == nil {
		return nil
	}
	if e.body.Code == CodeInsufficientBalance {
		// The lookup's success: false says it failed; the response's
		// errors say why, with the code, as REST's 402 does.
		st.mu.Lock()
		st.errs = append(st.errs, &gqlerrors.QueryError{Message: e.body.Error,
			Extensions: map[string]any{"code": e.body.Code, "details": e.body.Details}})
		st.mu.Unlock()
	}
	return &e.body.Error
}

// canonical returns number's canonical form, or nil when it is no number:
// what phoneNumber echoes when a lookup fails.
func canonical(number string) *string {
	n, _, err := nanp.Parse(number)
	if err != nil {
		return nil
	}
	s := n.String()
	return &s
}

type phoneArgs struct {
	PhoneNumber string
}

type lrnArgs struct {
	PhoneNumber        string
	IncludeEnhancedLrn *bool
	IncludeMessaging   *bool
}

// LookupLrn resolves Query.lookupLrn.
func (q *gqlQuery) LookupLrn(ctx context.Context, args lrnArgs) (*gqlLRN, error) {
	st, err := q.start(ctx)
	if err != nil {
		return nil, err
	}
	r := &gqlLRN{
		enhanced:  args.IncludeEnhancedLrn != nil && *args.IncludeEnhancedLrn,
		messaging: args.IncludeMessaging != nil && *args.IncludeMessaging,
	}
	opt := lrn.Options{
		// The simple form's carrier comes from the enhanced data.
		Enhanced:  r.enhanced || graphql.HasSelectedField(ctx, "carrier"),
		Messaging: r.messaging,
	}
	err = lnpdb.ErrClosed // a table swapped out since the request began
	if db := q.h.tables.DB(); db != nil {
		r.res, err = lrn.Lookup(db, args.PhoneNumber, opt)
	}
	if r.fail = q.outcome(ctx, st, kindLRN, lrnCharge(r.enhanced, r.messaging), err); r.fail != nil {
		r.res = lrn.Result{}
		if p := canonical(args.PhoneNumber); p != nil {
			r.res.PhoneNumber = *p
		}
	}
	return r, nil
}

// gqlLRN resolves LrnResult.
type gqlLRN struct {
	res                 lrn.Result
	enhanced, messaging bool
	fail                *string
}

func (r *gqlLRN) PhoneNumber() *string { return optional(r.res.PhoneNumber) }
func (r *gqlLRN) Lrn() *string         { return r.answer(&r.res.LRN) }
func (r *gqlLRN) Carrier() *string     { return r.answer(&r.res.Enhanced.Carrier) }
func (r *gqlLRN) Success() bool        { return r.fail == nil }
func (r *gqlLRN) Error() *string       { return r.fail }

func (r *gqlLRN) LrnActivatedAt() *string {
	if r.fail != nil || r.res.ActivatedAt.IsZero() {
		return nil
	}
	s := r.res.ActivatedAt.String()
	return &s
}

func (r *gqlLRN) EnhancedLrnData() *lrn.Enhanced {
	if r.fail != nil || !r.enhanced {
		return nil
	}
	return &r.res.Enhanced
}

func (r *gqlLRN) Messaging() *messaging.Info {
	if r.fail != nil || !r.messaging {
		return nil
	}
	return &r.res.Messaging
}

func (r *gqlLRN) answer(s *string) *string {
	if r.fail != nil {
		return nil
	}
	return s
}

// LookupCnam resolves Query.lookupCnam.
func (q *gqlQuery) LookupCnam(ctx context.Context, args phoneArgs) (*gqlCNAM, error) {
	st, err := q.start(ctx)
	if err != nil {
		return nil, err
	}
	r := new(gqlCNAM)
	err = lnpdb.ErrClosed
	if db := q.h.tables.DB(); db != nil {
		r.res, err = cnam.Lookup(db, args.PhoneNumber)
	}
	if r.fail = q.outcome(ctx, st, kindCNAM, kindCNAM, err); r.fail != nil {
		r.res = cnam.Result{}
		r.phone = canonical(args.PhoneNumber)
	} else {
		r.phone = &r.res.PhoneNumber
	}
	return r, nil
}

// gqlCNAM resolves CnamResult.
type gqlCNAM struct {
	res   cnam.Result
	phone *string
	fail  *string
}

func (r *gqlCNAM) PhoneNumber() *string { return r.phone }
func (r *gqlCNAM) Success() bool        { return r.fail == nil }
func (r *gqlCNAM) Error() *string       { return r.fail }

func (r *gqlCNAM) Cnam() *string {
	if r.fail != nil {
		return nil
	}
	return &r.res.CNAM
}

// LookupMessagingProvider resolves Query.lookupMessagingProvider.
func (q *gqlQuery) LookupMessagingProvider(ctx context.Context, args phoneArgs) (*gqlMessaging, error) {
	st, err := q.start(ctx)
	if err != nil {
		return nil, err
	}
	r := new(gqlMessaging)
	err = lnpdb.ErrClosed
	if db := q.h.tables.DB(); db != nil {
		r.res, err = messaging.Lookup(db, args.PhoneNumber)
	}
	if r.fail = q.outcome(ctx, st, kindMessaging, kindMessaging, err); r.fail != nil {
		r.res = messaging.Result{}
		r.phone = canonical(args.PhoneNumber)
	} else {
		r.phone = &r.res.PhoneNumber
	}
	return r, nil
}

// gqlMessaging resolves MessagingProviderResult.
type gqlMessaging struct {
	res   messaging.Result
	phone *string
	fail  *string
}

func (r *gqlMessaging) PhoneNumber() *string          { return r.phone }
func (r *gqlMessaging) MessagingProvider() *string    { return r.answer(&r.res.Provider) }
func (r *gqlMessaging) MessagingCountry() *string     { return r.answer(&r.res.Country) }
func (r *gqlMessaging) MessagingCountryCode() *string { return r.answer(&r.res.CountryCode) }
func (r *gqlMessaging) ReferenceID() *string          { return r.answer(&r.res.ReferenceID) }
func (r *gqlMessaging) Success() bool                 { return r.fail == nil }
func (r *gqlMessaging) Error() *string                { return r.fail }

func (r *gqlMessaging) MessagingEnabled() *bool {
	if r.fail != nil {
		return nil
	}
	return &r.res.Enabled
}

func (r *gqlMessaging) answer(s *string) *string {
	if r.fail != nil {
		return nil
	}
	return s
}

// LookupTrust resolves Query.lookupTrust.
func (q *gqlQuery) LookupTrust(ctx context.Context, args phoneArgs) (*gqlTrust, error) {
	st, err := q.start(ctx)
	if err != nil {
		return nil, err
	}
	r := new(gqlTrust)
	err = lnpdb.ErrClosed
	if db := q.h.tables.DB(); db != nil {
		r.res, err = trust.Lookup(db, args.PhoneNumber, trust.Options{Now: q.h.now()})
	}
	if r.fail = q.outcome(ctx, st, kindTrust, kindTrust, err); r.fail != nil {
		r.res = trust.Result{}
		r.phone = canonical(args.PhoneNumber)
	} else {
		r.phone = &r.res.PhoneNumber
	}
	return r, nil
}

// gqlTrust resolves TrustResult.
type gqlTrust struct {
	res   trust.Result
	phone *string
	fail  *string
}

func (r *gqlTrust) PhoneNumber() *string { return r.phone }
func (r *gqlTrust) Success() bool        { return r.fail == nil }
func (r *gqlTrust) Error() *string       { return r.fail }

func (r *gqlTrust) TrustScore() *int32 {
	if r.fail != nil {
		return nil
	}
	v := int32(r.res.Score)
	return &v
}

func (r *gqlTrust) ComplaintCount() *int32 {
	if r.fail != nil {
		return nil
	}
	v := int32(min(r.res.Complaints, 1<<31-1))
	return &v
}

func (r *gqlTrust) TrustLevel() *string    { return r.answer(&r.res.Level) }
func (r *gqlTrust) SpamType() *string      { return r.answer(&r.res.SpamType) }
func (r *gqlTrust) FirstReported() *string { return optional(r.res.FirstReported.String()) }
func (r *gqlTrust) LastReported() *string  { return optional(r.res.LastReported.String()) }

func (r *gqlTrust) Reasons() *[]string {
	if r.fail != nil {
		return nil
	}
	return &r.res.Reasons
}

func (r *gqlTrust) answer(s *string) *string {
	if r.fail != nil {
		return nil
	}
	return s
}

// optional returns nil for "", else a pointer to s.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
