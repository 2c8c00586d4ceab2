package enum

import (
	"context"
	"errors"
	"net"
	"runtime"
	"sync"

	"github.com/lnpdb/lnpdb/internal/udpbatch"
	"github.com/miekg/dns"
)

// ErrServerClosed is returned by the Serve methods after Shutdown.
var ErrServerClosed = errors.New("enum: server closed")

// Server serves a Handler on any number of UDP sockets and TCP listeners.
type Server struct {
	h *Handler

	mu      sync.Mutex
	closed  bool
	servers map[*dns.Server]struct{}
	udp     map[*net.UDPConn]struct{}
}

// NewServer returns a Server answering with h.
func NewServer(h *Handler) *Server {
	return &Server{h: h, servers: make(map[*dns.Server]struct{}), udp: make(map[*net.UDPConn]struct{})}
}

// ServeUDP answers queries arriving on pc until Shutdown. A UDP socket is
// read and answered in batches (internal/udpbatch) by GOMAXPROCS
// goroutines, miekg/dns decoding and encoding each message; any other
// PacketConn is served by miekg/dns's server.
func (s *Server) ServeUDP(pc net.PacketConn) error {
	udp, ok := pc.(*net.UDPConn)
	if !ok {
		return s.serve(&dns.Server{PacketConn: pc, Handler: s.h, Net: "udp", UDPSize: dns.DefaultMsgSize})
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		pc.Close()
		return ErrServerClosed
	}
	s.udp[udp] = struct{}{}
	s.mu.Unlock()
	err := udpbatch.Serve(udp, runtime.GOMAXPROCS(0), maxUDP, maxUDP, func(dst, datagram []byte, _ net.Addr) ([]byte, bool) {
		return s.h.AnswerWire(dst, datagram)
	})
	s.mu.Lock()
	delete(s.udp, udp)
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return ErrServerClosed
	}
	return err
}

// maxUDP bounds queries read and answers written over UDP: the largest
// EDNS0 buffer size clients advertise in practice.
const maxUDP = 4096

// ServeTCP answers queries on connections accepted from l until Shutdown.
func (s *Server) ServeTCP(l net.Listener) error {
	return s.serve(&dns.Server{Listener: l, Handler: s.h, Net: "tcp"})
}

func (s *Server) serve(srv *dns.Server) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		closeListeners(srv)
		return ErrServerClosed
	}
	s.servers[srv] = struct{}{}
	s.mu.Unlock()
	err := srv.ActivateAndServe()
	s.mu.Lock()
	delete(s.servers, srv)
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return ErrServerClosed
	}
	return err
}

// Shutdown stops every Serve, waiting for the queries being answered until
// ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	servers := make([]*dns.Server, 0, len(s.servers))
	for srv := range s.servers {
		servers = append(servers, srv)
	}
	for c := range s.udp {
		c.Close() // a query being answered finishes; its answer may not be sent
	}
	s.mu.Unlock()
	var first error
	for _, srv := range servers {
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
