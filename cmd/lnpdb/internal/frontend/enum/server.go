package enum

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/rrl"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/dipstat"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/sockets"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/udpbatch"
	"github.com/miekg/dns"
)

// ErrServerClosed is returned by the Serve methods after Shutdown.
var ErrServerClosed = errors.New("enum: server closed")

// TCP bounds, as BIND's: at most DefaultTCPMaxConns connections open at
// once (BIND's tcp-clients), tcpInitialTimeout for a connection's first
// query, tcpIdleTimeout between queries (RFC 7766 §6.2.3 asks for seconds,
// not minutes) and at most tcpMaxQueries queries on one connection.
const (
	DefaultTCPMaxConns = 150
	tcpInitialTimeout  = 2 * time.Second
	tcpIdleTimeout     = 8 * time.Second
	tcpMaxQueries      = 128
)

// ServerConfig configures a Server.
type ServerConfig struct {
	// TCPMaxConns caps the TCP connections open at once, across every
	// listener; 0: DefaultTCPMaxConns.
	TCPMaxConns int
	// RRL limits the answers sent over UDP per client network (BIND's
	// response-rate limiting); nil: no limit. TCP is never limited: a
	// TCP client's address is not spoofed.
	RRL     *rrl.Limiter
	Metrics *dipstat.Metrics // counts what is dropped; nil: none
	Logger  *slog.Logger     // takes accept errors; nil: none
}

// Server serves a Handler on any number of UDP sockets and TCP listeners.
type Server struct {
	h       *Handler
	tcp     *sockets.Gate
	rrl     *rrl.Limiter
	metrics *dipstat.Metrics

	servers sockets.Set[*dns.Server]
	udp     sockets.Set[*net.UDPConn]
	retry   *sockets.Retrier // UDP read errors
}

// NewServer returns a Server answering with h.
func NewServer(h *Handler, cfg ServerConfig) *Server {
	lim := sockets.Limits{MaxConns: cfg.TCPMaxConns, Dropped: cfg.Metrics.Dropped, Logger: cfg.Logger}
	if lim.MaxConns <= 0 {
		lim.MaxConns = DefaultTCPMaxConns
	}
	return &Server{h: h, tcp: sockets.NewGate(lim), rrl: cfg.RRL, metrics: cfg.Metrics, retry: udpbatch.NewRetrier(cfg.Logger)}
}

// ServeUDP answers queries arriving on pc until Shutdown. A UDP socket is
// read and answered in batches (internal/frontend/udpbatch) by GOMAXPROCS
// goroutines, miekg/dns decoding and encoding each message; any other
// PacketConn is served by miekg/dns's server.
func (s *Server) ServeUDP(pc net.PacketConn) error {
	udp, ok := pc.(*net.UDPConn)
	if !ok {
		return s.serve(&dns.Server{PacketConn: pc, Handler: s.h, Net: "udp", UDPSize: dns.DefaultMsgSize})
	}
	if !s.udp.Add(udp, nil) {
		pc.Close()
		return ErrServerClosed
	}
	err := udpbatch.Serve(udp, runtime.GOMAXPROCS(0), maxUDP, maxUDP, s.answerDatagram, s.retry)
	if s.udp.Remove(udp) {
		return ErrServerClosed
	}
	return err
}

// answerDatagram answers the query in datagram from from into dst, within
// the response rate limit.
func (s *Server) answerDatagram(dst, datagram []byte, from net.Addr) ([]byte, bool) {
	out, ok := s.h.AnswerWire(dst, datagram)
	if !ok || s.rrl == nil {
		return out, ok
	}
	switch s.rrl.Answer(addrOf(from), time.Now()) {
	case rrl.Drop:
		s.metrics.Dropped(dipstat.DropRateLimited)
		return dst, false
	case rrl.Truncate:
		s.metrics.Dropped(dipstat.DropRateLimited)
		return truncated(out)
	}
	return out, true
}

// truncated cuts the packed response out to its header and question, TC
// set and no records: what a rate-limited client is sent so that it
// retries over TCP. A response it cannot cut is not sent.
func truncated(out []byte) ([]byte, bool) {
	if len(out) < 12 || out[4] != 0 || out[5] != 1 {
		return out[:0], false
	}
	i := 12
	for {
		if i >= len(out) {
			return out[:0], false
		}
		l := int(out[i])
		if l == 0 {
			i++
			break
		}
		if l&0xC0 != 0 { // a question's name is never compressed
			return out[:0], false
		}
		i += 1 + l
	}
	if i += 4; i > len(out) {
		return out[:0], false
	}
	out = out[:i]
	out[2] |= 0x02   // TC
	clear(out[6:12]) // no answer, authority or additional records
	return out, true
}

func addrOf(a net.Addr) netip.Addr {
	if u, ok := a.(*net.UDPAddr); ok {
		return u.AddrPort().Addr()
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap.Addr()
}

// maxUDP bounds queries read and answers written over UDP: the largest
// EDNS0 buffer size clients advertise in practice.
const maxUDP = 4096

// ServeTCP answers queries on connections accepted from l until Shutdown,
// within the server's TCP bounds; an accept error does not end it.
func (s *Server) ServeTCP(l net.Listener) error {
	return s.serve(&dns.Server{
		Listener: s.tcp.Listener(l), Handler: s.h, Net: "tcp",
		ReadTimeout:   tcpInitialTimeout,
		IdleTimeout:   func() time.Duration { return tcpIdleTimeout },
		MaxTCPQueries: tcpMaxQueries,
	})
}

// TCPConns returns the number of TCP connections open.
func (s *Server) TCPConns() int { return s.tcp.Open() }

func (s *Server) serve(srv *dns.Server) error {
	if !s.servers.Add(srv, nil) {
		closeListeners(srv)
		return ErrServerClosed
	}
	err := srv.ActivateAndServe()
	if s.servers.Remove(srv) {
		return ErrServerClosed
	}
	return err
}

// Shutdown stops every Serve, waiting for the queries being answered until
// ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	sockets.CloseAll(&s.udp) // a query being answered finishes; its answer may not be sent
	var first error
	for _, srv := range s.servers.Close() {
		if err := srv.ShutdownContext(ctx); err != nil {
			// Not started yet: closing its socket ends ActivateAndServe.
			closeListeners(srv)
			if ctx.Err() != nil && first == nil {
				first = ctx.Err()
			}
		}
	}
	return first
}

func closeListeners(srv *dns.Server) {
	if srv.PacketConn != nil {
		srv.PacketConn.Close()
	}
	if srv.Listener != nil {
		srv.Listener.Close()
	}
}
