package sockets

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Limits bound what one TCP front end holds, as a SIP proxy bounds its
// TCP side (Kamailio's tcp_max_connections and tcp_connection_lifetime).
type Limits struct {
	// MaxConns caps the connections open at once across every listener of
	// the gate; a connection accepted beyond it is closed at once, before
	// a byte is read. 0: no cap.
	MaxConns int
	// Idle closes a connection on which nothing was read for this long.
	// 0: the server's own timeouts apply (HTTP's and DNS's servers set
	// their own read deadlines, which this would override).
	Idle time.Duration
	// Allow, when not nil, admits a connection only from the sources it
	// accepts; any other is closed at accept, before a byte is read.
	Allow func(netip.Addr) bool
	// PerSource caps the connections open at once from one remote address,
	// so that one client cannot take every place of MaxConns (and with
	// them the health checks' connections); a connection beyond it is
	// closed at accept. 0: no per-address cap.
	PerSource int
	// Shared, when not nil, exempts the sources it accepts from PerSource:
	// the reverse proxies every client's connections arrive through.
	Shared func(netip.Addr) bool
	// Dropped, when not nil, is called for every connection closed at
	// accept, with why: [DropDenied], [DropFull] or [DropPerSource].
	Dropped func(why string)
	// Logger takes accept errors (at most one line a second); nil: none.
	Logger *slog.Logger
}

// Why a gate closed a connection at accept.
const (
	DropDenied    = "denied"     // the source is outside Limits.Allow
	DropFull      = "full"       // Limits.MaxConns connections were open
	DropPerSource = "per_source" // Limits.PerSource connections were open from its address
)

// Gate admits a TCP front end's connections under its Limits. It keeps
// the rule ([Retrier]) that a listener's accept error is never fatal: every
// TCP listener of the server is served through a Gate's [Gate.Listener],
// whose Accept retries a failed accept (EMFILE and ENFILE when descriptors run out,
// ENOBUFS, ECONNABORTED, anything but the listener's own close) after a
// pause growing from 5 ms to 1 s, and returns only accepted connections or
// [net.ErrClosed]. A server handed such a listener never sees the error
// that would end its Serve.
type Gate struct {
	lim   Limits
	open  atomic.Int64
	retry Retrier
	conns Set[*conn]

	mu       sync.Mutex
	bySource map[netip.Addr]int // open connections per remote address, with PerSource
}

// NewGate returns a gate enforcing lim.
func NewGate(lim Limits) *Gate {
	return &Gate{lim: lim, retry: Retrier{Logger: lim.Logger, Msg: "accept failed; retrying", Count: "accept_errors"}}
}

// Open returns the number of connections open through the gate.
func (g *Gate) Open() int { return int(g.open.Load()) }

// AcceptErrors returns the number of accept errors retried.
func (g *Gate) AcceptErrors() int64 { return g.retry.Errors() }

// Close closes every connection the gate has admitted, and any it admits
// after, at once: the end of a Shutdown whose server may still be handing
// a connection accepted before its listener closed to its reader, where
// that server's own list of connections, already closed, would miss it.
func (g *Gate) Close() {
	CloseAll(&g.conns)
}

// Listener returns l admitting connections through g. Closing it closes l
// and ends a pause between retries at once.
func (g *Gate) Listener(l net.Listener) net.Listener {
	return &listener{Listener: l, g: g, closed: make(chan struct{})}
}

type listener struct {
	net.Listener
	g      *Gate
	once   sync.Once
	closed chan struct{}
}

