package httpapi

import (
	"context"
	"io"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
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
	if fail := x.q.lookupLrn(ctx, st, &m.box, number, enhanced, withMessaging, carrier); unpaid(fail) {
		// The field context gqlgen would have made, for the error's path.
		fc := &graphql.FieldContext{Object: "Query", Field: rf.Field, IsMethod: true, IsResolver: true}
		reportUnpaid(graphql.WithFieldContext(ctx, fc), fail)
	}
	return m
}

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

var (
	jsonNull  = []byte("null")
	jsonTrue  = []byte("true")
	jsonFalse = []byte("false")
)

func (m *lrnJSON) MarshalGQL(w io.Writer) {
	o := &m.box.out
	writeObject(w, m.sel, func(w io.Writer, f *ast.Field) {
		switch f.Name {
		case "__typename":
			writeQuoted(w, "LrnResult")
		case "phoneNumber":
			writeOptional(w, o.PhoneNumber)
		case "lrn":
			writeOptional(w, o.Lrn)
		case "lrn_activated_at":
			writeOptional(w, o.LrnActivatedAt)
		case "carrier":
			writeOptional(w, o.Carrier)
		case "success":
			writeBool(w, o.Success)
		case "error":
			writeOptional(w, o.Error)
		case "code":
			writeOptional(w, o.Code)
		case "details":
			writeOptional(w, o.Details)
		case "enhanced_lrn_data":
			e := o.EnhancedLrnData
			if e == nil {
				_, _ = w.Write(jsonNull)
				return
			}
			writeObject(w, f.SelectionSet, func(w io.Writer, f *ast.Field) {
				var s string
				switch f.Name {
				case "__typename":
					s = "EnhancedLrnData"
				case "carrier":
					s = e.Carrier
				case "carrier_type":
					s = e.CarrierType
				case "city":
					s = e.City
				case "zip_code":
					s = e.ZipCode
				case "county":
					s = e.County
				case "timezone":
					s = e.Timezone
				case "state":
					s = e.State
				case "rate_center":
					s = e.RateCenter
				case "lata":
					s = e.Lata
				case "ocn":
					s = e.Ocn
				}
				writeQuoted(w, s)
			})
		case "messaging":
			d := o.Messaging
			if d == nil {
				_, _ = w.Write(jsonNull)
				return
			}
			writeObject(w, f.SelectionSet, func(w io.Writer, f *ast.Field) {
				switch f.Name {
				case "__typename":
					writeQuoted(w, "MessagingData")
				case "provider":
					writeQuoted(w, d.Provider)
				case "enabled":
					writeBool(w, d.Enabled)
				case "country":
					writeQuoted(w, d.Country)
				case "country_code":
					writeQuoted(w, d.CountryCode)
				case "reference_id":
					writeQuoted(w, d.ReferenceID)
				}
			})
		}
	})
}

// writeObject writes a JSON object of the fields of sel, each value by
// value.
func writeObject(w io.Writer, sel ast.SelectionSet, value func(io.Writer, *ast.Field)) {
	_, _ = io.WriteString(w, "{")
	for i, s := range sel {
		f := s.(*ast.Field)
		if i > 0 {
			_, _ = io.WriteString(w, ",")
		}
		writeQuoted(w, f.Alias)
		_, _ = io.WriteString(w, ":")
		value(w, f)
	}
	_, _ = io.WriteString(w, "}")
}

func writeOptional(w io.Writer, s *string) {
	if s == nil {
		_, _ = w.Write(jsonNull)
		return
	}
	writeQuoted(w, *s)
}

func writeBool(w io.Writer, b bool) {
	if b {
		_, _ = w.Write(jsonTrue)
	} else {
		_, _ = w.Write(jsonFalse)
	}
}

const hexDigits = "0123456789ABCDEF"

// writeQuoted writes s as a JSON string exactly as gqlgen's
// graphql.MarshalString does: control characters, quote and backslash
// escaped, everything else as it is.
func writeQuoted(w io.Writer, s string) {
	_, _ = io.WriteString(w, `"`)
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '\\' && c != '"' {
			continue
		}
		_, _ = io.WriteString(w, s[start:i])
		switch c {
		case '\t':
			_, _ = io.WriteString(w, `\t`)
		case '\r':
			_, _ = io.WriteString(w, `\r`)
		case '\n':
			_, _ = io.WriteString(w, `\n`)
		case '\\':
			_, _ = io.WriteString(w, `\\`)
		case '"':
			_, _ = io.WriteString(w, `\"`)
		default:
			_, _ = io.WriteString(w, `\u00`)
			_, _ = io.WriteString(w, hexDigits[c>>4:c>>4+1])
			_, _ = io.WriteString(w, hexDigits[c&0xf:c&0xf+1])
		}
		start = i + 1
	}
	_, _ = io.WriteString(w, s[start:])
	_, _ = io.WriteString(w, `"`)
}
