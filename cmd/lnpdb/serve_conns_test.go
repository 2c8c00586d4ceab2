package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dialFrom opens a TCP connection to addr from the loopback address from
// (Linux routes all of 127/8 to the loopback interface).
func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Skipf("dialing from %s: %v", from, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// rawGet sends GET path on c, keeping the connection, and returns the
// status code of the answer.
func rawGet(t *testing.T, c net.Conn, r *bufio.Reader, path string) int {
	t.Helper()
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	_, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: lnpdb\r\n\r\n")
	require.NoError(t, err)
	res, err := http.ReadResponse(r, nil)
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, res.Body)
	require.NoError(t, err)
	res.Body.Close()
	return res.StatusCode
}

// TestServeConnShareKeepsHealthz: one address holding connections gets at
// most its share of the HTTP connection cap; the next it opens is closed
// at accept and counted, and another address (a health check) is still
// answered.
func TestServeConnShareKeepsHealthz(t *testing.T) {
	s := startServe(t, "--addr", "127.0.0.1:0", "--http-max-conns", "4")
	base := s.await(t, &s.stdout, `on http://(127\.0\.0\.1:\d+)`)
	for range 2 { // held open, idle, as a client holding its connections does
		c := dialFrom(t, "127.0.0.1", base)
		require.Equal(t, http.StatusOK, rawGet(t, c, bufio.NewReader(c), "/healthz"))
	}
	over := dialFrom(t, "127.0.0.1", base)
	require.NoError(t, over.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err := over.Read(make([]byte, 1))
	assert.True(t, errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET), "a third from one address is closed at accept: %v", err)

	probe := dialFrom(t, "127.0.0.2", base)
	pr := bufio.NewReader(probe)
	assert.Equal(t, http.StatusOK, rawGet(t, probe, pr, "/healthz"), "another address is answered")
	assert.Equal(t, http.StatusOK, rawGet(t, probe, pr, "/readyz"))
	require.NoError(t, probe.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = io.WriteString(probe, "GET /metrics HTTP/1.1\r\nHost: lnpdb\r\n\r\n")
	require.NoError(t, err)
	res, err := http.ReadResponse(pr, nil)
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	assert.Contains(t, string(body), `lnpdb_http_connections_dropped_total{reason="per_source"} 1`)
}

// TestServeRefusesAmbiguousFraming: a request with both Content-Length and
// Transfer-Encoding is answered 400 and its connection closed, so that a
// request smuggled in its body is never answered (RFC 9112 §6.1); chunked
// and Content-Length requests, pipelined, are answered as before.
func TestServeRefusesAmbiguousFraming(t *testing.T) {
	s := startServe(t, "--addr", "127.0.0.1:0")
	addr := s.await(t, &s.stdout, `on http://(127\.0\.0\.1:\d+)`)
	exchange := func(raw string) string {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.SetDeadline(time.Now().Add(15*time.Second)))
		_, err = io.WriteString(c, raw)
		require.NoError(t, err)
		if cw, ok := c.(*net.TCPConn); ok {
			require.NoError(t, cw.CloseWrite()) // nothing more: the server closes once it has answered
		}
		out, err := io.ReadAll(c)
		require.NoError(t, err, "the server closes the connection")
		return string(out)
	}
	smuggled := "GET /api/v1/status HTTP/1.1\r\nHost: lnpdb\r\n\r\n"
	for _, te := range []string{"chunked", "Chunked"} {
		out := exchange("POST /api/v1/lrn HTTP/1.1\r\nHost: lnpdb\r\nContent-Type: application/json\r\n" +
			"Content-Length: 5\r\nTransfer-Encoding: " + te + "\r\n\r\n0\r\n\r\n" + smuggled)
		assert.True(t, strings.HasPrefix(out, "HTTP/1.1 400 "), out)
		assert.Contains(t, out, `"code":"INVALID_REQUEST"`)
		assert.Contains(t, out, "Connection: close")
		assert.Equal(t, 1, strings.Count(out, "HTTP/1.1 "), "the smuggled request is never answered: %s", out)
	}

	// No false alarm: a chunked body and a Content-Length body holding
	// lines that look like header fields, each followed by a pipelined
	// request on the same connection, are all answered.
	body := "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
	out := exchange("POST /api/v1/lrn HTTP/1.1\r\nHost: lnpdb\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"31;ext=1\r\n" + body + "\r\n0\r\nX-Trailer: 1\r\n\r\n" +
		"POST /api/v1/lrn HTTP/1.1\r\nHost: lnpdb\r\nContent-Length: 49\r\n\r\n" + body +
		"GET /api/v1/status HTTP/1.1\r\nHost: lnpdb\r\nConnection: close\r\n\r\n")
	assert.Equal(t, 3, strings.Count(out, "HTTP/1.1 "), out)
	assert.NotContains(t, out, "HTTP/1.1 400", out)
	assert.Contains(t, out, "HTTP/1.1 200 ", out)
}
