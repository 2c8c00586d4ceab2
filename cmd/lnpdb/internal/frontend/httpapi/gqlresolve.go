package httpapi

import (
	"context"
	"errors"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/99designs/gqlgen/graphql"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/httpapi/graph"
	"github.com/lnpdb/lnpdb/cnam"
	"github.com/lnpdb/lnpdb/internal/core/nanp"
	"github.com/lnpdb/lnpdb/lrn"
	"github.com/lnpdb/lnpdb/messaging"
	"github.com/lnpdb/lnpdb/trust"
)

// gqlResolver resolves the schema's Query type (graph.ResolverRoot and
// graph.QueryResolver) with the handler's tables and accounts.
type gqlResolver struct{ h *Handler }

func (q *gqlResolver) Query() graph.QueryResolver { return q }

// start counts a single lookup against the request's budget.
func (q *gqlResolver) start(ctx context.Context) (*gqlState, error) {
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
// unanswered one, or nil; an unpaid one is for the caller to report.
func (q *gqlResolver) outcome(ctx context.Context, st *gqlState, kind, charge string, err error) *apiError {
	if err == nil {
		err = q.h.charge(ctx, st.rec, st.key, charge)
	}
	return q.h.lookupError(ctx, kind, err)
}

// unpaid reports whether a lookup failed for want of balance: the lookup's
// success: false says it failed, and the response's errors must say why.
func unpaid(e *apiError) bool { return e != nil && e.body.Code == CodeInsufficientBalance }

// reportUnpaid adds the error of an unpaid lookup to the response, with the
// code, as REST's 402 does; ctx is the field's.
func reportUnpaid(ctx context.Context, e *apiError) {
	graphql.AddError(ctx, &gqlerror.Error{Message: e.body.Error,
		Extensions: map[string]any{"code": e.body.Code, "details": e.body.Details}})
}

// outcomeIn is outcome for a resolver, whose ctx is the field's: it reports
// an unpaid lookup itself.
func (q *gqlResolver) outcomeIn(ctx context.Context, st *gqlState, kind, charge string, err error) *apiError {
	e := q.outcome(ctx, st, kind, charge, err)
	if unpaid(e) {
		reportUnpaid(ctx, e)
	}
	return e
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

// selectsCarrier reports whether the field being resolved selects carrier,
// which the simple form takes from the enhanced data.
func selectsCarrier(ctx context.Context) bool {
	for _, f := range graphql.CollectFieldsCtx(ctx, nil) {
		if f.Name == "carrier" {
			return true
		}
	}
	return false
}

// LookupLrn resolves Query.lookupLrn.
func (q *gqlResolver) LookupLrn(ctx context.Context, phoneNumber string, includeEnhanced, includeMessaging *bool) (*graph.LrnResult, error) {
	st, err := q.start(ctx)
	if err != nil {
		return nil, err
	}
	enhanced, withMessaging := isTrue(includeEnhanced), isTrue(includeMessaging)
	box := &lrnBox{}
	if fail := q.lookupLrn(ctx, st, box, phoneNumber, enhanced, withMessaging, selectsCarrier(ctx)); unpaid(fail) {
		reportUnpaid(ctx, fail)
	}
	return &box.out, nil
}

// lookupLrn answers one LRN lookup into box, charged, and returns its
// failure, or nil; carrier says whether the selection asks for it.
func (q *gqlResolver) lookupLrn(ctx context.Context, st *gqlState, box *lrnBox, phoneNumber string, enhanced, withMessaging, carrier bool) *apiError {
	opt := lrn.Options{Enhanced: enhanced || carrier, Messaging: withMessaging}
	var res lrn.Result
	err := lnpdb.ErrClosed // a table swapped out since the request began
	if db := q.h.tables.DB(); db != nil {
		err = lrn.LookupInto(db, phoneNumber, opt, &res)
	}
	// A lookup is priced by what its answer holds: the carrier comes
	// from the enhanced data, so selecting it is an enhanced lookup, as
	// REST's include_enhanced_lrn is (CONTRACT §9).
	fail := q.outcome(ctx, st, kindLRN, lrnCharge(opt.Enhanced, withMessaging), err)
	box.set(res, phoneNumber, enhanced, withMessaging, fail)
	return fail
}

// LookupLrnBulk resolves Query.lookupLrnBulk with lrn.LookupMany.
func (q *gqlResolver) LookupLrnBulk(ctx context.Context, phoneNumbers []string, includeEnhanced, includeMessaging *bool) ([]graph.LrnResult, error) {
	st, _ := ctx.Value(gqlStateKey{}).(*gqlState)
	if st == nil {
		return nil, errors.New("no request state")
	}
	if len(phoneNumbers) == 0 {
		return nil, errNoNumbers
	}
	if int(st.bulkNumbers.Add(int32(min(len(phoneNumbers), MaxBulkNumbers+1)))) > MaxBulkNumbers {
		return nil, errTooManyNumbers
	}
	enhanced, withMessaging := isTrue(includeEnhanced), isTrue(includeMessaging)
	opt := lrn.Options{Enhanced: enhanced || selectsCarrier(ctx), Messaging: withMessaging}
	answers := make([]lrn.Answer, 0, len(phoneNumbers))
	if db := q.h.tables.DB(); db != nil {
		answers = lrn.LookupMany(db, phoneNumbers, opt, answers)
	} else {
		for range phoneNumbers {
			answers = append(answers, lrn.Answer{Err: lnpdb.ErrClosed})
		}
	}
	boxes := make([]lrnBox, len(answers))
	out := make([]graph.LrnResult, len(answers))
	for i := range answers {
		boxes[i].set(answers[i].Result, phoneNumbers[i], enhanced, withMessaging, q.outcomeIn(ctx, st, kindLRN, lrnCharge(opt.Enhanced, withMessaging), answers[i].Err))
		out[i] = boxes[i].out
	}
	return out, nil
}

func isTrue(b *bool) bool { return b != nil && *b }

// lrnBox holds an LRN answer and its GraphQL form, which points into it:
// one allocation per answer.
type lrnBox struct {
	// timeLater leaves lrn_activated_at unset, for lrnJSON, which
	// writes it from res.
	timeLater bool
	res       lrn.Result
	activated string
	enhanced  graph.EnhancedLrnData
	messaging graph.MessagingData
	out       graph.LrnResult
}

func (b *lrnBox) set(res lrn.Result, number string, enhanced, withMessaging bool, fail *apiError) {
	b.res = res
	o := &b.out
	if fail != nil {
		*o = graph.LrnResult{PhoneNumber: canonical(number), Error: &fail.body.Error, Code: &fail.body.Code, Details: &fail.body.Details}
		return
	}
	r := &b.res
	*o = graph.LrnResult{
		PhoneNumber: optional(r.PhoneNumber),
		Lrn:         &r.LRN,
		Carrier:     &r.Enhanced.Carrier,
		Success:     true,
	}
	if !r.ActivatedAt.IsZero() && !b.timeLater {
		b.activated = r.ActivatedAt.String()
		o.LrnActivatedAt = &b.activated
	}
	if enhanced {
		e := &r.Enhanced
		b.enhanced = graph.EnhancedLrnData{
			Carrier: e.Carrier, CarrierType: e.CarrierType, City: e.City, ZipCode: e.ZIPCode, County: e.County,
			Timezone: e.Timezone, State: e.State, RateCenter: e.RateCenter, Lata: e.LATA, Ocn: e.OCN,
		}
		o.EnhancedLrnData = &b.enhanced
	}
	if withMessaging {
		m := &r.Messaging
		b.messaging = graph.MessagingData{Provider: m.Provider, Enabled: m.Enabled, Country: m.Country, CountryCode: m.CountryCode, ReferenceID: m.ReferenceID}
		o.Messaging = &b.messaging
	}
}

// LookupCnam resolves Query.lookupCnam.
func (q *gqlResolver) LookupCnam(ctx context.Context, phoneNumber string) (*graph.CnamResult, error) {
	st, err := q.start(ctx)
	if err != nil {
		return nil, err
	}
	var res cnam.Result
	err = lnpdb.ErrClosed
	if db := q.h.tables.DB(); db != nil {
		err = cnam.LookupInto(db, phoneNumber, cnam.Options{}, &res)
	}
	if fail := q.outcomeIn(ctx, st, kindCNAM, kindCNAM, err); fail != nil {
		return &graph.CnamResult{PhoneNumber: canonical(phoneNumber), Error: &fail.body.Error, Code: &fail.body.Code, Details: &fail.body.Details}, nil
	}
	return &graph.CnamResult{PhoneNumber: &res.PhoneNumber, Cnam: &res.CNAM, Success: true}, nil
}

// LookupMessagingProvider resolves Query.lookupMessagingProvider.
func (q *gqlResolver) LookupMessagingProvider(ctx context.Context, phoneNumber string) (*graph.MessagingProviderResult, error) {
	st, err := q.start(ctx)
	if err != nil {
		return nil, err
	}
	var res messaging.Result
	err = lnpdb.ErrClosed
	if db := q.h.tables.DB(); db != nil {
		err = messaging.LookupInto(db, phoneNumber, messaging.Options{}, &res)
	}
	if fail := q.outcomeIn(ctx, st, kindMessaging, kindMessaging, err); fail != nil {
		return &graph.MessagingProviderResult{PhoneNumber: canonical(phoneNumber), Error: &fail.body.Error, Code: &fail.body.Code, Details: &fail.body.Details}, nil
	}
	return &graph.MessagingProviderResult{
		PhoneNumber:          &res.PhoneNumber,
		MessagingProvider:    &res.Provider,
		MessagingEnabled:     &res.Enabled,
		MessagingCountry:     &res.Country,
		MessagingCountryCode: &res.CountryCode,
		ReferenceID:          &res.ReferenceID,
		Success:              true,
	}, nil
}

// LookupTrust resolves Query.lookupTrust.
func (q *gqlResolver) LookupTrust(ctx context.Context, phoneNumber string) (*graph.TrustResult, error) {
	st, err := q.start(ctx)
	if err != nil {
		return nil, err
	}
	var res trust.Result
	err = lnpdb.ErrClosed
	if db := q.h.tables.DB(); db != nil {
		err = trust.LookupInto(db, phoneNumber, trust.Options{Now: q.h.now()}, &res)
	}
	if fail := q.outcomeIn(ctx, st, kindTrust, kindTrust, err); fail != nil {
		return &graph.TrustResult{PhoneNumber: canonical(phoneNumber), Error: &fail.body.Error, Code: &fail.body.Code, Details: &fail.body.Details}, nil
	}
	score := res.Score
	complaints := int(min(res.Complaints, 1<<31-1))
	return &graph.TrustResult{
		PhoneNumber:    &res.PhoneNumber,
		TrustScore:     &score,
		TrustLevel:     &res.Level,
		SpamType:       &res.SpamType,
		ComplaintCount: &complaints,
		FirstReported:  optional(res.FirstReported.String()),
		LastReported:   optional(res.LastReported.String()),
		Reasons:        res.Reasons,
		Success:        true,
	}, nil
}

// optional returns nil for "", else a pointer to s.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
