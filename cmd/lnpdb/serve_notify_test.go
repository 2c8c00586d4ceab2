package main

import (
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServeNotifiesReady: under systemd's Type=notify (NOTIFY_SOCKET set),
// serve says READY=1 once the table is verified and open and the server
// answers — not before — and STOPPING=1 when it shuts down.
func TestServeNotifiesReady(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify")
	l, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	require.NoError(t, err)
	defer l.Close()
	t.Setenv("NOTIFY_SOCKET", sock)
	next := func() string {
		t.Helper()
		require.NoError(t, l.SetReadDeadline(time.Now().Add(60*time.Second)))
		b := make([]byte, 512)
		n, err := l.Read(b)
		require.NoError(t, err, "no notification from serve")
		return string(b[:n])
	}

	s := startServe(t, "--addr", "127.0.0.1:0")
	assert.True(t, strings.HasPrefix(next(), "STATUS=verifying and opening the table "), "first: what start waits for")
	require.Equal(t, "READY=1", next())
	// At READY=1 the table is verified and open, and the server answers.
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	code, body := call(t, "GET", base+"/readyz", "", "")
	assert.Equal(t, http.StatusOK, code, body)
	s.awaitCount(t, "table opened and verified", 1)

	require.Equal(t, 0, s.stop(t))
	assert.Equal(t, "STOPPING=1", next())
}