func (l *listener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

func (l *listener) Accept() (net.Conn, error) {
	g := l.g
	var pause time.Duration
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			select {
			case <-l.closed:
				return nil, err
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return nil, err
			}
			pause = g.retry.Failed(l.Addr(), err, pause, "open", g.Open())
			t := time.NewTimer(pause)
			select {
			case <-t.C:
			case <-l.closed:
				t.Stop()
				return nil, net.ErrClosed
			}
			continue
		}
		pause = 0
		src := sourceAddr(c.RemoteAddr())
		if g.lim.Allow != nil && !g.lim.Allow(src) {
			g.drop(DropDenied) // counted before the client can see the close
			c.Close()
			continue
		}
		if !g.takeSource(src) {
			g.drop(DropPerSource)
			c.Close()
			continue
		}
		if n := g.open.Add(1); g.lim.MaxConns > 0 && n > int64(g.lim.MaxConns) {
			g.open.Add(-1)
			g.giveSource(src)
			g.drop(DropFull)
			c.Close()
			continue
		}
		gc := &conn{Wrapped: Wrapped{c}, g: g, src: src}
		if !g.conns.Add(gc, nil) {
			gc.Close() // after Close
			continue
		}
		return gc, nil
	}
}

// takeSource counts one more connection from src and reports whether it
// is within Limits.PerSource.
func (g *Gate) takeSource(src netip.Addr) bool {
	if g.lim.PerSource <= 0 || (g.lim.Shared != nil && g.lim.Shared(src)) {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.bySource[src] >= g.lim.PerSource {
		return false
	}
	if g.bySource == nil {
		g.bySource = make(map[netip.Addr]int)
	}
	g.bySource[src]++
	return true
}

// giveSource gives back a connection takeSource counted.
func (g *Gate) giveSource(src netip.Addr) {
	if g.lim.PerSource <= 0 || (g.lim.Shared != nil && g.lim.Shared(src)) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.bySource[src]--; g.bySource[src] <= 0 {
		delete(g.bySource, src) // the map holds only sources with connections open
	}
}

func (g *Gate) drop(why string) {
	if g.lim.Dropped != nil {
		g.lim.Dropped(why)
	}
}

// sourceAddr is a connection's remote address, IPv4-mapped IPv6 unmapped;
// the zero Addr when it has none.
func sourceAddr(a net.Addr) netip.Addr {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.AddrPort().Addr().Unmap()
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// conn is an admitted connection: it gives its place back when closed and,
// with Limits.Idle, reads end (io.EOF, the connection closed) once nothing
// arrived for that long.
type conn struct {
	Wrapped
	g    *Gate
	src  netip.Addr
	once sync.Once
}

func (c *conn) Read(b []byte) (int, error) {
	idle := c.g.lim.Idle
	if idle <= 0 {
		return c.Conn.Read(b)
	}
	if err := c.Conn.SetReadDeadline(time.Now().Add(idle)); err != nil {
		return 0, err
	}
	n, err := c.Conn.Read(b)
	var ne net.Error
	if err != nil && errors.As(err, &ne) && ne.Timeout() {
		// Idle for too long: the peer's connection ends as if it had
		// closed it, which servers treat as the quiet end it is.
		c.Close()
		return n, io.EOF
	}
	return n, err
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.g.open.Add(-1)
		c.g.giveSource(c.src)
		c.g.conns.Remove(c)
	})
	return err
}

// Wrapped is a connection wrapping another, for a wrapper that overrides
// some of its methods: it keeps what a server finds by a type assertion on
// the connection under it, which embedding net.Conn alone would hide.
type Wrapped struct{ net.Conn }

// ReadFrom keeps the kernel's copy (sendfile, splice) of the connection
// under it for a server writing a file.
func (c Wrapped) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// CloseWrite half-closes the connection under it, as net/http does before
// closing a connection whose request it did not read whole.
func (c Wrapped) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

// Shares of the descriptor limit that each kind of TCP front end may hold
// at most, so that the caps together leave an eighth of the descriptors to
// the table, the journal, the UDP sockets, the stores' and peers'
// connections: no front end, nor all of them together, runs the process
// out of descriptors.
const (
	ShareHTTP = 2 // HTTP (API and metrics): a half
	ShareSIP  = 4 // SIP over TCP: a quarter
	ShareDNS  = 8 // DNS over TCP: an eighth
)

// Cap returns a connection cap of at most most and at most the descriptor
// limit divided by share (at least 1); most when the limit is unknown.
func Cap(most, share int) int {
	n := DescriptorLimit()
	if n <= 0 {
		return most
	}
	return max(1, min(most, n/share))
}
