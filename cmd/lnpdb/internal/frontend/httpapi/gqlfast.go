package httpapi

import (
	"bytes"
	"context"
	"io"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/httpapi/graph"
)

// lrnFields is a gqlgen root-field interceptor that answers the usual
// lookupLrn — a selection of plain fields, no fragments, no directives, no
// response name twice — by writing the result's JSON from the lookup's
// answer, as gqlgen's generated code writes it, without executing each
// field: gqlgen resolves every field of a result through a field context,
// closures and a marshaler of its own, which cost ten times the lookup.
// Anything else, and a lookup the request's budget has no room for, goes to
// gqlgen's execution (next). TestGraphQLFastPathAgrees holds the two to the
// same bytes.
type lrnFields struct{ q *gqlResolver }

func (lrnFields) ExtensionName() string                   { return "LrnFields" }
func (lrnFields) Validate(graphql.ExecutableSchema) error { return nil }

func (x lrnFields) InterceptRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	rf := graphql.GetRootFieldContext(ctx)
	if rf == nil || rf.Field.Name != "lookupLrn" || rf.Field.Field == nil {
		return next(ctx)
	}
	carrier, ok := plainLrnSelection(rf.Field.Selections)
	if !ok {
		return next(ctx)
	}
	number, enhanced, withMessaging, ok := lrnArguments(rf.Field.Field, graphql.GetOperationContext(ctx).Variables)
	if !ok {
		return next(ctx)
	}
	st, _ := ctx.Value(gqlStateKey{}).(*gqlState)
	if st == nil {
		return next(ctx)
	}
	if st.lookups.Add(1) > MaxGraphQLLookups {
		st.lookups.Add(-1) // the resolver counts it again, and refuses it
		return next(ctx)
	}
	m := &lrnJSON{sel: rf.Field.Selections}
	m.box.timeLater = true
	if fail := x.q.lookupLrn(ctx, st, &m.box, number, enhanced, withMessaging, carrier); unpaid(fail) {
		// The field context gqlgen would have made, for the error's path.
		fc := &graphql.FieldContext{Object: "Query", Field: rf.Field, IsMethod: true, IsResolver: true}
		reportUnpaid(graphql.WithFieldContext(ctx, fc), fail)
	}
	return m
}

// lrnOperation is a gqlgen operation interceptor that answers, whole, a
// query made only of lookupLrn fields that lrnFields would answer (each
// with a response name of its own, at most MaxGraphQLLookups of them),
// without gqlgen's execution of the operation: its root field set,
// collection and field contexts cost as much again as the lookup. With
// accounts, where a lookup may fail for want of balance and report an
// error, and for any other operation, gqlgen executes it (next), and
// lrnFields answers the lookupLrn fields it can.
type lrnOperation struct{ q *gqlResolver }

func (lrnOperation) ExtensionName() string                   { return "LrnOperation" }
func (lrnOperation) Validate(graphql.ExecutableSchema) error { return nil }

// lrnRoot is one root field of an operation lrnOperation answers.
type lrnRoot struct {
	f                                *ast.Field
	number                           string
	enhanced, withMessaging, carrier bool
}

func (x lrnOperation) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	st, _ := ctx.Value(gqlStateKey{}).(*gqlState)
	if st == nil || x.q.h.accounts != nil || oc.Operation == nil || oc.Operation.Operation != ast.Query {
		return next(ctx)
	}
	sel := oc.Operation.SelectionSet
	if len(sel) == 0 || len(sel) > len(st.roots) {
		return next(ctx)
	}
	roots := st.roots[:0]
	for i, s := range sel {
		f, ok := s.(*ast.Field)
		if !ok || f.Name != "lookupLrn" || !plainField(sel[:i], f, lrnRootFields) {
			return next(ctx)
		}
		r := lrnRoot{f: f}
		if r.carrier, ok = plainLrnSelection(f.SelectionSet); !ok {
			return next(ctx)
		}
		if r.number, r.enhanced, r.withMessaging, ok = lrnArguments(f, oc.Variables); !ok {
			return next(ctx)
		}
		roots = append(roots, r)
	}
	if st.lookups.Add(int32(len(roots))) > MaxGraphQLLookups {
		st.lookups.Add(-int32(len(roots))) // gqlgen's execution refuses the ones over
		return next(ctx)
	}
	if x.q.h.plans != nil {
		if p := compileLrnPlan(x.q, oc, roots); p != nil {
			x.q.h.plans.Add(ctx, oc.RawQuery, p)
		}
	}
	return graphql.OneShot(&graphql.Response{Data: x.q.appendRoots(ctx, st, roots)})
}

