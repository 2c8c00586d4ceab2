// Package sipredirect owns lnpdb's SIP redirect front end: a redirect server
// (RFC 3261 §8.3) that answers an INVITE for a number with a 302 whose
// Contact carries the number portability dip's result in RFC 4694 form,
// served over UDP and TCP with github.com/emiago/sipgo from the live table.
//
// A request URI sip:+12025550123@host (or sip:12025550123@…, sip:2025550123@…,
// tel:+12025550123) is answered
//
//	302 Moved Temporarily
//	Contact: <sip:+12025550123;npdi;rn=+12025550000@host>
//
// keeping the request URI's number, host and the parameters a number and a
// host may carry, each checked (contact.go says which), and adding npdi
// (bare, as RFC 4694 writes it, or npdi=yes for peers that want a value:
// [Config.NPDI]) and, when the number is ported or pooled to another switch (its LRN
// differs from the number), rn=+1LRN; the Contact is one URI, with no
// headers. A request URI that already carries npdi was dipped before: it is
// redirected to itself, rn as it came, without a second dip (RFC 4694 §4).
// A vacant number is answered 404, something that is not a NANP number 484
// with a Reason header saying why, a host that is no host name or address
// 400, and a dip that cannot be done (no table, a damaged one) 503. OPTIONS for a number is answered
// like an INVITE; OPTIONS without one (a health probe) 200.
//
// The server is stateless (RFC 3261 §8.2.7), as redirect servers may be: it
// answers every request, retransmissions included, at once and keeps no
// transaction; a lost 302 is answered again when the INVITE is retransmitted,
// with the same To tag (a hash of the request's transaction identifiers), and
// ACKs are absorbed. sipgo parses requests and writes responses; over TCP its
// transport layer serves the connections; over UDP datagrams are read and
// answered in batches, each answer sent back to the address it came from
// (as with rport, RFC 3581). sipgo's transaction layer, which would keep a
// state machine and timers for every INVITE, is not used.
//
// Over TCP the server holds at most [Config.TCPMaxConns] connections and
// closes one idle for [Config.TCPIdle], as Kamailio's tcp_max_connections
// and tcp_connection_lifetime bound a proxy's; a connection beyond the cap
// is closed as it is accepted, and a failed accept (descriptors run out) is
// retried, never ending the server (internal/frontend/sockets's Gate).
//
// An allow-list of source networks, when set, drops everything else
// unanswered, as a peer does: over UDP a source can be spoofed, and a 403
// would be sent to whoever the datagram names; over TCP a connection from
// outside it is closed at accept, before a byte is read. What is dropped
// is counted (lnpdb_dip_dropped_total{proto="sip",reason="denied"}).
// The server reads the table through [Tables] on every request, so it
// follows reloads and live updates.
package sipredirect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/emiago/sipgo/sip"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/dipstat"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/sockets"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/udpbatch"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/lrn"
)

// DefaultPort is SIP's port.
const DefaultPort = 5060

// Defaults of Config's TCP bounds: Kamailio's tcp_max_connections and
// tcp_connection_lifetime. A peer keeping its connection open sends a
// CRLF keep-alive (RFC 5626 §4.4.1) more often than that.
const (
	DefaultTCPMaxConns = 2048
	DefaultTCPIdle     = 120 * time.Second
)

// Tables gives the server the table to answer from; DB returns nil when
// none is loaded.
type Tables interface {
	DB() *format.DB
}

// Config configures a Server.
type Config struct {
	Tables Tables
	// Allow lists the source networks served; empty: every source.
	Allow []netip.Prefix
	// TCPMaxConns caps the TCP connections open at once, across every
	// listener; 0: DefaultTCPMaxConns.
	TCPMaxConns int
	// TCPIdle closes a TCP connection nothing arrived on for this long;
	// 0: DefaultTCPIdle.
	TCPIdle time.Duration
	// NPDI is how a dipped Contact writes npdi; the zero value is
	// RFC 4694's bare ";npdi".
	NPDI    NPDI
	Metrics *dipstat.Metrics // nil: no metrics
	Logger  *slog.Logger     // nil: no logs
}

