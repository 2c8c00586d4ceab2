// Package enum owns lnpdb's ENUM front end: DNS NAPTR answers for E.164
// numbers under e164.arpa. (or another suffix) as RFC 4769 defines them for
// number portability, served over UDP and TCP with github.com/miekg/dns from
// the live table.
//
// A query for the NAPTR records of 3.2.1.0.5.5.5.2.0.2.1.e164.arpa.
// (+1 202 555 0123) is answered, authoritatively, with one record
//
//	100 10 "u" "E2U+pstn:tel" "!^.*$!tel:+12025550123;npdi;rn=+12025550000!" .
//
// carrying rn when the number is ported or pooled to another switch (its LRN
// differs from the number) and ;npdi alone when it routes on itself. A
// vacant number, a name that is no NANP number and a number that is not
// NANP-valid are NXDOMAIN; a name outside the suffix is REFUSED; a number
// with data queried for another type is NODATA. Negative answers carry the
// zone's SOA, whose minimum is the TTL, for negative caching (RFC 2308).
// Over UDP an answer larger than the client's buffer (512 bytes, or its
// EDNS0 size) is truncated with TC set, so that the client retries over TCP.
//
// The handler reads the table through [Tables] on every query, so it follows
// reloads and live updates; with no working table it answers SERVFAIL.
package enum

import (
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/dipstat"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/lrn"
	"github.com/miekg/dns"
)

// Defaults of Config.
const (
	DefaultSuffix = "e164.arpa."
	DefaultTTL    = 60 // seconds: short, as live updates change answers
)

// The NAPTR fields of an answer, as RFC 4769's examples write them.
const (
	Order      = 100
	Preference = 10
	Service    = "E2U+pstn:tel"
)

// Tables gives the handler the table to answer from; DB returns nil when
// none is loaded.
type Tables interface {
	DB() *format.DB
}

// Config configures a Handler.
type Config struct {
	Tables  Tables
	Suffix  string           // zone the numbers live under; "": DefaultSuffix
	TTL     uint32           // of answers and of negative answers; 0: DefaultTTL
	Metrics *dipstat.Metrics // nil: no metrics
	Logger  *slog.Logger     // nil: no logs
}

// Handler answers ENUM queries; it is a dns.Handler.
type Handler struct {
	tables  Tables
	suffix  string // canonical: lower case, fully qualified
	mbox    string // the SOA's: hostmaster.<suffix>
	labels  int    // labels in suffix
	ttl     uint32
	metrics *dipstat.Metrics
	log     *slog.Logger

	serialCache atomic.Pointer[serialAt]
}

// New returns a Handler; cfg.Tables is required, and the suffix must be a
// valid domain name.
func New(cfg Config) (*Handler, error) {
	if cfg.Tables == nil {
		return nil, errors.New("enum: Config.Tables is required")
	}
	suffix := cfg.Suffix
	if suffix == "" {
		suffix = DefaultSuffix
	}
	suffix = dns.CanonicalName(suffix)
	if _, ok := dns.IsDomainName(suffix); !ok || suffix == "." {
		return nil, errors.New("enum: suffix " + cfg.Suffix + " is not a domain name")
	}
	ttl := cfg.TTL
	if ttl == 0 {
		ttl = DefaultTTL
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{tables: cfg.Tables, suffix: suffix, mbox: "hostmaster." + suffix, labels: dns.CountLabel(suffix), ttl: ttl, metrics: cfg.Metrics, log: log}, nil
}

// Suffix returns the zone the handler answers for, canonical.
func (h *Handler) Suffix() string { return h.suffix }

// ServeDNS answers one query.
func (h *Handler) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	resp := h.Answer(req, w.RemoteAddr().Network() == "udp")
	if resp == nil {
		return
	}
	if err := w.WriteMsg(resp); err != nil {
		h.log.Debug("enum: answer not sent", "to", w.RemoteAddr(), "err", err)
	}
}

