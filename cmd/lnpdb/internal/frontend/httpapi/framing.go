package httpapi

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/sockets"
)

// A request carrying both Content-Length and Transfer-Encoding is framed
// two ways: a proxy in front that reads one and this server the other
// disagree on where it ends, and what one takes for its body the other
// takes for a second request (request smuggling). RFC 9112 §6.1 has the
// server reject it or close the connection after answering; net/http
// answers it by Transfer-Encoding and keeps the connection, and deletes
// Content-Length before a handler sees the request. So the connection
// watches its own bytes: [FramingListener] marks a connection on which
// such a request arrived, [FramingContext] hands the mark to its requests,
// and [Conventions] answers each of them 400 and closes the connection, so
// that nothing after the ambiguous request is answered.
//
// The watch follows HTTP/1.1's framing (RFC 9112 §6): the header block,
// then a Content-Length body or chunks and trailers. Anything it does not
// follow — HTTP/2 (h2c prior knowledge), an Upgrade, TLS bytes, a header
// block beyond maxFramingHead — ends the watch for that connection, and
// net/http's own checks apply alone.

// maxFramingHead bounds the header block the watch reads: beyond
// maxHeaderBytes net/http answers 431 itself.
const maxFramingHead = 1 << 20

var errAmbiguousFraming = &apiError{http.StatusBadRequest, errorBody{
	"Bad request", CodeInvalidRequest,
	"a request must not carry both Content-Length and Transfer-Encoding (RFC 9112 §6.1); the connection is closed"}}

// FramingListener returns l, its connections watched for a request framed
// by both Content-Length and Transfer-Encoding. Serve cleartext HTTP/1.1
// (and h2c) through it, with [FramingContext] as the server's ConnContext.
func FramingListener(l net.Listener) net.Listener { return framingListener{l} }

type framingListener struct{ net.Listener }

func (l framingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &framingConn{Wrapped: sockets.Wrapped{Conn: c}}, nil
}

type framingCtxKey struct{}

// FramingContext is an http.Server's ConnContext: it hands the mark of a
// connection from [FramingListener] to its requests.
func FramingContext(ctx context.Context, c net.Conn) context.Context {
	if fc, ok := c.(*framingConn); ok {
		return context.WithValue(ctx, framingCtxKey{}, &fc.ambiguous)
	}
	return ctx
}

// ambiguousFraming reports whether r's connection carried a request with
// both Content-Length and Transfer-Encoding: r itself, or one pipelined
// behind it that the server has read ahead.
func ambiguousFraming(r *http.Request) bool {
	b, _ := r.Context().Value(framingCtxKey{}).(*atomic.Bool)
	return b != nil && b.Load()
}

// What the watch of a connection is reading.
const (
	frameHead    = iota // request line and header fields, up to the empty line
	frameBody           // remain bytes of a Content-Length body
	frameChunk          // a chunk-size line
	frameData           // remain bytes of chunk data
	frameDataEnd        // the CRLF after chunk data
	frameTrailer        // trailer fields, up to the empty line
	frameOff            // not watched
)

// framingConn watches the bytes the server reads. Reads of one connection
// are never concurrent (net/http's background read waits for the
// handler's); ambiguous is read by the handler meanwhile.
type framingConn struct {
	sockets.Wrapped
	ambiguous atomic.Bool

	state  int
	remain int64
	line   []byte // the line read so far
	head   int    // bytes of the header block so far
	first  bool   // the request line has been read
	cl, te bool   // the header block has Content-Length, Transfer-Encoding
	length int64  // Content-Length's value
	chunk  bool   // Transfer-Encoding ends with chunked
}

func (c *framingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && c.state != frameOff {
		c.scan(b[:n])
	}
	return n, err
}

func (c *framingConn) scan(p []byte) {
	for len(p) > 0 && c.state != frameOff {
		switch c.state {
		case frameBody, frameData:
			k := min(int64(len(p)), c.remain)
			p, c.remain = p[k:], c.remain-k
			if c.remain == 0 {
				if c.state == frameBody {
					c.state = frameHead
				} else {
					c.state = frameDataEnd
				}
			}
			continue
		}
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			c.take(p)
			return
		}
		c.take(p[:i+1])
		p = p[i+1:]
		if c.state != frameOff {
			c.endLine(bytes.TrimRight(c.line, "\r\n"))
			c.line = c.line[:0]
		}
	}
}

// take adds p to the line being read, ending the watch past maxFramingHead.
func (c *framingConn) take(p []byte) {
	if c.head += len(p); c.head > maxFramingHead {
		c.off()
		return
	}
	c.line = append(c.line, p...)
}

func (c *framingConn) off() {
	c.state, c.line = frameOff, nil
}

func (c *framingConn) endLine(l []byte) {
	switch c.state {
	case frameChunk:
		size := l
		if i := bytes.IndexByte(size, ';'); i >= 0 {
			size = size[:i]
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(size)), 16, 64)
		switch {
		case err != nil || n < 0:
			c.off()
		case n == 0:
			c.state = frameTrailer
		default:
			c.state, c.remain = frameData, n
		}
		c.head = 0
	case frameDataEnd:
		c.state, c.head = frameChunk, 0
	case frameTrailer:
		if len(l) == 0 {
			c.state, c.head = frameHead, 0
		}
	case frameHead:
		c.headLine(l)
	}
}

func (c *framingConn) headLine(l []byte) {
	if !c.first {
		switch {
		case len(l) == 0: // empty lines before a request line are ignored (RFC 9112 §2.2)
			c.head = 0
		case bytes.HasPrefix(l, []byte("PRI * HTTP/2")) || !bytes.Contains(l, []byte(" HTTP/1.")):
			c.off() // HTTP/2, or not HTTP/1 at all
		default:
			c.first = true
		}
		return
	}
	if len(l) > 0 {
		name, value, ok := bytes.Cut(l, []byte(":"))
		if !ok {
			return // net/http refuses it
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || n < 0 {
				c.off() // net/http refuses it
				return
			}
			c.cl, c.length = true, n
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			c.te = true
			v := bytes.ToLower(value)
			c.chunk = bytes.HasSuffix(bytes.TrimSpace(v[bytes.LastIndexByte(v, ',')+1:]), []byte("chunked"))
		case bytes.EqualFold(name, []byte("Upgrade")):
			c.off()
		}
		return
	}
	// The end of the header block: what follows is its body.
	switch {
	case c.cl && c.te:
		c.ambiguous.Store(true)
		c.off()
		return
	case c.te && c.chunk:
		c.state = frameChunk
	case c.te:
		c.off() // net/http refuses any other coding
		return
	case c.cl && c.length > 0:
		c.state, c.remain = frameBody, c.length
	}
	c.first, c.cl, c.te, c.chunk, c.length, c.head = false, false, false, false, 0, 0
}
