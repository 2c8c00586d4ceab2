//go:build unix

package httpapi

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/partread"
)

// smallSendBuffer accepts connections whose send buffer is a few
// kilobytes: what the server writes waits in it for the client to read.
type smallSendBuffer struct{ net.Listener }

func (l smallSendBuffer) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		err = c.(*net.TCPConn).SetWriteBuffer(4096)
	}
	return c, err
}

// TestBulkPartlyRead: a bulk answer is delivered when the connection has
// taken all of it (delivery.Write): then it is charged in full even if
// its client reads 2,000 bytes of it and resets, for the server cannot
// tell what the client read; and it is not charged at all if the client
// resets before the connection took its last byte.
func TestBulkPartlyRead(t *testing.T) {
	bulk := func(n int) string {
		return `{"phone_numbers":[` + strings.TrimSuffix(strings.Repeat(`"12025550123",`, n), ",") + `],"include_enhanced_lrn":true}`
	}
	// ask posts a bulk of n numbers on a connection whose receive buffer
	// is rcvbuf bytes (0: the system's), reads 2,000 bytes of the answer
	// once ready says so, and resets the connection.
	ask := func(t *testing.T, addr string, n, rcvbuf int, ready func()) {
		d := net.Dialer{}
		if rcvbuf > 0 {
			d.Control = func(_, _ string, c syscall.RawConn) error {
				var serr error
				err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf) })
				return errors.Join(err, serr)
			}
		}
		conn, err := d.Dial("tcp", addr)
		require.NoError(t, err)
		code, err := partread.Post(conn.(*net.TCPConn), "/api/v1/lrn/bulk", testKey, bulk(n), 2000, ready)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code)
	}
	unlimited := func(c *Config) {
		k := auth.HashKey(testKey)
		k.Limit = 1 << 30
		c.Keys = auth.NewKeySet(k)
	}

	t.Run("taken whole", func(t *testing.T) {
		acct := &accounts{credit: 1000}
		s := newServer(t, unlimited, func(c *Config) { c.Accounts = acct })
		// 100 numbers, about 30 kB: the connection's buffers take it all
		// before the client reads a byte; the client reads once the
		// payments are settled.
		ask(t, strings.TrimPrefix(s.URL, "http://"), 100, 0, func() { settled(t, acct, 100) })
		n, d := settled(t, acct, 100)
		assert.Equal(t, 100, n)
		assert.Equal(t, 100, d, "charged in full: the connection took the whole answer")
	})

	t.Run("reset before the last byte", func(t *testing.T) {
		acct := &accounts{credit: 1000}
		s := newServer(t, unlimited, func(c *Config) { c.Accounts = acct })
		srv := httptest.NewUnstartedServer(s.Config.Handler)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		srv.Listener = smallSendBuffer{l}
		srv.Start()
		t.Cleanup(srv.Close)
		// 1,000 numbers, about 300 kB, through buffers of a few kB: the
		// server's write waits on the client, which resets.
		ask(t, srv.Listener.Addr().String(), 1000, 4096, func() {})
		n, d := settled(t, acct, 1000)
		assert.Equal(t, 1000, n)
		assert.Equal(t, 0, d, "not charged: the connection did not take the whole answer")
		acct.mu.Lock()
		defer acct.mu.Unlock()
		assert.Equal(t, 1000, acct.credit, "and given back")
	})
}