// appendRoots makes the lookups of roots, which lrnOperation has checked
// and counted against the request's budget, and returns the operation's
// data in st.data.
func (q *gqlResolver) appendRoots(ctx context.Context, st *gqlState, roots []lrnRoot) []byte {
	b := append(st.data[:0], '{')
	m := &st.answer
	for i, r := range roots {
		if i > 0 {
			m = new(lrnJSON)
		}
		m.sel, m.box.timeLater = r.f.SelectionSet, true
		// Without accounts no lookup fails for want of balance.
		_ = q.lookupLrn(ctx, st, &m.box, r.number, r.enhanced, r.withMessaging, r.carrier)
		b = appendName(b, i, r.f)
		b = m.appendJSON(b)
	}
	b = append(b, '}')
	st.data = b // the handler's, reused once the answer is written
	return b
}

// lrnRootFields is what lrnOperation answers at the root.
var lrnRootFields = map[string]bool{"lookupLrn": false}

// lrnArguments returns lookupLrn's arguments, or false when one is not of
// the type validation let through.
func lrnArguments(f *ast.Field, vars map[string]any) (number string, enhanced, withMessaging, ok bool) {
	seen := false
	for _, a := range f.Arguments {
		v, err := a.Value.Value(vars)
		if err != nil {
			return "", false, false, false
		}
		switch a.Name {
		case "phoneNumber":
			if number, seen = v.(string); !seen {
				return "", false, false, false
			}
		case "includeEnhancedLrn", "includeMessaging":
			b, isBool := v.(bool)
			if !isBool && v != nil {
				return "", false, false, false
			}
			if a.Name == "includeEnhancedLrn" {
				enhanced = b
			} else {
				withMessaging = b
			}
		default:
			return "", false, false, false
		}
	}
	return number, enhanced, withMessaging, seen
}

// The fields of LrnResult and of its two objects, scalar or not.
var (
	lrnResultFields = map[string]bool{"phoneNumber": true, "lrn": true, "lrn_activated_at": true, "carrier": true,
		"success": true, "error": true, "code": true, "details": true, "__typename": true,
		"enhanced_lrn_data": false, "messaging": false}
	enhancedFields = map[string]bool{"carrier": true, "carrier_type": true, "city": true, "zip_code": true, "county": true,
		"timezone": true, "state": true, "rate_center": true, "lata": true, "ocn": true, "__typename": true}
	messagingFields = map[string]bool{"provider": true, "enabled": true, "country": true, "country_code": true,
		"reference_id": true, "__typename": true}
)

// plainLrnSelection reports whether sel, LrnResult's selection, is plain
// (see lrnFields), and whether it selects carrier.
func plainLrnSelection(sel ast.SelectionSet) (carrier, ok bool) {
	for i, s := range sel {
		f, isField := s.(*ast.Field)
		if !isField || !plainField(sel[:i], f, lrnResultFields) {
			return false, false
		}
		switch f.Name {
		case "carrier":
			carrier = true
		case "enhanced_lrn_data", "messaging":
			known := enhancedFields
			if f.Name == "messaging" {
				known = messagingFields
			}
			for j, s := range f.SelectionSet {
				g, isField := s.(*ast.Field)
				if !isField || !plainField(f.SelectionSet[:j], g, known) || len(g.SelectionSet) > 0 {
					return false, false
				}
			}
		}
	}
	return carrier, true
}

// plainField reports whether f, following earlier in its selection set, is
// one of known, without directives, and has a response name of its own.
func plainField(earlier ast.SelectionSet, f *ast.Field, known map[string]bool) bool {
	scalar, isKnown := known[f.Name]
	if !isKnown || len(f.Directives) > 0 || f.Alias == "" || (scalar && len(f.SelectionSet) > 0) || (!scalar && len(f.SelectionSet) == 0) {
		return false
	}
	for _, s := range earlier {
		if s.(*ast.Field).Alias == f.Alias {
			return false
		}
	}
	return true
}

// lrnJSON is one lookupLrn answer and its selection, written as gqlgen
// writes an LrnResult.
type lrnJSON struct {
	box lrnBox
	sel ast.SelectionSet
}

