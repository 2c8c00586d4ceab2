package serve

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestServerBoundsSlowClients(t *testing.T) {
	srv := newServer(http.NotFoundHandler(), slog.New(slog.DiscardHandler))
	assert.Equal(t, readHeaderTimeout, srv.ReadHeaderTimeout)
	assert.Equal(t, readTimeout, srv.ReadTimeout)
	assert.Equal(t, writeTimeout, srv.WriteTimeout)
	assert.Equal(t, idleTimeout, srv.IdleTimeout)
	assert.Equal(t, maxHeaderBytes, srv.MaxHeaderBytes)
	for _, d := range []time.Duration{readHeaderTimeout, readTimeout, writeTimeout, idleTimeout} {
		assert.Positive(t, d)
	}
	if testing.Short() {
		return
	}

	// A client that starts a request and stalls is cut off once
	// readHeaderTimeout has passed (before readTimeout), not held open.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("POST /api/v1/lrn HTTP/1.1\r\nHost: x\r\n"))
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(readHeaderTimeout+3*time.Second)))
	_, err = io.ReadAll(conn)
	require.NoError(t, err, "the server closes the connection (a timeout here means it did not)")
}