// Server is the redirect server.
type Server struct {
	cfg Config
	log *slog.Logger
	tp  *sip.TransportLayer
	tcp *sockets.Gate
	udp *sockets.Retrier // UDP read errors

	listeners sockets.Set[io.Closer]
	inflight  sockets.Inflight
}

// NPDI is the form of the npdi parameter a dipped Contact carries.
// RFC 4694 §4 defines npdi as a parameter without a value; some switches
// and carriers write, or expect, npdi=yes. A request's npdi is recognised
// by its name in either form, whatever NPDI is.
type NPDI int

// The forms of npdi.
const (
	NPDIBare NPDI = iota // ";npdi" (RFC 4694; lnpdb's ENUM answers)
	NPDIYes              // ";npdi=yes"
)

// ParseNPDI reads a form's name: "bare" or "yes".
func ParseNPDI(s string) (NPDI, error) {
	switch s {
	case "bare":
		return NPDIBare, nil
	case "yes":
		return NPDIYes, nil
	}
	return 0, fmt.Errorf("sipredirect: npdi form %q is neither bare nor yes", s)
}

// String returns the form's name, as ParseNPDI reads it.
func (n NPDI) String() string {
	if n == NPDIYes {
		return "yes"
	}
	return "bare"
}

func (n NPDI) param() param {
	if n == NPDIYes {
		return param{"npdi", "yes"}
	}
	return param{"npdi", ""}
}

