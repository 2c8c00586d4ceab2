package sockets

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// echo serves l through g, echoing what each connection sends.
func echo(t *testing.T, g *Gate) (addr string) {
	t.Helper()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := g.Listener(raw)
	done := make(chan error, 1)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				done <- err
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		assert.ErrorIs(t, <-done, net.ErrClosed)
	})
	return raw.Addr().String()
}

// closedByServer reports whether the server closed c within a second.
func closedByServer(t *testing.T, c net.Conn) bool {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Second)))
	_, err := c.Read(make([]byte, 1))
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}

func roundTrip(t *testing.T, c net.Conn) {
	t.Helper()
	_, err := c.Write([]byte("x"))
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Second)))
	b := make([]byte, 1)
	_, err = io.ReadFull(c, b)
	require.NoError(t, err)
}

func TestGateCap(t *testing.T) {
	var mu sync.Mutex
	dropped := map[string]int{}
	g := NewGate(Limits{MaxConns: 2, Dropped: func(why string) { mu.Lock(); dropped[why]++; mu.Unlock() }})
	addr := echo(t, g)
	var cs []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		cs = append(cs, c)
	}
	roundTrip(t, cs[0])
	roundTrip(t, cs[1])
	assert.True(t, closedByServer(t, cs[2]), "the third is closed at accept")
	assert.Equal(t, 2, g.Open())
	cs[0].Close()
	require.Eventually(t, func() bool { return g.Open() == 1 }, 2*time.Second, 5*time.Millisecond, "a closed connection gives its place back")
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	roundTrip(t, c)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, map[string]int{DropFull: 1}, dropped)
}

// dialFrom dials addr from the loopback address from (127.0.0.2: Linux
// routes all of 127/8 to the loopback interface).
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

// TestGatePerSource: one address holds at most PerSource of the places,
// so that another address still gets one while it holds them; a shared
// source (a trusted proxy) is exempt.
func TestGatePerSource(t *testing.T) {
	var mu sync.Mutex
	dropped := map[string]int{}
	g := NewGate(Limits{MaxConns: 4, PerSource: 2, Dropped: func(why string) { mu.Lock(); dropped[why]++; mu.Unlock() }})
	addr := echo(t, g)
	a1, a2, a3 := dialFrom(t, "127.0.0.1", addr), dialFrom(t, "127.0.0.1", addr), dialFrom(t, "127.0.0.1", addr)
	roundTrip(t, a1)
	roundTrip(t, a2)
	assert.True(t, closedByServer(t, a3), "a third from one address is closed at accept")
	b := dialFrom(t, "127.0.0.2", addr)
	roundTrip(t, b)
	assert.Equal(t, 3, g.Open())
	a1.Close()
	require.Eventually(t, func() bool { return g.Open() == 2 }, 2*time.Second, 5*time.Millisecond, "a closed connection gives its address's place back")
	roundTrip(t, dialFrom(t, "127.0.0.1", addr))
	mu.Lock()
	assert.Equal(t, map[string]int{DropPerSource: 1}, dropped)
	mu.Unlock()

	shared := NewGate(Limits{MaxConns: 4, PerSource: 1, Shared: func(a netip.Addr) bool { return a.IsLoopback() }})
	addr = echo(t, shared)
	for range 3 {
		roundTrip(t, dialFrom(t, "127.0.0.1", addr))
	}
}

func TestGateIdle(t *testing.T) {
	g := NewGate(Limits{Idle: 150 * time.Millisecond})
	addr := echo(t, g)
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	for range 4 { // activity keeps it open past the idle time
		roundTrip(t, c)
		time.Sleep(75 * time.Millisecond)
	}
	start := time.Now()
	assert.True(t, closedByServer(t, c), "closed once idle")
	assert.Less(t, time.Since(start), 900*time.Millisecond)
	require.Eventually(t, func() bool { return g.Open() == 0 }, time.Second, 5*time.Millisecond)
}

func TestGateAllow(t *testing.T) {
	var denied int
	var mu sync.Mutex
	g := NewGate(Limits{
		Allow:   func(a netip.Addr) bool { return a == netip.MustParseAddr("192.0.2.1") },
		Dropped: func(why string) { mu.Lock(); assert.Equal(t, DropDenied, why); denied++; mu.Unlock() },
	})
	addr := echo(t, g)
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	assert.True(t, closedByServer(t, c), "closed at accept, nothing read")
	assert.Zero(t, g.Open())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 1, denied)
}

// failing fails its first n accepts with err, then accepts from the real
// listener under it.
type failing struct {
	net.Listener
	mu  sync.Mutex
	n   int
	err error
}

func (f *failing) Accept() (net.Conn, error) {
	f.mu.Lock()
	if f.n > 0 {
		f.n--
		f.mu.Unlock()
		return nil, f.err
	}
	f.mu.Unlock()
	return f.Listener.Accept()
}

// TestGateAcceptErrorsRetried: an accept error (here EMFILE, as the
// descriptors running out gives it; the real exhaustion is in cmd/lnpdb's
// TestServeSurvivesDescriptorExhaustion) never reaches the server, and a
// Close ends the pause between retries.
func TestGateAcceptErrorsRetried(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	g := NewGate(Limits{})
	l := g.Listener(&failing{Listener: raw, n: 4, err: &net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE}})
	c, err := net.Dial("tcp", raw.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	sc, err := l.Accept()
	require.NoError(t, err, "the errors were retried")
	sc.Close()
	assert.EqualValues(t, 4, g.AcceptErrors())

	l2 := g.Listener(&failing{Listener: raw, n: 1000, err: &net.OpError{Op: "accept", Net: "tcp", Err: syscall.ENFILE}})
	done := make(chan error, 1)
	go func() { _, err := l2.Accept(); done <- err }()
	time.Sleep(50 * time.Millisecond)
	l2.Close()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, net.ErrClosed)
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not end Accept")
	}
}

func TestCap(t *testing.T) {
	n := DescriptorLimit()
	if n == 0 {
		t.Skip("no open-file limit known")
	}
	assert.Equal(t, max(1, min(1<<30, n/4)), Cap(1<<30, 4))
	assert.Equal(t, 1, Cap(1, 4))
}

// TestGateClose: Close ends every admitted connection, and one the
// listener accepts after it is closed before a byte is read.
func TestGateClose(t *testing.T) {
	g := NewGate(Limits{})
	addr := echo(t, g)
	before, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer before.Close()
	_, err = before.Write([]byte("x"))
	require.NoError(t, err)
	_, err = io.ReadFull(before, make([]byte, 1))
	require.NoError(t, err, "echoed while the gate is open")
	require.Equal(t, 1, g.Open())

	g.Close()
	require.NoError(t, before.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = before.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF, "an admitted connection is closed")

	after, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer after.Close()
	require.NoError(t, after.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, _ = after.Write([]byte("y"))
	_, err = after.Read(make([]byte, 1))
	require.Error(t, err, "a connection accepted after Close is closed unread")
	var ne net.Error
	require.False(t, errors.As(err, &ne) && ne.Timeout(), "closed, not left open: %v", err)
	require.Eventually(t, func() bool { return g.Open() == 0 }, 5*time.Second, time.Millisecond)
}
