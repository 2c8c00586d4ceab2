package httpapi

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/klauspost/compress/gzhttp"
	"github.com/klauspost/compress/gzip"
)

// ConventionsConfig configures [Conventions].
type ConventionsConfig struct {
	// CORSOrigins are the origins whose browsers may call the API ("*" for
	// any); none (the default) sends no CORS headers and answers OPTIONS
	// like any other unknown method.
	CORSOrigins []string
	// TrustedProxies are the reverse proxies and load balancers in front
	// of the server, IPv4 prefixes unmapped: a request from one of them has
	// its RemoteAddr replaced with the client's address from its
	// X-Forwarded-For (clientAddr), for everything after — the access log,
	// the console's sign-in limits, the billing audit trail. None (the
	// default): the header is ignored, as a client can write anything in
	// it.
	TrustedProxies []netip.Prefix
}

// Conventions wraps the API's handler (the lookups, and the admin API when
// served beside them) with what HTTP clients rely on and the lookups need
// not know:
//
//   - responses compressed with gzip or zstd when the client asks
//     (Accept-Encoding) and the body is worth it, by gzhttp; a single
//     lookup's answer never is, and goes without gzhttp; request bodies
//     sent with Content-Encoding: gzip (bulk lookups, admin feeds) read
//     decompressed, the size limits applying to what they decompress to;
//     any other Content-Encoding is answered 415;
//   - X-Request-ID: the client's (printable ASCII, at most 128 bytes) or a
//     new one, set on the request for the access log and echoed in the
//     response;
//   - CORS for the configured origins: preflights answered 204, the
//     rate-limit and request-id headers exposed;
//   - the client's address from X-Forwarded-For, and from
//     X-Forwarded-Proto: https the request's URL.Scheme "https" (the
//     client reached the proxy over TLS), for a request that came through
//     one of the trusted proxies;
//   - 400 and the connection closed for every request of a connection that
//     carried one with both Content-Length and Transfer-Encoding (see
//     [FramingListener]).
func Conventions(next http.Handler, cfg ConventionsConfig) (http.Handler, error) {
	// The fastest level: JSON compresses well at any level, and a bulk
	// answer of 300 KB at the default level costs more than its lookups.
	gz, err := gzhttp.NewWrapper(gzhttp.AllowCompressedRequests(true), gzhttp.MinSize(gzhttp.DefaultMinSize),
		gzhttp.CompressionLevel(gzip.BestSpeed))
	if err != nil {
		return nil, fmt.Errorf("httpapi: gzip: %w", err)
	}
	c := &conventions{next: gz(next), plain: next, origins: cfg.CORSOrigins, trusted: cfg.TrustedProxies}
	c.anyOrigin = slices.Contains(cfg.CORSOrigins, "*")
	return c, nil
}

type conventions struct {
	next      http.Handler // through gzhttp
	plain     http.Handler // not: single lookups
	origins   []string
	anyOrigin bool
	trusted   []netip.Prefix
}

// Request ids this process makes: a random prefix and a counter, unique
// without a system call per request.
var (
	requestIDPrefix = func() string {
		var b [6]byte
		_, _ = rand.Read(b[:])
		return hex.EncodeToString(b[:]) + "-"
	}()
	requestIDs atomic.Uint64
)

const maxRequestID = 128

var (
	errContentEncoding = &apiError{http.StatusUnsupportedMediaType, errorBody{
		"Unsupported media type", CodeInvalidRequest,
		"Content-Encoding must be gzip or identity"}}
	hdrCORSMethods = []string{"GET, HEAD, POST, OPTIONS"}
	hdrCORSHeaders = []string{"Authorization, Content-Type, Content-Encoding, X-Request-ID"}
	hdrCORSExpose  = []string{"X-Request-ID, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, RateLimit, RateLimit-Policy, Retry-After"}
	hdrCORSMaxAge  = []string{"600"}
	hdrVaryOrigin  = "Origin"
)

func (c *conventions) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if ambiguousFraming(r) {
		w.Header()["Connection"] = []string{"close"} // net/http closes after the answer
		writeError(w, errAmbiguousFraming)
		return
	}
	if len(c.trusted) > 0 {
		if forwardedHTTPS(r, c.trusted) {
			r.URL.Scheme = "https"
		}
		if xff := r.Header["X-Forwarded-For"]; len(xff) > 0 {
			r.RemoteAddr = clientAddr(r.RemoteAddr, xff, c.trusted)
		}
	}
	id := header(r.Header, "X-Request-Id")
	if !validRequestID(id) {
		id = requestIDPrefix + strconv.FormatUint(requestIDs.Add(1), 36)
		r.Header["X-Request-Id"] = []string{id}
	}
	hd := w.Header()
	hd["X-Request-Id"] = r.Header["X-Request-Id"]

	if len(c.origins) > 0 {
		if origin := header(r.Header, "Origin"); origin != "" {
			hd.Add("Vary", hdrVaryOrigin)
			if c.anyOrigin || slices.Contains(c.origins, origin) {
				if c.anyOrigin {
					hd["Access-Control-Allow-Origin"] = []string{"*"}
				} else {
					hd["Access-Control-Allow-Origin"] = []string{origin}
				}
				hd["Access-Control-Expose-Headers"] = hdrCORSExpose
				if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
					hd["Access-Control-Allow-Methods"] = hdrCORSMethods
					hd["Access-Control-Allow-Headers"] = hdrCORSHeaders
					hd["Access-Control-Max-Age"] = hdrCORSMaxAge
					w.WriteHeader(http.StatusNoContent)
					return
				}
			}
		}
	}
	ce := header(r.Header, "Content-Encoding")
	if ce != "" && !strings.EqualFold(ce, "gzip") && !strings.EqualFold(ce, "identity") {
		writeError(w, errContentEncoding)
		return
	}
	if ce == "" && r.Method == http.MethodPost && singleLookup(r.URL.Path) {
		// The answer to one lookup, or its error, is a few hundred bytes,
		// under what gzhttp compresses (gzhttp.DefaultMinSize): it is the
		// same whatever the Accept-Encoding, so it goes without gzhttp's
		// wrapper and without a Vary that would say otherwise.
		c.plain.ServeHTTP(w, r)
		return
	}
	c.next.ServeHTTP(w, r)
}

// singleLookup reports whether path is an endpoint answering one lookup.
func singleLookup(path string) bool {
	switch path {
	case "/api/v1/lrn", "/api/v1/cnam", "/api/v1/messaging", "/api/v1/trust":
		return true
	}
	return false
}

// validRequestID reports whether a client's X-Request-ID may be used as it
// is: it reaches logs and response headers.
func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestID {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}
