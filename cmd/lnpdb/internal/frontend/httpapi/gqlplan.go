package httpapi

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// lrnPlan is a document lrnOperation has answered whole — one query
// operation of lookupLrn fields, each with a response name of its own,
// variables of type String or Boolean without defaults or directives —
// kept so that a later request for the same document (its text, or its
// persisted query's hash) skips gqlgen entirely: no operation context, no
// variable coercion through reflection, no extensions, no execution.
// gqlgen parsed and validated the document, and found it within the
// complexity limit, when lrnOperation first answered it; none of that
// depends on the variables. A plan answers only when the variables are of
// the declared types and present where they must be; anything else (a
// wrong type, a missing variable, another operation name, extensions) goes
// to gqlgen, which answers with its own errors. TestGraphQLFastPathAgrees
// holds plans to gqlgen's bytes.
type lrnPlan struct {
	q     *gqlResolver
	name  string // the operation's name, or ""
	vars  ast.VariableDefinitionList
	roots []planRoot
}

// planRoot is a root field of a plan: what lrnOperation checked, and where
// its arguments come from.
type planRoot struct {
	lrnRoot // f and carrier; the arguments are bound per request
	args    []planArg
}

// planArg is one argument of a root field: a variable's value, or a
// literal's.
type planArg struct {
	name     string
	variable string // the variable's name, or "" for a literal
	literal  gqlVar
}

// compileLrnPlan returns the plan of oc's document, whose root fields
// lrnOperation has found plain (roots), or nil when the document is not one
// a plan answers as gqlgen would.
func compileLrnPlan(q *gqlResolver, oc *graphql.OperationContext, roots []lrnRoot) *lrnPlan {
	doc, op := oc.Doc, oc.Operation
	if doc == nil || len(doc.Operations) != 1 || len(doc.Fragments) > 0 || len(op.Directives) > 0 ||
		oc.RawQuery == "" || len(oc.RawQuery) > maxGraphQLQueryBytes || len(roots) > MaxGraphQLLookups {
		return nil
	}
	for _, v := range op.VariableDefinitions {
		t := v.Type
		if v.DefaultValue != nil || len(v.Directives) > 0 || t == nil || t.Elem != nil ||
			(t.NamedType != "String" && t.NamedType != "Boolean") {
			return nil
		}
	}
	p := &lrnPlan{q: q, name: op.Name, vars: op.VariableDefinitions, roots: make([]planRoot, len(roots))}
	for i, r := range roots {
		pr := planRoot{lrnRoot: lrnRoot{f: r.f, carrier: r.carrier}}
		for _, a := range r.f.Arguments {
			pa := planArg{name: a.Name}
			switch {
			case a.Value == nil:
				return nil
			case a.Value.Kind == ast.Variable:
				pa.variable = a.Value.Raw
			default:
				v, err := a.Value.Value(nil)
				if err != nil {
					return nil
				}
				switch v := v.(type) {
				case nil:
					pa.literal.kind = varNull
				case string:
					pa.literal.kind, pa.literal.s = varString, v
				case bool:
					pa.literal.kind, pa.literal.b = varBool, v
				default:
					return nil
				}
			}
			pr.args = append(pr.args, pa)
		}
		p.roots[i] = pr
	}
	return p
}

// accepts reports whether req's variables are what gqlgen's coercion
// (validator.VariableValues) lets through unchanged for the plan's
// variables: a string for String, a boolean for Boolean, null or nothing
// only where the type allows it. Variables the operation does not declare
// are ignored, as gqlgen ignores them.
func (p *lrnPlan) accepts(req *graphqlRequest) bool {
	for _, d := range p.vars {
		v, has := req.variable(d.Variable)
		if !has || v.kind == varNull {
			if d.Type.NonNull {
				return false
			}
			continue
		}
		if (d.Type.NamedType == "String") != (v.kind == varString) || (d.Type.NamedType == "Boolean") != (v.kind == varBool) {
			return false
		}
	}
	return true
}

// bind returns the plan's root fields with their arguments from req, in
// st's scratch, or false when an argument is not what lrnArguments takes.
func (p *lrnPlan) bind(st *gqlState, req *graphqlRequest) ([]lrnRoot, bool) {
	roots := st.roots[:0]
	for _, pr := range p.roots {
		r, seen := pr.lrnRoot, false
		for _, a := range pr.args {
			v := a.literal
			if a.variable != "" {
				if v, _ = req.variable(a.variable); v.kind == varOther {
					return nil, false
				} // absent reads as null, as gqlgen's Value does
			}
			switch a.name {
			case "phoneNumber":
				if v.kind != varString {
					return nil, false
				}
				r.number, seen = v.s, true
			case "includeEnhancedLrn", "includeMessaging":
				if v.kind != varBool && v.kind != varNull {
					return nil, false
				}
				if a.name == "includeEnhancedLrn" {
					r.enhanced = v.b
				} else {
					r.withMessaging = v.b
				}
			default:
				return nil, false
			}
		}
		if !seen {
			return nil, false
		}
		roots = append(roots, r)
	}
	return roots, true
}

// planned returns the plan for params and its bound root fields, when
// there is a plan and the request is one it answers: the document's one
// operation, no extensions left once the persisted query was looked up,
// variables it accepts.
func (h *Handler) planned(ctx context.Context, st *gqlState, params *graphql.RawParams) (*lrnPlan, []lrnRoot) {
	if h.plans == nil || params.Extensions != nil || params.Query == "" || h.accounts != nil {
		return nil, nil
	}
	p, ok := h.plans.Get(ctx, params.Query)
	if !ok || (params.OperationName != "" && params.OperationName != p.name) || !p.accepts(&st.req) {
		return nil, nil
	}
	roots, ok := p.bind(st, &st.req)
	if !ok {
		return nil, nil
	}
	return p, roots
}
