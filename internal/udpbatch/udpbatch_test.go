package udpbatch

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServe answers over IPv4 and IPv6 loopback, drops what the handler
// does not answer, cuts an oversized datagram to one byte past the limit,
// and returns nil once the socket is closed.
func TestServe(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		conn, err := net.ListenUDP("udp", mustResolve(t, addr))
		if err != nil {
			t.Logf("skipping %s: %v", addr, err)
			continue
		}
		done := make(chan error, 1)
		go func() {
			done <- Serve(conn, 2, 16, 32, func(dst, d []byte, from net.Addr) ([]byte, bool) {
				if bytes.Equal(d, []byte("drop")) {
					return dst, false
				}
				return append(append(dst, "re:"...), d...), true
			})
		}()
		c, err := net.Dial("udp", conn.LocalAddr().String())
		require.NoError(t, err)
		ask := func(q string) string {
			buf := make([]byte, 64)
			for try := 0; try < 5; try++ {
				_, err := c.Write([]byte(q))
				require.NoError(t, err)
				require.NoError(t, c.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
				if n, err := c.Read(buf); err == nil {
					return string(buf[:n])
				}
			}
			return ""
		}
		assert.Equal(t, "re:hello", ask("hello"), addr)
		assert.Equal(t, "", ask("drop"), addr)
		assert.Equal(t, "re:"+"0123456789abcdefg", ask("0123456789abcdefghijk"), addr)
		c.Close()
		conn.Close()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Fatal("Serve did not return after Close")
		}
	}
}

func mustResolve(t *testing.T, addr string) *net.UDPAddr {
	t.Helper()
	a, err := net.ResolveUDPAddr("udp", addr)
	require.NoError(t, err)
	return a
}