func (m *lrnJSON) MarshalGQL(w io.Writer) {
	if buf, ok := w.(*bytes.Buffer); ok { // as gqlgen's Exec passes it
		buf.Grow(lrnJSONSize)
		_, _ = buf.Write(m.appendJSON(buf.AvailableBuffer()))
		return
	}
	_, _ = w.Write(m.appendJSON(nil))
}

// lrnJSONSize is room for the usual answer, all of it selected.
const lrnJSONSize = 768

// appendJSON appends the result as gqlgen writes it: the fields in the
// order selected, under their response names.
func (m *lrnJSON) appendJSON(b []byte) []byte {
	o := &m.box.out
	b = append(b, '{')
	for i, s := range m.sel {
		f := s.(*ast.Field)
		b = appendName(b, i, f)
		switch f.Name {
		case "__typename":
			b = appendQuoted(b, "LrnResult")
		case "phoneNumber":
			b = appendOptional(b, o.PhoneNumber)
		case "lrn":
			b = appendOptional(b, o.Lrn)
		case "lrn_activated_at":
			// As lrnBox.set would, with no string made: the wire form
			// has nothing to escape.
			if t := m.box.res.ActivatedAt; o.Success && !t.IsZero() {
				b = append(t.AppendWire(append(b, '"')), '"')
			} else {
				b = append(b, "null"...)
			}
		case "carrier":
			b = appendOptional(b, o.Carrier)
		case "success":
			b = strconv.AppendBool(b, o.Success)
		case "error":
			b = appendOptional(b, o.Error)
		case "code":
			b = appendOptional(b, o.Code)
		case "details":
			b = appendOptional(b, o.Details)
		case "enhanced_lrn_data":
			b = appendEnhanced(b, f.SelectionSet, o.EnhancedLrnData)
		case "messaging":
			b = appendMessaging(b, f.SelectionSet, o.Messaging)
		}
	}
	return append(b, '}')
}

func appendEnhanced(b []byte, sel ast.SelectionSet, e *graph.EnhancedLrnData) []byte {
	if e == nil {
		return append(b, "null"...)
	}
	b = append(b, '{')
	for i, s := range sel {
		f := s.(*ast.Field)
		b = appendName(b, i, f)
		var v string
		switch f.Name {
		case "__typename":
			v = "EnhancedLrnData"
		case "carrier":
			v = e.Carrier
		case "carrier_type":
			v = e.CarrierType
		case "city":
			v = e.City
		case "zip_code":
			v = e.ZipCode
		case "county":
			v = e.County
		case "timezone":
			v = e.Timezone
		case "state":
			v = e.State
		case "rate_center":
			v = e.RateCenter
		case "lata":
			v = e.Lata
		case "ocn":
			v = e.Ocn
		}
		b = appendQuoted(b, v)
	}
	return append(b, '}')
}

func appendMessaging(b []byte, sel ast.SelectionSet, d *graph.MessagingData) []byte {
	if d == nil {
		return append(b, "null"...)
	}
	b = append(b, '{')
	for i, s := range sel {
		f := s.(*ast.Field)
		b = appendName(b, i, f)
		switch f.Name {
		case "__typename":
			b = appendQuoted(b, "MessagingData")
		case "provider":
			b = appendQuoted(b, d.Provider)
		case "enabled":
			b = strconv.AppendBool(b, d.Enabled)
		case "country":
			b = appendQuoted(b, d.Country)
		case "country_code":
			b = appendQuoted(b, d.CountryCode)
		case "reference_id":
			b = appendQuoted(b, d.ReferenceID)
		}
	}
	return append(b, '}')
}

// appendName appends the response name of the i-th field of an object.
func appendName(b []byte, i int, f *ast.Field) []byte {
	if i > 0 {
		b = append(b, ',')
	}
	b = appendQuoted(b, f.Alias)
	return append(b, ':')
}

func appendOptional(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendQuoted(b, *s)
}

const hexDigits = "0123456789ABCDEF"

// appendQuoted appends s as a JSON string exactly as gqlgen's
// graphql.MarshalString writes it: control characters, quote and
// backslash escaped, everything else as it is.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '\\' && c != '"' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '\t':
			b = append(b, `\t`...)
		case '\r':
			b = append(b, `\r`...)
		case '\n':
			b = append(b, `\n`...)
		case '\\':
			b = append(b, `\\`...)
		case '"':
			b = append(b, `\"`...)
		default:
			b = append(b, `\u00`...)
			b = append(b, hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
