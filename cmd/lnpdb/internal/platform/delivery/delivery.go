// Package delivery owns what "delivered" means for an HTTP response, on
// which a lookup's charge depends (CONTRACT.md §9): the whole response
// written and flushed to the connection, with its Content-Length, within
// the server's write timeout, the client still connected when it was
// begun. The server cannot know what the client read of it: bytes the
// connection took are in the kernel's buffers, the peer's included, and a
// client that reads part of them and resets has had them delivered. A
// response the connection does not take whole (the client left, reset
// before the last byte was taken, the write timed out) is not delivered.
//
// A response may also be delivered inside another one: the account pages'
// playground renders an API answer into its page. Its writer is a [Relay],
// and the answer's payments are settled when the page is delivered or not.
// Standard library only.
package delivery

import (
	"net/http"
	"strconv"
)

// Write writes code and body as the whole response to r, with its
// Content-Length, and reports whether it was delivered: the client was
// still connected when it began, and the write and the flush succeeded.
// Whether the client left after the flush is not asked: a client that
// reads the answer and closes at once has had it.
func Write(w http.ResponseWriter, r *http.Request, code int, body []byte) bool {
	connected := r.Context().Err() == nil
	w.Header()["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(code)
	if _, err := w.Write(body); err != nil {
		return false
	}
	return http.NewResponseController(w).Flush() == nil && connected
}

// Relay is a ResponseWriter whose response reaches the client inside
// another one, later: a handler that holds payments for what it writes
// to a Relay hands it their settlement rather than settling them itself,
// and the Relay's owner calls settle exactly once, with whether its own
// response was delivered.
type Relay interface {
	http.ResponseWriter
	Relay(settle func(delivered bool))
}

// RelayOf returns the Relay w is or wraps (through Unwrap, as
// http.ResponseController does), if any.
func RelayOf(w http.ResponseWriter) (Relay, bool) {
	for {
		if rl, ok := w.(Relay); ok {
			return rl, true
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil, false
		}
		w = u.Unwrap()
	}
}
