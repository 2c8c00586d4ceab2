package httpapi

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cnam"
	"github.com/lnpdb/lnpdb/lrn"
	"github.com/lnpdb/lnpdb/messaging"
	"github.com/lnpdb/lnpdb/trust"
)

// KeyedHandler serves a route of another package (the lookup jobs' API)
// behind what every request of this one goes through: the key check and
// its rate limit (one request), the access log, the metrics. key is the
// caller's, authenticated.
type KeyedHandler func(w http.ResponseWriter, r *http.Request, key auth.Key)

// keyed returns the route function of fn, served at pattern. dispatch
// finds the route with ServeMux.Handler, which sets no path values: they
// are set here from the pattern's {name} segments.
func (h *Handler) keyed(pattern string, fn KeyedHandler) func(*recorder, *http.Request) {
	segs := strings.Split(patternPath(pattern), "/")
	return func(w *recorder, r *http.Request) {
		got := strings.Split(r.URL.Path, "/")
		for i, s := range segs {
			if i < len(got) && len(s) > 2 && s[0] == '{' && s[len(s)-1] == '}' {
				r.SetPathValue(s[1:len(s)-1], got[i])
			}
		}
		if key, ok := h.authorize(w, r); ok {
			fn(w, r, key)
		}
	}
}

// handleKeyed registers the keyed routes, and for each of their paths a
// catch-all answering other methods 405 with the methods it takes.
func (h *Handler) handleKeyed(keyed map[string]KeyedHandler) {
	methods := map[string][]string{}
	for _, pattern := range slices.Sorted(maps.Keys(keyed)) {
		path := patternPath(pattern)
		h.mux.handle(pattern, &route{path, h.keyed(pattern, keyed[pattern])})
		m, _, _ := strings.Cut(pattern, " ")
		if m == http.MethodGet {
			m = "GET, HEAD"
		}
		methods[path] = append(methods[path], m)
	}
	for _, path := range slices.Sorted(maps.Keys(methods)) {
		allow := strings.Join(methods[path], ", ")
		h.mux.handle(path, &route{path, notAllowed([]string{allow}, &apiError{http.StatusMethodNotAllowed, errorBody{
			"Method not allowed", CodeMethodNotAllowed, "This endpoint takes " + allow}})})
	}
}

// patternPath returns a ServeMux pattern's path: "GET /a/{id}" → "/a/{id}".
func patternPath(pattern string) string {
	if i := strings.IndexByte(pattern, ' '); i >= 0 {
		return pattern[i+1:]
	}
	return pattern
}

// WriteError writes the JSON error body {error, code, details} of every
// failure with status.
func WriteError(w http.ResponseWriter, status int, message, code, details string) {
	writeError(w, &apiError{status, errorBody{message, code, details}})
}

// WriteJSON writes v as a JSON response with status, as every answer of
// the API is written (its encoder, its headers).
func WriteJSON(w http.ResponseWriter, status int, v any) { writeJSON(w, status, v) }

// ErrNoTable is AnswerJob's failure when no table is loaded.
var ErrNoTable = errors.New("httpapi: no routing table is loaded")

// The lookup kinds of AnswerJob.
var jobLookups = map[string]bool{kindLRN: true, kindCNAM: true, kindMessaging: true, kindTrust: true}

// AnswerJob answers numbers as the single-number REST endpoint of kind
// (lrn, cnam, messaging or trust; enhanced and msg are the LRN options)
// would, each answer on its own: lines[i] is the body that endpoint
// answers for numbers[i] (a success body, or the error body of an
// invalid or unknown number), without the final new line, and
// answered[i] says it is a success, which is charged. The lines share
// one buffer. LRN numbers are looked up in batches (lrn.LookupMany).
func (h *Handler) AnswerJob(ctx context.Context, kind string, enhanced, msg bool, numbers []string) (lines [][]byte, answered []bool, err error) {
	if !jobLookups[kind] {
		return nil, nil, errors.New("httpapi: unknown lookup kind " + kind)
	}
	db := h.tables.DB()
	if db == nil {
		return nil, nil, ErrNoTable
	}
	ends := make([]int, len(numbers))
	answered = make([]bool, len(numbers))
	buf := make([]byte, 0, 160*len(numbers))
	j := jsonBufs.Get().(*jsonBuf)
	defer jsonBufs.Put(j)
	closed := false
	add := func(i int, err error, ok func([]byte) []byte) {
		closed = closed || errors.Is(err, lnpdb.ErrClosed)
		if e := h.lookupError(ctx, kind, err); e != nil {
			buf = appendErrorBody(buf, e)
		} else {
			buf = ok(buf)
			answered[i] = true
		}
		ends[i] = len(buf)
	}
	encode := func(v any) func([]byte) []byte {
		return func(b []byte) []byte {
			j.b.Reset()
			_ = j.enc.Encode(v) // plain structs: never fails
			return append(b, strings.TrimSuffix(j.b.String(), "\n")...)
		}
	}
	switch kind {
	case kindLRN:
		answers := lrn.LookupMany(db, numbers, lrn.Options{Enhanced: enhanced, Messaging: msg}, nil)
		for i := range answers {
			add(i, answers[i].Err, func(b []byte) []byte { return appendLRN(b, &answers[i].Result) })
		}
	case kindCNAM:
		var res cnam.Result
		for i, n := range numbers {
			add(i, cnam.LookupInto(db, n, cnam.Options{}, &res), encode(&res))
		}
	case kindMessaging:
		var res messaging.Result
		for i, n := range numbers {
			add(i, messaging.LookupInto(db, n, messaging.Options{}, &res), encode(&res))
		}
	case kindTrust:
		var res trust.Result
		for i, n := range numbers {
			add(i, trust.LookupInto(db, n, trust.Options{Now: h.now()}, &res), encode(&res))
		}
	}
	if closed {
		return nil, nil, ErrNoTable // swapped while answering: answer again
	}
	lines = make([][]byte, len(numbers))
	start := 0
	for i, end := range ends {
		lines[i] = buf[start:end:end]
		start = end
	}
	return lines, answered, nil
}
