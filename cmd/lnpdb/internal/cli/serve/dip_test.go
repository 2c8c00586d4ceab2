package serve

import (
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/sipredirect"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWithPort(t *testing.T) {
	assert.Equal(t, "127.0.0.1:5574", withPort("127.0.0.1", 5574))
	assert.Equal(t, "[::1]:5574", withPort("[::1]", 5574))
	assert.Equal(t, "[::1]:99", withPort("[::1]:99", 5574))
	assert.Equal(t, ":5574", withPort(":5574", 53))
	ps, err := parsePrefixes("sip-allow", "10.0.0.0/8, 192.0.2.7,::1,::ffff:198.51.100.0/120,")
	require.NoError(t, err)
	assert.Equal(t, "[10.0.0.0/8 192.0.2.7/32 ::1/128 198.51.100.0/24]", fmt.Sprint(ps))
	for _, bad := range []string{"10.0.0.0/33", "proxy.example.net", "10.0.0.1:80"} {
		_, err := parsePrefixes("trusted-proxies", bad)
		assert.ErrorContains(t, err, "--trusted-proxies", bad)
	}
	none, err := parsePrefixes("sip-allow", "")
	require.NoError(t, err)
	assert.Empty(t, none)
}

// TestListenPortZeroCollision: with port 0 the UDP socket picks the port
// and TCP takes the same one, which a TCP socket may already hold; the
// pair is then opened on another port, never failing serve. 2,000 TCP
// listeners hold ports, so that among 200 pairs some UDP picks collide.
func TestListenPortZeroCollision(t *testing.T) {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for range 2000 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Skipf("holding ports: %v", err)
		}
		held = append(held, l)
	}
	d := &dips{errc: make(chan error, 16)}
	closed := func(c io.Closer) error { c.Close(); return sipredirect.ErrServerClosed }
	for i := range 200 {
		_, err := d.listen("--sip", "127.0.0.1:0", 5060, true,
			func(pc net.PacketConn) error { return closed(pc) }, func(l net.Listener) error { return closed(l) })
		require.NoError(t, err, "pair %d", i)
	}
	select {
	case err := <-d.errc:
		t.Fatal(err)
	default:
	}
}
