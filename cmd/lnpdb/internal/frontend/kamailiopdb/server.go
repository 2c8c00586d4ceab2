// Package kamailiopdb owns lnpdb's Kamailio pdb front end: the UDP protocol that
// Kamailio's pdb module (pdb_query) and the pdb_server of its utils/pdbt
// speak, version 1 and the legacy unversioned form (as documented in
// utils/pdbt/docs/network_protocol.txt and modules/pdb/common.h), and the
// server that answers it from the live table.
//
// A query carries a number, in practice the R-URI user: digits only, with
// or without the country code 1. The answer is the carrier id of the
// number's current carrier (see [Carriers]): CodeOK with the id for an
// assigned number, CodeNotFound for a vacant one, CodeNotNumber for anything
// that is not a NANP number. Kamailio stores the id in an AVP, 0 for
// anything but CodeOK.
//
// Unlike pdb_server, the server listens on IPv4 and IPv6, follows table
// reloads and live updates (it reads the table through [Tables] on every
// query), and stays silent rather than answer when it has no table or the
// table fails: Kamailio asks all its servers at once and takes the first
// answer, so silence lets another server answer, where a wrong "not found"
// would route the call.
package kamailiopdb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/dipstat"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/sockets"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/udpbatch"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/lrn"
)

// DefaultPort is pdb_server's port.
const DefaultPort = 5574

// Tables gives the server the table to answer from; DB returns nil when
// none is loaded.
type Tables interface {
	DB() *format.DB
}

// Config configures a Server.
type Config struct {
	Tables   Tables
	Carriers *Carriers        // nil: every found number answers OtherCarrier
	Metrics  *dipstat.Metrics // nil: no metrics
	Logger   *slog.Logger     // nil: no logs
	Readers  int              // goroutines reading the socket; 0: GOMAXPROCS
}

// Server answers pdb queries on UDP sockets.
type Server struct {
	cfg   Config
	log   *slog.Logger
	retry *sockets.Retrier // read errors

	conns sockets.Set[net.PacketConn]
	wg    sync.WaitGroup // the readers
}

// New returns a Server; cfg.Tables is required.
func New(cfg Config) (*Server, error) {
	if cfg.Tables == nil {
		return nil, errors.New("pdb: Config.Tables is required")
	}
	if cfg.Readers <= 0 {
		cfg.Readers = runtime.GOMAXPROCS(0)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{cfg: cfg, log: log, retry: udpbatch.NewRetrier(log)}, nil
}

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("pdb: server closed")

// Serve answers queries arriving on conn until Shutdown, then returns
// ErrServerClosed; any other read error ends it with that error. conn is
// closed on return.
func (s *Server) Serve(conn net.PacketConn) error {
	if !s.conns.Add(conn, func() { s.wg.Add(s.cfg.Readers) }) {
		conn.Close()
		return ErrServerClosed
	}

	errc := make(chan error, s.cfg.Readers)
	for range s.cfg.Readers {
		go func() {
			defer s.wg.Done()
			errc <- s.read(conn)
		}()
	}
	err := <-errc
	conn.Close() // stops the other readers
	if s.conns.Remove(conn) {
		return ErrServerClosed
	}
	return err
}

// Shutdown stops every Serve and waits until the queries being answered are
// answered, or ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	sockets.CloseAll(&s.conns)
	return sockets.Wait(ctx, &s.wg)
}

// read is one socket's service: batched for a UDP socket, a datagram at a
// time for any other PacketConn.
func (s *Server) read(conn net.PacketConn) error {
	udp, ok := conn.(*net.UDPConn)
	if !ok {
		return s.readOne(conn)
	}
	err := udpbatch.Serve(udp, 1, MaxPacket, MaxPacket+16, func(dst, datagram []byte, _ net.Addr) ([]byte, bool) {
		return s.Answer(dst, datagram)
	}, s.retry)
	if err != nil {
		return fmt.Errorf("pdb: %w", err)
	}
	return nil
}

// readOne serves a PacketConn without batch I/O, a datagram at a time.
func (s *Server) readOne(conn net.PacketConn) error {
	var in [MaxPacket + 1]byte
	var out [MaxPacket + 16]byte
	var pause time.Duration
	for {
		n, addr, err := conn.ReadFrom(in[:])
		if err == nil {
			pause = 0
			if reply, ok := s.Answer(out[:0], in[:n]); ok {
				if _, werr := conn.WriteTo(reply, addr); werr != nil {
					s.log.Debug("pdb: reply not sent", "to", addr, "err", werr)
				}
			}
			continue
		}
		if udpbatch.ReadFailed(err, conn.LocalAddr(), s.retry, &pause) {
			return nil
		}
	}
}

// Answer appends to dst the reply to datagram and reports whether there is
// one: a datagram that is no request, and a query the server cannot answer
// for want of a working table, get none. It is the whole protocol handling
// of a server, exported for tests and load clients.
func (s *Server) Answer(dst, datagram []byte) ([]byte, bool) {
	start := time.Now()
	m := s.cfg.Metrics
	m.Request()
	req, err := ParseRequest(datagram)
	if err != nil {
		m.Answer(dipstat.Malformed, start)
		return dst, false
	}
	// pdb_server takes digits only; a leading '+' (an E.164 R-URI user)
	// is accepted too.
	digits := req.Number
	if len(digits) > 1 && digits[0] == '+' {
		digits = digits[1:]
	}
	if !IsDigits(digits) {
		m.Answer(dipstat.Invalid, start)
		return AppendReply(dst, req, CodeNotNumber, 0), true
	}
	db := s.cfg.Tables.DB()
	if db == nil {
		m.Answer(dipstat.Error, start)
		return dst, false
	}
	// The number is looked up in place: LookupInto keeps no reference to
	// it beyond r, which is dropped before the datagram buffer is reused.
	var r lrn.Result
	err = lrn.LookupInto(db, unsafe.String(unsafe.SliceData(req.Number), len(req.Number)), lrn.Options{}, &r)
	outcome := dipstat.Outcome(&r, err)
	m.Answer(outcome, start)
	switch outcome {
	case dipstat.Invalid:
		return AppendReply(dst, req, CodeNotNumber, 0), true
	case dipstat.Vacant:
		return AppendReply(dst, req, CodeNotFound, 0), true
	case dipstat.Error:
		s.log.Warn("pdb: lookup failed; not answering", "number", string(req.Number), "err", err)
		return dst, false
	}
	return AppendReply(dst, req, CodeOK, s.cfg.Carriers.ID(r.SPID)), true
}
