package httpapi

import (
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/ratelimit"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// windowed is a Limiter that says how long its windows are.
type windowed interface{ Window() time.Duration }

// setRateLimitHeaders sets the X-RateLimit-* headers of the contract and,
// beside them, the IETF RateLimit and RateLimit-Policy fields
// (draft-ietf-httpapi-ratelimit-headers): one policy, "default", of q
// lookups per w seconds, with r left and t seconds to its reset.
// window is the limiter's window length, 0 when it does not say.
func setRateLimitHeaders(hd http.Header, d ratelimit.Decision, window time.Duration) {
	reset := ratelimit.CeilSeconds(d.Reset)
	hd["X-Ratelimit-Limit"] = limitValue(d.Limit)
	hd["X-Ratelimit-Reset"] = intValue(reset)
	// RateLimit holds Remaining's digits: one string for both, and one
	// array for their two values.
	const prefix = `"default";r=`
	var buf [64]byte
	b := append(buf[:0], prefix...)
	b = strconv.AppendInt(b, int64(d.Remaining), 10)
	end := len(b)
	b = append(b, ";t="...)
	b = strconv.AppendInt(b, int64(reset), 10)
	s := string(b)
	v := &[2]string{s[len(prefix):end], s}
	hd["X-Ratelimit-Remaining"] = v[0:1:1]
	hd["Ratelimit"] = v[1:2:2]
	hd["Ratelimit-Policy"] = policyValue(d, window)
}

// lastLimit is the X-RateLimit-Limit value made last: most requests come
// with the same limit as the one before. Header values are shared, never
// written.
var lastLimit atomic.Pointer[limitHeader]

type limitHeader struct {
	limit int
	value []string
}

func limitValue(limit int) []string {
	if limit >= 0 && limit < len(intValues) {
		return intValues[limit]
	}
	if l := lastLimit.Load(); l != nil && l.limit == limit {
		return l.value
	}
	v := intValue(limit)
	lastLimit.Store(&limitHeader{limit, v})
	return v
}

// lastPolicy is the RateLimit-Policy value built last: most requests come
// with the same limit and window as the one before.
var lastPolicy atomic.Pointer[policy]

type policy struct {
	limit  int
	window time.Duration
	value  []string
}

// policyValue returns the RateLimit-Policy value of d, built once for the
// default limit and window, and reused while the limit stays the same.
func policyValue(d ratelimit.Decision, window time.Duration) []string {
	w := int(window.Seconds())
	if w == 60 && d.Limit == ratelimit.DefaultLimit {
		return hdrDefaultPolicy
	}
	if p := lastPolicy.Load(); p != nil && p.limit == d.Limit && p.window == window {
		return p.value
	}
	v := buildPolicy(d, w)
	lastPolicy.Store(&policy{d.Limit, window, v})
	return v
}

func buildPolicy(d ratelimit.Decision, w int) []string {
	b := append([]byte(nil), `"default";q=`...)
	b = strconv.AppendInt(b, int64(d.Limit), 10)
	if w > 0 {
		b = append(b, ";w="...)
		b = strconv.AppendInt(b, int64(w), 10)
	}
	return []string{string(b)}
}

var hdrDefaultPolicy = []string{`"default";q=` + strconv.Itoa(ratelimit.DefaultLimit) + `;w=60`}
