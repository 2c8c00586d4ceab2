package udpbatch

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/ipv4"
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
			}, nil)
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

// TestServeSegmented queues datagrams from two peers before the server
// reads, so that they arrive in one batch and the answers of one size to
// one peer leave as one segmented send: each peer must still receive every
// answer as its own datagram, once.
func TestServeSegmented(t *testing.T) {
	conn, err := net.ListenUDP("udp", mustResolve(t, "127.0.0.1:0"))
	require.NoError(t, err)
	var peers []net.Conn
	for range 2 {
		c, err := net.Dial("udp", conn.LocalAddr().String())
		require.NoError(t, err)
		defer c.Close()
		peers = append(peers, c)
	}
	const each = 30
	for i := range each {
		for p, c := range peers {
			q := fmt.Sprintf("q%d-%02d", p, i)
			if i%3 == 0 {
				q += "-long" // a second size in the batch
			}
			_, err := c.Write([]byte(q))
			require.NoError(t, err)
		}
	}
	done := make(chan error, 1)
	go func() {
		done <- Serve(conn, 1, 64, 64, func(dst, d []byte, _ net.Addr) ([]byte, bool) {
			return append(append(dst, "re:"...), d...), true
		}, nil)
	}()
	for p, c := range peers {
		got := map[string]int{}
		buf := make([]byte, 256)
		for range each {
			require.NoError(t, c.SetReadDeadline(time.Now().Add(2*time.Second)))
			n, err := c.Read(buf)
			require.NoError(t, err)
			got[string(buf[:n])]++
		}
		for i := range each {
			q := fmt.Sprintf("re:q%d-%02d", p, i)
			if i%3 == 0 {
				q += "-long"
			}
			assert.Equal(t, 1, got[q], q)
		}
	}
	conn.Close()
	assert.NoError(t, <-done)
}

// fakeConn records what WriteBatch is given; with refuseSegments it
// refuses a message carrying control data, as a kernel without
// UDP_SEGMENT does.
type fakeConn struct {
	refuseSegments bool
	sent           [][][]byte // per message, its buffers
	oobs           int
}

func (f *fakeConn) ReadBatch([]ipv4.Message, int) (int, error) { return 0, net.ErrClosed }

func (f *fakeConn) WriteBatch(ms []ipv4.Message, _ int) (int, error) {
	for i, m := range ms {
		if len(m.OOB) > 0 {
			if f.refuseSegments {
				return i, errors.New("EIO")
			}
			f.oobs++
		}
		f.sent = append(f.sent, slices.Clone(m.Buffers))
	}
	return len(ms), nil
}

func TestWriterGroups(t *testing.T) {
	big := strings.Repeat("x", maxSegment+1)
	a := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1000}
	a2 := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1000} // equal, another value
	b := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 2000}
	batch := []struct {
		answer string
		to     net.Addr
	}{{"aaa", a}, {"bbb", b}, {"ccc", a2}, {"dddd", a}, {"eee", a}, {"fff", b}, {big, a}, {big, a}}

	f := &fakeConn{}
	w := newWriter(f)
	w.segment = true
	w.reset()
	for _, x := range batch {
		w.add([]byte(x.answer), x.to)
	}
	w.flush()
	var got []string
	for _, bufs := range f.sent {
		var s []string
		for _, b := range bufs {
			s = append(s, string(b))
		}
		got = append(got, strings.Join(s, "+"))
	}
	assert.Equal(t, []string{"aaa+ccc+eee", "bbb+fff", "dddd", big, big}, got, "answers longer than maxSegment are not grouped")
	assert.Equal(t, 2, f.oobs, "groups of more than one answer carry UDP_SEGMENT")

	f = &fakeConn{refuseSegments: true}
	w = newWriter(f)
	w.segment = true
	w.reset()
	for _, x := range batch {
		w.add([]byte(x.answer), x.to)
	}
	w.flush()
	assert.False(t, w.segment, "a refused segmented send ends segmenting")
	require.Len(t, f.sent, len(batch), "then every answer is sent on its own")
	var flat []string
	for _, bufs := range f.sent {
		require.Len(t, bufs, 1)
		flat = append(flat, string(bufs[0]))
	}
	assert.ElementsMatch(t, []string{"aaa", "bbb", "ccc", "dddd", "eee", "fff", big, big}, flat)
}

// TestWriterAllocs: answering a batch allocates nothing.
func TestWriterAllocs(t *testing.T) {
	w := newWriter(&discardConn{})
	w.segment = true
	a := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1000}
	ans := []byte("answer")
	allocs := testing.AllocsPerRun(100, func() {
		w.reset()
		for range Batch {
			w.add(ans, a)
		}
		w.flush()
	})
	assert.Zero(t, allocs)
}

type discardConn struct{}

func (discardConn) ReadBatch([]ipv4.Message, int) (int, error)       { return 0, net.ErrClosed }
func (discardConn) WriteBatch(ms []ipv4.Message, _ int) (int, error) { return len(ms), nil }

// TestReadFailed: a closed socket ends a loop, a read deadline is retried
// at once, any other error is counted and retried after a growing pause.
func TestReadFailed(t *testing.T) {
	conn, err := net.ListenUDP("udp", mustResolve(t, "127.0.0.1:0"))
	require.NoError(t, err)
	r := NewRetrier(nil)
	var pause time.Duration
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(time.Millisecond)))
	_, _, timeout := conn.ReadFrom(make([]byte, 1))
	require.Error(t, timeout)
	assert.False(t, ReadFailed(timeout, conn.LocalAddr(), r, &pause))
	assert.Zero(t, pause)
	assert.Zero(t, r.Errors())

	other := errors.New("no buffer space")
	assert.False(t, ReadFailed(other, conn.LocalAddr(), r, &pause))
	assert.Equal(t, 5*time.Millisecond, pause)
	assert.False(t, ReadFailed(other, conn.LocalAddr(), r, &pause))
	assert.Equal(t, 10*time.Millisecond, pause)
	assert.Equal(t, int64(2), r.Errors())

	require.NoError(t, conn.Close())
	_, _, closed := conn.ReadFrom(make([]byte, 1))
	assert.True(t, ReadFailed(closed, conn.LocalAddr(), r, &pause))
	assert.Equal(t, int64(2), r.Errors())
}