// New returns a Server; cfg.Tables is required.
func New(cfg Config) (*Server, error) {
	if cfg.Tables == nil {
		return nil, errors.New("sipredirect: Config.Tables is required")
	}
	if cfg.NPDI != NPDIBare && cfg.NPDI != NPDIYes {
		return nil, fmt.Errorf("sipredirect: Config.NPDI %d is no form of npdi", cfg.NPDI)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	libLog := routeLibLog(log)
	tp := sip.NewTransportLayer(net.DefaultResolver, sip.NewParser(), nil, sip.WithTransportLayerLogger(libLog))
	s := &Server{cfg: cfg, log: log, tp: tp, udp: udpbatch.NewRetrier(log)}
	lim := sockets.Limits{MaxConns: cfg.TCPMaxConns, Idle: cfg.TCPIdle, Dropped: cfg.Metrics.Dropped, Logger: log}
	if lim.MaxConns <= 0 {
		lim.MaxConns = DefaultTCPMaxConns
	}
	if lim.Idle <= 0 {
		lim.Idle = DefaultTCPIdle
	}
	if len(cfg.Allow) > 0 {
		lim.Allow = s.allowedAddr
	}
	s.tcp = sockets.NewGate(lim)
	tp.OnMessage(s.handle)
	return s, nil
}

// handle answers one message from the transport layer.
func (s *Server) handle(msg sip.Message) {
	req, ok := msg.(*sip.Request)
	if !ok || req.IsAck() || !wellFormed(req) {
		return // responses are not ours to take; ACKs end nothing here
	}
	if !s.allowed(req.Source()) {
		s.cfg.Metrics.Dropped(dipstat.DropDenied)
		return
	}
	if !s.inflight.Enter() {
		return // shutting down
	}
	defer s.inflight.Leave()
	res := s.Respond(req)
	if err := s.tp.WriteMsg(res); err != nil {
		s.log.Debug("sipredirect: response not sent", "to", req.Source(), "err", err)
	}
}

// ServeUDP answers requests arriving on pc until Shutdown. A UDP socket is
// read and answered in batches (internal/frontend/udpbatch) by GOMAXPROCS
// goroutines, sipgo parsing and writing each message; any other
// PacketConn goes through sipgo's transport layer.
func (s *Server) ServeUDP(pc net.PacketConn) error {
	if !s.listeners.Add(pc, nil) {
		pc.Close()
		return ErrServerClosed
	}
	var err error
	if udp, ok := pc.(*net.UDPConn); ok {
		err = udpbatch.Serve(udp, runtime.GOMAXPROCS(0), maxDatagram, maxDatagram, s.answerDatagram, s.udp)
	} else {
		err = s.tp.ServeUDP(pc)
	}
	return s.served(pc, err)
}

// maxDatagram bounds a request read over UDP; RFC 3261 §18.1.1 keeps UDP
// requests under the path MTU, and a redirect server needs no bodies.
const maxDatagram = 8192

// answerDatagram is the batched UDP loop's handler: the request in
// datagram, from from, answered into dst.
func (s *Server) answerDatagram(dst, datagram []byte, from net.Addr) ([]byte, bool) {
	if len(bytes.Trim(datagram, "\r\n\x00")) == 0 || len(datagram) > maxDatagram {
		return dst, false // a keep-alive, or too long to be ours
	}
	if len(s.cfg.Allow) > 0 {
		if u, ok := from.(*net.UDPAddr); !ok || !s.allowedAddr(u.AddrPort().Addr().Unmap()) {
			s.cfg.Metrics.Dropped(dipstat.DropDenied)
			return dst, false // before a byte is parsed
		}
	}
	// An ACK (a caller's, for the final answer it got) and a response get
	// no answer: told by their first bytes, they cost no parse. A dip is
	// INVITE, answer, ACK, so this spares a third of the parsing.
	if start := bytes.TrimLeft(datagram, "\r\n"); bytes.HasPrefix(start, []byte("ACK ")) || bytes.HasPrefix(start, []byte("SIP/")) {
		return dst, false
	}
	msg, err := sip.ParseMessage(datagram)
	if err != nil {
		s.log.Debug("sipredirect: datagram does not parse", "from", from, "err", err)
		return dst, false
	}
	req, ok := msg.(*sip.Request)
	if !ok || req.IsAck() || !wellFormed(req) {
		return dst, false
	}
	if !s.inflight.Enter() {
		return dst, false // shutting down
	}
	defer s.inflight.Leave()
	req.SetTransport("UDP")
	req.SetSource(from.String())
	w := appendWriter{dst}
	s.Respond(req).StringWrite(&w)
	return w.b, true
}

// wellFormed reports whether req has what an answer is built from: SIP/2.0,
// a top Via naming its transport and sender, and the headers a response
// copies, its From and To among them reading back as what they were when
// written: sipgo accepts some addresses (a From of "::A0") that it writes in
// a form it then refuses. Anything else is dropped unanswered, as sipgo's
// transaction layer would: an answer built from it would not parse either.
func wellFormed(req *sip.Request) bool {
	via := req.Via()
	return req.SipVersion == "SIP/2.0" && via != nil && via.ProtocolName == "SIP" && via.ProtocolVersion == "2.0" &&
		via.Transport != "" && via.Host != "" && req.CSeq() != nil && req.CallID() != nil &&
		req.From() != nil && req.To() != nil && readsBack(req.From().Value()) && readsBack(req.To().Value())
}

// readsBack reports whether an address header's value, as sipgo writes it,
// parses as a From or To. Only From and To are checked: the fuzzer
// (FuzzAnswerDatagram) finds no Via, CSeq or Call-ID that does not, and a
// check of every copied header doubles the cost of a dip.
func readsBack(v string) bool {
	var u sip.Uri
	var p sip.HeaderParams
	_, err := sip.ParseAddressValue(v, &u, &p)
	return err == nil && !u.Wildcard
}

// appendWriter is an io.StringWriter appending to a byte slice.
type appendWriter struct{ b []byte }

func (w *appendWriter) WriteString(s string) (int, error) {
	w.b = append(w.b, s...)
	return len(s), nil
}

// ServeTCP answers requests on connections accepted from l until Shutdown,
// within the server's TCP bounds; an accept error does not end it.
func (s *Server) ServeTCP(l net.Listener) error {
	gl := s.tcp.Listener(l)
	if !s.listeners.Add(gl, nil) {
		gl.Close()
		return ErrServerClosed
	}
	return s.served(gl, s.tp.ServeTCP(gl))
}

// TCPConns returns the number of TCP connections open.
func (s *Server) TCPConns() int { return s.tcp.Open() }

// ErrServerClosed is returned by the Serve methods after Shutdown.
var ErrServerClosed = errors.New("sipredirect: server closed")

// served is what a Serve on l returns when it ends with err.
func (s *Server) served(l io.Closer, err error) error {
	if s.listeners.Remove(l) {
		return ErrServerClosed
	}
	return err
}

// Shutdown stops reading requests, waits for the ones being answered (or
// for ctx to end), then closes the transport layer's connections, and
// every TCP connection the gate admitted: the transport layer adds a
// connection accepted just before its listener closed to its list after
// closing that list, and would read from it for as long as it sends.
func (s *Server) Shutdown(ctx context.Context) error {
	sockets.CloseAll(&s.listeners)
	err := s.inflight.Wait(ctx)
	if cerr := s.tp.Close(); cerr != nil && err == nil && !errors.Is(cerr, net.ErrClosed) {
		err = cerr
	}
	s.tcp.Close()
	return err
}

// Respond returns the response to req: the whole protocol handling of the
// server, without the transport (exported for tests and fuzzing).
func (s *Server) Respond(req *sip.Request) *sip.Response {
	start := time.Now()
	m := s.cfg.Metrics
	m.Request()
	switch req.Method {
	case sip.INVITE, sip.OPTIONS:
	case sip.CANCEL:
		// The INVITE was answered at once: nothing is left to cancel.
		m.Answer(dipstat.Refused, start)
		return newResponse(req, 481, "Call/Transaction Does Not Exist")
	default:
		m.Answer(dipstat.Refused, start)
		res := newResponse(req, 405, "Method Not Allowed")
		res.AppendHeader(sip.NewHeader("Allow", "INVITE, ACK, CANCEL, OPTIONS"))
		return res
	}
	t, why := parseTarget(&req.Recipient)
	if why == errNoNumber && req.Method == sip.OPTIONS {
		m.Answer(dipstat.Refused, start)
		res := newResponse(req, 200, "OK")
		res.AppendHeader(sip.NewHeader("Allow", "INVITE, ACK, CANCEL, OPTIONS"))
		return res
	}
	if why != nil {
		m.Answer(dipstat.Invalid, start)
		return reject(req, why.code, why.phrase, why.text)
	}
	if t.npdi() {
		// Dipped before (RFC 4694 §4): route where the URI says, its
		// number's rn kept as it came, whether or not it is a NANP number.
		m.Answer(dipstat.Skipped, start)
		return redirect(req, t.self())
	}
	tel, err := lrn.ParseTelURI(t.telURI())
	if err != nil {
		m.Answer(dipstat.Invalid, start)
		return reject(req, 484, "Address Incomplete", "not a NANP number")
	}
	db := s.cfg.Tables.DB()
	if db == nil {
		m.Answer(dipstat.Error, start)
		return reject(req, 503, "Service Unavailable", "no number portability table loaded")
	}
	var r lrn.Result
	err = lrn.LookupInto(db, tel.Number, lrn.Options{}, &r)
	outcome := dipstat.Outcome(&r, err)
	m.Answer(outcome, start)
	switch outcome {
	case dipstat.Vacant:
		return reject(req, 404, "Not Found", "vacant number")
	case dipstat.Invalid:
		return reject(req, 484, "Address Incomplete", "not a NANP number")
	case dipstat.Error:
		s.log.Warn("sipredirect: lookup failed", "number", tel.Number, "err", err)
		return reject(req, 503, "Service Unavailable", "number portability lookup failed")
	}
	return redirect(req, t.dipped(r.TelURI(), s.cfg.NPDI))
}

func redirect(req *sip.Request, to *sip.Uri) *sip.Response {
	res := newResponse(req, 302, "Moved Temporarily")
	res.AppendHeader(&sip.ContactHeader{Address: *to})
	return res
}

// reject answers with code and a Reason header (RFC 3326) saying why.
func reject(req *sip.Request, code int, phrase, why string) *sip.Response {
	res := newResponse(req, code, phrase)
	res.AppendHeader(sip.NewHeader("Reason", "SIP;cause="+strconv.Itoa(code)+";text="+strconv.Quote(why)))
	return res
}

func (s *Server) allowed(source string) bool {
	if len(s.cfg.Allow) == 0 {
		return true
	}
	ap, err := netip.ParseAddrPort(source)
	if err != nil {
		return false
	}
	return s.allowedAddr(ap.Addr().Unmap())
}

func (s *Server) allowedAddr(a netip.Addr) bool {
	for _, p := range s.cfg.Allow {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// sipgo's own logging. What sipgo logs while it serves is a peer's doing:
// a connection reset ("Read error", at Error), bytes that do not parse
// (with the bytes), a keep-alive not answered, its connection reference
// count gone below zero when the read loop and the TCP gate both close a
// connection (at Warn, through sip.DefaultLogger, that is slog.Default, and
// so outside the server's log format). None asks anything of an operator,
// and a peer must not be able to fill the log: every sipgo record goes to
// the server's logger at Debug, tagged lib=sipgo, the transport layer's by
// its option and the rest by sip.SetDefaultLogger, set once per process and
// pointed at the latest Server's logger.
var (
	libDefaultOnce sync.Once
	libDefault     atomic.Pointer[slog.Logger] // the latest Server's, for sip.DefaultLogger
)

// routeLibLog points sipgo's package logger at log and returns the logger
// for the transport layer: both write log's records at Debug.
func routeLibLog(log *slog.Logger) *slog.Logger {
	lib := slog.New(debugHandler{log.Handler()}).With("lib", "sipgo")
	libDefault.Store(lib)
	libDefaultOnce.Do(func() { sip.SetDefaultLogger(slog.New(latestHandler{})) })
	return lib
}

// debugHandler writes every record at Debug.
type debugHandler struct{ h slog.Handler }

func (d debugHandler) Enabled(ctx context.Context, _ slog.Level) bool {
	return d.h.Enabled(ctx, slog.LevelDebug)
}

func (d debugHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, slog.LevelDebug, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool { out.AddAttrs(a); return true })
	return d.h.Handle(ctx, out)
}

func (d debugHandler) WithAttrs(as []slog.Attr) slog.Handler { return debugHandler{d.h.WithAttrs(as)} }
func (d debugHandler) WithGroup(name string) slog.Handler    { return debugHandler{d.h.WithGroup(name)} }

// latestHandler writes to the latest Server's sipgo logger (libDefault),
// with the attributes and groups sipgo added on the way.
type latestHandler struct {
	with []func(slog.Handler) slog.Handler
}

func (l latestHandler) target() slog.Handler {
	lg := libDefault.Load()
	if lg == nil {
		return slog.DiscardHandler
	}
	h := lg.Handler()
	for _, w := range l.with {
		h = w(h)
	}
	return h
}

func (l latestHandler) Enabled(ctx context.Context, lv slog.Level) bool {
	return l.target().Enabled(ctx, lv)
}

func (l latestHandler) Handle(ctx context.Context, r slog.Record) error {
	return l.target().Handle(ctx, r)
}

func (l latestHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return latestHandler{append(slices.Clip(l.with), func(h slog.Handler) slog.Handler { return h.WithAttrs(as) })}
}

func (l latestHandler) WithGroup(name string) slog.Handler {
	return latestHandler{append(slices.Clip(l.with), func(h slog.Handler) slog.Handler { return h.WithGroup(name) })}
}

// newResponse is sip.NewResponseFromRequest with the To tag a stateless
// server must give (RFC 3261 §8.2.7): the same for every retransmission of
// a request, so that the ACK and a retransmitted answer match. The request
// is named by its Call-ID, From tag, CSeq and top Via branch.
func newResponse(req *sip.Request, code int, phrase string) *sip.Response {
	var to *sip.ToHeader
	if h := req.To(); h != nil && !h.Params.Has("tag") {
		to = h
		h.Params.Add("tag", statelessTag(req))
	}
	res := sip.NewResponseFromRequest(req, code, phrase, nil)
	if to != nil {
		to.Params.Remove("tag") // the request stays as it came
	}
	return res
}

func statelessTag(req *sip.Request) string {
	d := xxhash.New()
	if h := req.CallID(); h != nil {
		d.WriteString(h.Value())
	}
	d.WriteString("\x00")
	if h := req.From(); h != nil {
		t, _ := h.Params.Get("tag")
		d.WriteString(t)
	}
	d.WriteString("\x00")
	if h := req.CSeq(); h != nil {
		d.WriteString(h.Value())
	}
	d.WriteString("\x00")
	if h := req.Via(); h != nil {
		b, _ := h.Params.Get("branch")
		d.WriteString(b)
	}
	return strconv.FormatUint(d.Sum64(), 36)
}