// AnswerWire answers the query in datagram, appending the packed response
// (truncated to the client's UDP buffer) to dst, and reports whether there
// is one: a datagram that does not decode as a DNS message, and a response,
// get none.
func (h *Handler) AnswerWire(dst, datagram []byte) ([]byte, bool) {
	req := requests.Get().(*dns.Msg)
	defer requests.Put(req)
	if err := req.Unpack(datagram); err != nil {
		start := time.Now()
		h.metrics.Request()
		h.metrics.Answer(dipstat.Malformed, start)
		return dst, false
	}
	resp := responses.Get().(*dns.Msg)
	defer responses.Put(resp)
	// Reused: the sections keep their arrays, every other field starts over.
	*resp = dns.Msg{Answer: resp.Answer[:0], Ns: resp.Ns[:0], Extra: resp.Extra[:0]}
	if !h.respond(req, resp, true) {
		return dst, false
	}
	out, err := resp.PackBuffer(dst[:cap(dst)]) // packs in place when it fits
	if err != nil {
		h.log.Warn("enum: answer does not pack", "err", err)
		return dst, false
	}
	return out, true
}

// requests are the messages AnswerWire decodes queries into (Unpack sets
// every field of the header and replaces every section), responses those it
// answers in.
var (
	requests  = sync.Pool{New: func() any { return new(dns.Msg) }}
	responses = sync.Pool{New: func() any { return new(dns.Msg) }}
)

// Answer returns the response to req, or nil when req is itself a
// response (never answered, so that two servers cannot loop). Over UDP
// (udp set) the response is truncated to the client's buffer size.
func (h *Handler) Answer(req *dns.Msg, udp bool) *dns.Msg {
	resp := new(dns.Msg)
	if !h.respond(req, resp, udp) {
		return nil
	}
	return resp
}

// respond fills the empty resp with the response to req, as Answer
// describes, and reports whether there is one.
func (h *Handler) respond(req, resp *dns.Msg, udp bool) bool {
	start := time.Now()
	h.metrics.Request()
	if req.Response {
		h.metrics.Answer(dipstat.Malformed, start)
		return false
	}
	outcome := h.answer(req, resp)
	resp.Compress = true
	if opt := req.IsEdns0(); opt != nil {
		size := opt.UDPSize()
		resp.SetEdns0(max(size, dns.MinMsgSize), false)
		if udp {
			resp.Truncate(int(size))
		}
	} else if udp {
		resp.Truncate(dns.MinMsgSize)
	}
	h.metrics.Answer(outcome, start)
	return true
}

// answer fills resp and returns the dip outcome for the metrics.
func (h *Handler) answer(req, resp *dns.Msg) string {
	if req.Opcode != dns.OpcodeQuery {
		resp.SetRcode(req, dns.RcodeNotImplemented)
		return dipstat.Refused
	}
	if len(req.Question) != 1 {
		resp.SetRcode(req, dns.RcodeFormatError)
		return dipstat.Malformed
	}
	resp.SetReply(req)
	q := req.Question[0]
	name := dns.CanonicalName(q.Name)
	if q.Qclass != dns.ClassINET && q.Qclass != dns.ClassANY || !h.inZone(name) {
		resp.Rcode = dns.RcodeRefused
		return dipstat.Refused
	}
	resp.Authoritative = true
	number, kind := h.number(name)
	switch kind {
	case nameApex:
		if q.Qtype == dns.TypeSOA || q.Qtype == dns.TypeANY {
			resp.Answer = append(resp.Answer, h.soa())
		} else {
			resp.Ns = append(resp.Ns, h.soa())
		}
		return dipstat.Refused
	case namePrefix: // an empty non-terminal above numbers: NODATA
		resp.Ns = append(resp.Ns, h.soa())
		return dipstat.Invalid
	case nameNone:
		resp.Rcode = dns.RcodeNameError
		resp.Ns = append(resp.Ns, h.soa())
		return dipstat.Invalid
	}
	db := h.tables.DB()
	if db == nil {
		resp.Rcode = dns.RcodeServerFailure
		return dipstat.Error
	}
	var r lrn.Result
	err := lrn.LookupInto(db, number, lrn.Options{}, &r)
	outcome := dipstat.Outcome(&r, err)
	switch outcome {
	case dipstat.Error:
		h.log.Warn("enum: lookup failed", "number", number, "err", err)
		resp.Rcode = dns.RcodeServerFailure
		return outcome
	case dipstat.Invalid, dipstat.Vacant:
		resp.Rcode = dns.RcodeNameError
		resp.Ns = append(resp.Ns, h.soa())
		return outcome
	}
	if q.Qtype != dns.TypeNAPTR && q.Qtype != dns.TypeANY {
		resp.Ns = append(resp.Ns, h.soa())
		return outcome
	}
	resp.Answer = append(resp.Answer, &dns.NAPTR{
		Hdr:         dns.RR_Header{Name: q.Name, Rrtype: dns.TypeNAPTR, Class: dns.ClassINET, Ttl: h.ttl},
		Order:       Order,
		Preference:  Preference,
		Flags:       "u",
		Service:     Service,
		Regexp:      Regexp(r),
		Replacement: ".",
	})
	return outcome
}

