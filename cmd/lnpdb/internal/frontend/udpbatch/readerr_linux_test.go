package udpbatch

import (
	"bytes"
	"log/slog"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadErrorDoesNotEndServe: a read that fails for a peer's doing does
// not end the front end. With IP_RECVERR the kernel reports the ICMP port
// unreachable an answer to a closed port brings back as ECONNREFUSED on the
// socket's next read; the loop counts it, logs it, and goes on answering.
func TestReadErrorDoesNotEndServe(t *testing.T) {
	conn, err := net.ListenUDP("udp", mustResolve(t, "127.0.0.1:0"))
	require.NoError(t, err)
	raw, err := conn.SyscallConn()
	require.NoError(t, err)
	var serr error
	require.NoError(t, raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_RECVERR, 1)
	}))
	require.NoError(t, serr)

	// A query from a socket closed before the answer leaves: the answer
	// finds no port.
	gone, err := net.Dial("udp", conn.LocalAddr().String())
	require.NoError(t, err)
	_, err = gone.Write([]byte("to a closed port"))
	require.NoError(t, err)
	require.NoError(t, gone.Close())

	var logged bytes.Buffer
	r := NewRetrier(slog.New(slog.NewTextHandler(&logged, nil)))
	done := make(chan error, 1)
	go func() {
		done <- Serve(conn, 1, 64, 64, func(dst, d []byte, _ net.Addr) ([]byte, bool) {
			return append(append(dst, "re:"...), d...), true
		}, r)
	}()
	require.Eventually(t, func() bool { return r.Errors() > 0 }, 5*time.Second, 5*time.Millisecond,
		"the kernel reported no error on the socket")

	c, err := net.Dial("udp", conn.LocalAddr().String())
	require.NoError(t, err)
	defer c.Close()
	buf := make([]byte, 64)
	answered := false
	for try := 0; try < 10 && !answered; try++ {
		_, err := c.Write([]byte("still there?"))
		require.NoError(t, err)
		require.NoError(t, c.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
		n, err := c.Read(buf)
		answered = err == nil && string(buf[:n]) == "re:still there?"
	}
	select {
	case err := <-done:
		t.Fatalf("Serve ended on a read error: %v", err)
	default:
	}
	assert.True(t, answered, "answers go on after the read error")
	conn.Close()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after Close")
	}
	assert.Contains(t, logged.String(), "UDP read failed; retrying")
	assert.Contains(t, logged.String(), "connection refused")
}
