package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/internal/ingest/feed"
	"log/slog"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// MaxBodyBytes caps a request body.
const MaxBodyBytes = 64 << 10

var bodyBufs = sync.Pool{New: func() any { return bytes.NewBuffer(make([]byte, 0, 512)) }}

// decodeBody checks that r carries a JSON body of at most MaxBodyBytes and
// decodes it into v, a pointer to a struct. Unknown fields are ignored; a
// field of the wrong type, or a body that is not one JSON object, is an
// INVALID_REQUEST.
func decodeBody(w *recorder, r *http.Request, v any) *apiError {
	if !isJSON(header(r.Header, "Content-Type")) {
		return errContentType
	}
	if r.ContentLength > MaxBodyBytes {
		return errTooLarge
	}
	buf := bodyBufs.Get().(*bytes.Buffer)
	defer bodyBufs.Put(buf)
	buf.Reset()
	// The underlying writer, so that net/http closes the connection after
	// an oversized body instead of draining it.
	_, err := buf.ReadFrom(http.MaxBytesReader(w.ResponseWriter, r.Body, MaxBodyBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return errTooLarge
		}
		return errReadBody
	}
	if decodeFast(buf.Bytes(), v) {
		return nil
	}
	switch req := v.(type) {
	case *graphqlRequest:
		if decodeGraphQLFast(buf.Bytes(), req) {
			return nil
		}
	case *bulkRequest:
		if decodeBulkFast(buf.Bytes(), req) {
			return nil
		}
	}
	if err := json.Unmarshal(buf.Bytes(), v); err != nil {
		return jsonError(err)
	}
	return nil
}

// jsonError turns an encoding/json error into the INVALID_REQUEST it means.
func jsonError(err error) *apiError {
	te, ok := errors.AsType[*json.UnmarshalTypeError](err)
	if !ok {
		return errNotJSON
	}
	if te.Field == "" {
		return errNotObject
	}
	return invalidRequest(te.Field + " must be " + kindName(te.Type) + ", not " + te.Value)
}

func kindName(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "a value"
	}
	return feed.KindName(t.Kind())
}

// isJSON reports whether a Content-Type names JSON: application/json,
// optionally with a charset parameter that must name UTF-8 (RFC 8259).
func isJSON(ct string) bool {
	switch ct {
	case "application/json", "application/json; charset=utf-8", "application/json;charset=utf-8", "application/json; charset=UTF-8":
		return true
	case "":
		return false
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return false
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return false
	}
	return true
}

// Rate-limit header values for small numbers, built once: a lookup then sets
// its three headers without allocating.
var intValues = func() (v [1025][]string) {
	for i := range v {
		v[i] = []string{strconv.Itoa(i)}
	}
	return v
}()

func intValue(n int) []string {
	if n >= 0 && n < len(intValues) {
		return intValues[n]
	}
	return []string{strconv.Itoa(n)}
}

// bearer returns the token of an Authorization: Bearer header.
func bearer(auth string) (string, bool) {
	const p = "Bearer "
	if len(auth) <= len(p) || !strings.EqualFold(auth[:len(p)], p) {
		return "", false
	}
	tok := strings.TrimSpace(auth[len(p):])
	return tok, tok != ""
}

// authorize authenticates the request's key and counts one lookup against
// the key's rate limit, setting the rate-limit headers. When it returns false
// it has written the response.
func (h *Handler) authorize(w *recorder, r *http.Request) (auth.Key, bool) {
	key, ok := h.authenticate(w, r)
	if !ok {
		return key, false
	}
	return key, h.allow(w, r, key, 1)
}

// SuspendedKeys is what a [Config.Keys] may also do: tell a key it refuses
// because its account is suspended from an unknown or revoked one. Such a
// key is answered 403 ACCOUNT_SUSPENDED, not 401: the key is right, and
// another one of the same account would fare no better.
type SuspendedKeys interface {
	Suspended(token string) bool
}

// authenticate finds the request's key. When it returns false it has written
// the response.
func (h *Handler) authenticate(w *recorder, r *http.Request) (auth.Key, bool) {
	tok, ok := bearer(header(r.Header, "Authorization"))
	if !ok {
		w.Header()["Www-Authenticate"] = hdrBearer
		writeError(w, errMissingKey)
		return auth.Key{}, false
	}
	key, ok := h.keys.Authenticate(tok)
	if !ok {
		if s, ok := h.keys.(SuspendedKeys); ok && s.Suspended(tok) {
			writeError(w, errAccountSuspended)
			return auth.Key{}, false
		}
		w.Header()["Www-Authenticate"] = hdrBearer
		writeError(w, errInvalidKey)
		return auth.Key{}, false
	}
	key.Fill()
	w.keyID = key.ID()
	return key, true
}

// allow counts n lookups of key against its rate limit and sets the
// rate-limit headers. A request whose n lookups exceed what is left is
// refused whole, none of them counted: allow then writes the 429 and
// returns false.
func (h *Handler) allow(w *recorder, r *http.Request, key auth.Key, n int) bool {
	d, err := h.limiter.AllowN(r.Context(), key.HexHash(), h.keyLimit(key), n)
	if err != nil {
		// Fail open: a routing lookup matters more than an exact count.
		h.log.LogAttrs(r.Context(), slog.LevelError, "rate limiter failed; request let through",
			slog.String("key", w.keyID), slog.String("error", err.Error()))
		if h.metrics != nil {
			h.metrics.limiterErrors.Inc()
		}
		return true
	}
	setRateLimitHeaders(w.Header(), d, h.window)
	if !d.Allowed {
		writeRateLimited(w, d)
		return false
	}
	return true
}

// keyLimit is key's budget of lookups per window.
func (h *Handler) keyLimit(key auth.Key) int {
	if key.Limit > 0 {
		return key.Limit
	}
	return h.limit
}

// allowLookups is allow for a request of n lookups that may exceed the
// key's whole budget (a bulk request): such a request is refused with
// 422 BULK_EXCEEDS_RATE_LIMIT, counting one as any refused request does,
// instead of being told to wait for a window that never holds it.
func (h *Handler) allowLookups(w *recorder, r *http.Request, key auth.Key, n int) bool {
	if limit := h.keyLimit(key); n > limit {
		h.refuse(w, r, key, exceedsLimit(n, limit, h.window))
		return false
	}
	return h.allow(w, r, key, n)
}

// refuse answers e to an authenticated request that makes no lookup; it
// still counts as one against the key's limit, so that failing requests
// are not free.
func (h *Handler) refuse(w *recorder, r *http.Request, key auth.Key, e *apiError) {
	if h.allow(w, r, key, 1) {
		writeError(w, e)
	}
}

// header is h.Get(key) for a key in canonical form, as net/http's server
// stores them: Get checks and canonicalises the key on every call, a tenth
// of a REST lookup's time in the handler.
func header(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}