// Regexp returns the NAPTR regexp field that answers the lookup r:
// !^.*$!tel:+1NUMBER;npdi;rn=+1LRN! (rn only when the LRN differs from the
// number), the tel URI of RFC 4694 written by lrn.
func Regexp(r lrn.Result) string {
	return "!^.*$!" + r.TelURI().String() + "!"
}

// inZone reports whether the canonical name is the suffix or below it,
// as dns.IsSubDomain does, without comparing label by label: the name ends
// in the suffix, after a dot that ends a label (not an escaped "\.").
func (h *Handler) inZone(name string) bool {
	if name == h.suffix {
		return true
	}
	dot := len(name) - len(h.suffix) - 1
	if dot < 0 || !strings.HasSuffix(name, h.suffix) || name[dot] != '.' {
		return false
	}
	escapes := 0
	for i := dot - 1; i >= 0 && name[i] == '\\'; i-- {
		escapes++
	}
	return escapes%2 == 0
}

type nameKind uint8

const (
	nameNone   nameKind = iota // nothing can live at this name
	nameApex                   // the suffix itself
	namePrefix                 // a proper prefix of +1 numbers
	nameNumber                 // eleven digits: a +1 number to look up
)

// number returns the E.164 digits (without +) a canonical name under the
// suffix stands for, and what kind of name it is.
func (h *Handler) number(name string) (string, nameKind) {
	n := dns.CountLabel(name) - h.labels
	if n == 0 {
		return "", nameApex
	}
	if n > 11 {
		return "", nameNone
	}
	// The labels are single digits, least significant first: "3.2.1.".
	if len(name) < 2*n {
		return "", nameNone
	}
	var digits [11]byte
	for i := 0; i < n; i++ {
		d, dot := name[2*i], name[2*i+1]
		if d < '0' || d > '9' || dot != '.' {
			return "", nameNone
		}
		digits[n-1-i] = d
	}
	if !strings.HasSuffix(name, h.suffix) || len(name) != 2*n+len(h.suffix) {
		return "", nameNone
	}
	if digits[0] != '1' {
		return "", nameNone // not in the NANP: nothing here
	}
	if n < 11 {
		return "", namePrefix
	}
	return string(digits[:]), nameNumber
}

func (h *Handler) soa() dns.RR {
	return &dns.SOA{
		Hdr:     dns.RR_Header{Name: h.suffix, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: h.ttl},
		Ns:      h.suffix,
		Mbox:    h.mbox,
		Serial:  h.serial(),
		Refresh: 3600,
		Retry:   600,
		Expire:  86400,
		Minttl:  h.ttl,
	}
}

// serial is the table's build time: it changes when a new table is loaded.
// It is read from the table at most once a second (db.Info builds a
// description of every section, too much for every negative answer).
func (h *Handler) serial() uint32 {
	now := time.Now().Unix()
	if c := h.serialCache.Load(); c != nil && c.at == now {
		return c.serial
	}
	var serial uint32
	if db := h.tables.DB(); db != nil {
		serial = uint32(db.Info().BuiltAt.Unix())
	}
	h.serialCache.Store(&serialAt{serial: serial, at: now})
	return serial
}

type serialAt struct {
	serial uint32
	at     int64 // unix second it was read
}
