package httpapi

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// watch feeds in to a connection's watch in reads of the sizes cuts gives
// and reports whether it marked the connection.
func watch(in []byte, cuts []byte) bool {
	c := &framingConn{}
	for len(in) > 0 {
		n := len(in)
		if len(cuts) > 0 {
			n = min(n, 1+int(cuts[0]))
			cuts = cuts[1:]
		}
		c.scan(in[:n])
		in = in[n:]
	}
	return c.ambiguous.Load()
}

func TestFramingWatch(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", true},
		{"POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\ncontent-length: 5\r\n\r\n", true},
		// The second request of a connection, after a body holding what
		// looks like header fields.
		{"POST / HTTP/1.1\r\nContent-Length: 24\r\n\r\nTransfer-Encoding: x\r\n\r\nPOST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", true},
		{"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nabcde\r\n0\r\nContent-Length: 3\r\n\r\nGET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", false},
		{"POST / HTTP/1.1\r\nContent-Length: 47\r\n\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", false},
		{"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", false},
		{"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", false},
	} {
		assert.Equal(t, c.want, watch([]byte(c.in), nil), "%q", c.in)
		for n := byte(0); n < 8; n++ {
			assert.Equal(t, c.want, watch([]byte(c.in), []byte{n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n}), "%q in reads of %d", c.in, n+1)
		}
	}
}

// FuzzFramingWatch: the watch never panics, and what it finds does not
// depend on how the bytes arrive.
func FuzzFramingWatch(f *testing.F) {
	f.Add([]byte("POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), []byte{3, 7})
	f.Add([]byte("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n0\r\n\r\n"), []byte{0})
	f.Add([]byte("GET / HTTP/1.1\r\nContent-Length: 2\r\n\r\nabGET / HTTP/1.1\r\n\r\n"), []byte{1, 2, 3})
	f.Add([]byte("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n"), []byte{})
	f.Fuzz(func(t *testing.T, in, cuts []byte) {
		require.Equal(t, watch(in, nil), watch(in, cuts))
	})
}
