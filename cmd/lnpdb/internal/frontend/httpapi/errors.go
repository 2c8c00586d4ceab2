package httpapi

import (
	"bytes"
	"encoding/json"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/ratelimit"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/lnpdb/lnpdb/internal/core/nanp"
)

// The error codes of CONTRACT §6, and NOT_FOUND for a path that is no
// endpoint.
const (
	CodeInvalidPhoneNumber  = "INVALID_PHONE_NUMBER"
	CodeInvalidRequest      = "INVALID_REQUEST"
	CodeMissingAPIKey       = "MISSING_API_KEY"
	CodeInvalidAPIKey       = "INVALID_API_KEY"
	CodeAccountSuspended    = "ACCOUNT_SUSPENDED"
	CodeInsufficientBalance = "INSUFFICIENT_BALANCE"
	CodeNumberNotFound      = "NUMBER_NOT_FOUND"
	CodeMethodNotAllowed    = "METHOD_NOT_ALLOWED"
	CodeRateLimitExceeded   = "RATE_LIMIT_EXCEEDED"
	// A request of more lookups than its key may make in a whole window:
	// it can never succeed, and waiting does not help.
	CodeBulkExceedsRateLimit = "BULK_EXCEEDS_RATE_LIMIT"
	CodeInternalError        = "INTERNAL_ERROR"
	CodeUnavailable          = "UNAVAILABLE"
	CodeNotFound             = "NOT_FOUND"
	// Admin API only: the disk under the table is full (507) or failing
	// (503); an Idempotency-Key sent again with another feed (422).
	CodeInsufficientStorage  = "INSUFFICIENT_STORAGE"
	CodeStorageUnavailable   = "STORAGE_UNAVAILABLE"
	CodeIdempotencyKeyReused = "IDEMPOTENCY_KEY_REUSED"
	// Admin API only: a known key that is not an admin key (403).
	CodeForbidden = "FORBIDDEN"
)

// errorBody is the body of every error response (CONTRACT §6).
type errorBody struct {
	Error   string `json:"error"`
	Code    string `json:"code"`
	Details string `json:"details"`
}

// rateLimitBody is the 429 body (CONTRACT §7): the error body plus message
// and retry_after.
type rateLimitBody struct {
	Error      string `json:"error"`
	Code       string `json:"code"`
	Message    string `json:"message"`
	RetryAfter int    `json:"retry_after"`
	Details    string `json:"details"`
}

// apiError is a failure with its status, as the handler answers it.
type apiError struct {
	status int
	body   errorBody
}

// The fixed failures. Those whose details vary are built where they arise.
var (
	errInvalidNumber = &apiError{http.StatusBadRequest, errorBody{
		"Invalid phone number format", CodeInvalidPhoneNumber,
		"Phone number must be 11 digits starting with 1"}}
	errMissingKey = &apiError{http.StatusUnauthorized, errorBody{
		"Missing API key", CodeMissingAPIKey,
		"Send the header Authorization: Bearer <API_KEY>"}}
	errInvalidKey = &apiError{http.StatusUnauthorized, errorBody{
		"Invalid API key", CodeInvalidAPIKey,
		"The API key is unknown or has been revoked"}}
	errAccountSuspended = &apiError{http.StatusForbidden, errorBody{
		"Account suspended", CodeAccountSuspended,
		"The API key is valid but its account is suspended; the account's operator can reactivate it"}}
	errInsufficientBalance = &apiError{http.StatusPaymentRequired, errorBody{
		"Insufficient balance", CodeInsufficientBalance,
		"The free tier is used up and the wallet is empty"}}
	errNumberNotFound = &apiError{http.StatusNotFound, errorBody{
		"Number not found", CodeNumberNotFound,
		"The number's NPA-NXX code is not assigned to any carrier"}}
	errMethodNotAllowed = &apiError{http.StatusMethodNotAllowed, errorBody{
		"Method not allowed", CodeMethodNotAllowed,
		"Lookups take POST"}}
	errMethodNotAllowedGraphQL = &apiError{http.StatusMethodNotAllowed, errorBody{
		"Method not allowed", CodeMethodNotAllowed,
		"GraphQL takes POST, and GET for queries"}}
	errMethodNotAllowedGet = &apiError{http.StatusMethodNotAllowed, errorBody{
		"Method not allowed", CodeMethodNotAllowed,
		"This endpoint takes GET"}}
	errInternal = &apiError{http.StatusInternalServerError, errorBody{
		"Internal server error", CodeInternalError,
		"The server failed to answer; the failure has been logged"}}
	errUnavailable = &apiError{http.StatusServiceUnavailable, errorBody{
		"Service unavailable", CodeUnavailable,
		"No routing table is loaded; retry shortly"}}
	errAccountsUnavailable = &apiError{http.StatusServiceUnavailable, errorBody{
		"Service unavailable", CodeUnavailable,
		"The accounts store cannot be reached; retry shortly"}}
	errAccountsStore = &apiError{http.StatusServiceUnavailable, errorBody{
		"Service unavailable", CodeStorageUnavailable,
		"The accounts store did not answer in time and this server's lease of the account's credit is spent; the lookup was not charged; retry shortly"}}
	errNoRoute = &apiError{http.StatusNotFound, errorBody{
		"Not found", CodeNotFound,
		"No such endpoint; see /openapi.json"}}
	errContentType = &apiError{http.StatusUnsupportedMediaType, errorBody{"Unsupported media type", CodeInvalidRequest, "Content-Type must be application/json"}}
	errTooLarge    = &apiError{http.StatusRequestEntityTooLarge, errorBody{"Request body too large", CodeInvalidRequest, "The request body is larger than 64 KiB"}}
	errReadBody    = invalidRequest("The request body could not be read")
	errNotJSON     = invalidRequest("The request body is not valid JSON")
	errNotObject   = invalidRequest("The request body must be a JSON object")
	errNoPhone     = invalidRequest("phone_number is required")
)

