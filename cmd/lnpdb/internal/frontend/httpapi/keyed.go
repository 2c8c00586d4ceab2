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

// AnswerJob answers numbers as the single-number REST endpoint of kind
// (lrn, cnam, messaging or trust; enhanced and msg are the LRN options)
// would, each answer on its own: lines[i] is the body that endpoint
// answers for numbers[i] (a success body, or the error body of an
// invalid or unknown number), without the final new line, and
// answered[i] says it is a success, which is charged. The lines share
// one buffer. The bodies are [AppendAnswers]'s, counted in the metrics
// and logged as the endpoint's are.
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
	closed := false
	buf := appendAnswers(make([]byte, 0, 160*len(numbers)), db, AnswerOptions{kind, enhanced, msg, h.now()}, numbers, ends, answered,
		func(_ int, err error) *apiError {
			closed = closed || errors.Is(err, lnpdb.ErrClosed)
			return h.lookupError(ctx, kind, err)
		})
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
