package httpapi

import (
	"math/rand/v2"

	"go.opentelemetry.io/otel/trace"
)

// A W3C Trace Context traceparent header (https://www.w3.org/TR/trace-context/
// §3.2): version "-" trace-id "-" parent-id "-" trace-flags, each lower-case
// hex, 2, 32, 16 and 2 digits.
const traceparentLen = 55

// parseTraceparent parses a traceparent header as the W3C Trace Context
// specifies: version 00 is exactly 55 characters; a later version (01 to
// fe) is at least that, its fields after the flags left alone, the flags
// followed by "-" when there are any; version ff is invalid; hex is
// lower-case only; an all-zero trace-id or parent-id is invalid. Unknown
// flag bits are kept and ignored. A header that is not valid is ignored
// by the caller, as the specification says: the request starts a new
// trace.
func parseTraceparent(s string) (sc trace.SpanContextConfig, ok bool) {
	if len(s) < traceparentLen || s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return sc, false
	}
	var ver, flags [1]byte
	if !lowerHex(ver[:], s[0:2]) || ver[0] == 0xff {
		return sc, false
	}
	if ver[0] == 0 && len(s) != traceparentLen {
		return sc, false
	}
	if len(s) > traceparentLen && s[traceparentLen] != '-' {
		return sc, false
	}
	if !lowerHex(sc.TraceID[:], s[3:35]) || !lowerHex(sc.SpanID[:], s[36:52]) || !lowerHex(flags[:], s[53:55]) {
		return sc, false
	}
	if !sc.TraceID.IsValid() || !sc.SpanID.IsValid() {
		return sc, false
	}
	sc.TraceFlags = trace.TraceFlags(flags[0])
	sc.Remote = true
	return sc, true
}

// lowerHex decodes s, lower-case hex digits, into dst (len(s) = 2 len(dst)).
func lowerHex(dst []byte, s string) bool {
	for i := range dst {
		hi, lo := unhex(s[2*i]), unhex(s[2*i+1])
		if hi > 0xf || lo > 0xf {
			return false
		}
		dst[i] = hi<<4 | lo
	}
	return true
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return 0xff
}

// newSpanID returns a random span id for a request traced without a
// tracer: the request's own place in the caller's trace, for the access
// log. Not a secret, so not from crypto/rand.
func newSpanID() (id trace.SpanID) {
	for !id.IsValid() {
		v := rand.Uint64()
		for i := range id {
			id[i] = byte(v >> (8 * i))
		}
	}
	return id
}