// invalidNumber is the answer to an invalid number: the details name the
// NANP rule it breaks when it has a number's shape (CONTRACT §1), else they
// are errInvalidNumber's.
func invalidNumber(err error) *apiError {
	rule, ok := nanp.Rule(err)
	if !ok {
		return errInvalidNumber
	}
	e := *errInvalidNumber
	e.body.Details = rule
	return &e
}

func invalidRequest(details string) *apiError {
	return &apiError{http.StatusBadRequest, errorBody{"Invalid request", CodeInvalidRequest, details}}
}

// Header values shared by every response; handlers never modify them.
var (
	hdrJSON    = []string{"application/json"}
	hdrNoSniff = []string{"nosniff"}
	hdrNoStore = []string{"no-store"}
	hdrPost    = []string{"POST"}
	hdrGet     = []string{"GET, HEAD"}
	hdrGetPost = []string{"GET, HEAD, POST"}
	hdrBearer  = []string{`Bearer realm="lnpdb"`}
)

// jsonBuf is a pooled buffer with its encoder: encoding a response then
// allocates nothing of its own. (An Encoder writing to the ResponseWriter
// could not be reused: its first write error would stick.)
type jsonBuf struct {
	b   bytes.Buffer
	enc *json.Encoder
}

var jsonBufs = sync.Pool{New: func() any {
	j := new(jsonBuf)
	j.enc = newJSONEncoder(&j.b)
	return j
}}

// maxPooledJSON keeps a rare huge response's buffer out of the pool.
const maxPooledJSON = 64 << 10

// writeJSON writes v as the JSON body of a response with status, in one
// Write; net/http sets Content-Length.
func writeJSON(w http.ResponseWriter, status int, v any) {
	j := jsonBufs.Get().(*jsonBuf)
	j.b.Reset()
	if err := j.enc.Encode(v); err != nil {
		// Only a bug gets here: every body is a plain struct.
		j.b.Reset()
		_ = j.enc.Encode(&errInternal.body)
		status = errInternal.status
	}
	writeBuffered(w, status, j)
}

// writeBuffered writes j's bytes as the JSON body of a response with status
// and returns j to the pool.
func writeBuffered(w http.ResponseWriter, status int, j *jsonBuf) {
	writeBufferedAs(w, status, j, hdrJSON)
}

// writeBufferedAs is writeBuffered with a Content-Type of its own.
func writeBufferedAs(w http.ResponseWriter, status int, j *jsonBuf, contentType []string) {
	h := w.Header()
	h["Content-Type"] = contentType
	h["X-Content-Type-Options"] = hdrNoSniff
	if rec, ok := w.(*recorder); !ok || !rec.post {
		h["Cache-Control"] = hdrNoStore
	}
	w.WriteHeader(status)
	_, _ = w.Write(j.b.Bytes()) // a write error means the client left
	if j.b.Cap() <= maxPooledJSON {
		jsonBufs.Put(j)
	}
}

func writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.status, &e.body)
}

func writeRateLimited(w http.ResponseWriter, d ratelimit.Decision) {
	secs := ratelimit.CeilSeconds(d.Reset)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeJSON(w, http.StatusTooManyRequests, &rateLimitBody{
		Error:      "Rate limit exceeded",
		Code:       CodeRateLimitExceeded,
		Message:    "Please wait before making another request",
		RetryAfter: secs,
		Details:    "This API key may make " + strconv.Itoa(d.Limit) + " lookups per window; the window resets in " + strconv.Itoa(secs) + " s",
	})
}

// exceedsLimit is the answer to a request of n lookups when its key may
// make only limit in a window of window (0: the limiter does not say): 422,
// for no wait lets it through. The details name both numbers and what to
// do.
func exceedsLimit(n, limit int, window time.Duration) *apiError {
	return &apiError{http.StatusUnprocessableEntity, errorBody{
		"Request exceeds the rate limit", CodeBulkExceedsRateLimit,
		exceedsLimitDetails(n, limit, window)}}
}

func exceedsLimitDetails(n, limit int, window time.Duration) string {
	per := "per window"
	if window > 0 {
		per = "per " + strconv.Itoa(ratelimit.CeilSeconds(window)) + " s"
	}
	return "This request makes " + strconv.Itoa(n) + " lookups; this API key may make " + strconv.Itoa(limit) +
		" lookups " + per + ", so no wait lets it through: send at most " + strconv.Itoa(limit) + " lookups (numbers of a bulk request) at once"
}
