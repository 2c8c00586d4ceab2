package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/rrl"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/dipstat"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/enum"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/kamailiopdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/sipredirect"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/sockets"
	"github.com/lnpdb/lnpdb/format"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
)

// dipFlags are serve's flags for the softswitch front ends: SIP redirect,
// ENUM and Kamailio's pdb protocol. Each is off unless given an address.
type dipFlags struct {
	sip, sipAllow        string
	sipNPDI              string
	sipTCPMax            int
	sipTCPIdle           time.Duration
	dns, enumSuffix      string
	dnsTCPMax            int
	dnsRRLRate, rrlSlip  int
	rrlWindow            time.Duration
	pdb, pdbCarriersPath string
}

func addDipFlags(fs *pflag.FlagSet) *dipFlags {
	f := new(dipFlags)
	fs.StringVar(&f.sip, "sip", "", "answer SIP INVITEs with 302 redirects carrying npdi/rn on these `host:port`s, UDP and TCP (comma-separated; port defaults to 5060)")
	fs.StringVar(&f.sipAllow, "sip-allow", "", "serve SIP only to these source `networks` (comma-separated CIDRs; default: every source)")
	fs.StringVar(&f.sipNPDI, "sip-npdi", sipredirect.NPDIBare.String(), "SIP: the `form` of npdi in a redirect's Contact: bare (;npdi, RFC 4694) or yes (;npdi=yes, for switches that want a value)")
	fs.IntVar(&f.sipTCPMax, "sip-tcp-max-conns", 0, fmt.Sprintf("SIP over TCP: close connections accepted beyond this `number` open at once (Kamailio's tcp_max_connections; default %d, at most a quarter of the open-file limit)", sipredirect.DefaultTCPMaxConns))
	fs.DurationVar(&f.sipTCPIdle, "sip-tcp-idle", sipredirect.DefaultTCPIdle, "SIP over TCP: close a connection nothing arrived on for this `long` (Kamailio's tcp_connection_lifetime)")
	fs.StringVar(&f.dns, "dns", "", "answer ENUM NAPTR queries on these `host:port`s, UDP and TCP (comma-separated; port defaults to 53)")
	fs.StringVar(&f.enumSuffix, "enum-suffix", enum.DefaultSuffix, "ENUM `zone` the numbers live under")
	fs.IntVar(&f.dnsTCPMax, "dns-tcp-max-conns", 0, fmt.Sprintf("DNS over TCP: close connections accepted beyond this `number` open at once (BIND's tcp-clients; default %d, at most an eighth of the open-file limit)", enum.DefaultTCPMaxConns))
	fs.IntVar(&f.dnsRRLRate, "dns-rrl-rate", rrl.DefaultRate, "DNS over UDP: answers a `second` per client network (IPv4 /24, IPv6 /56) before its answers are dropped or sent truncated (BIND's responses-per-second; 0: no limit)")
	fs.IntVar(&f.rrlSlip, "dns-rrl-slip", rrl.DefaultSlip, "DNS over UDP: send every `n`th rate-limited answer truncated, so that a real client retries over TCP (0: drop them all)")
	fs.DurationVar(&f.rrlWindow, "dns-rrl-window", rrl.DefaultWindow, "DNS over UDP: a network that went over the rate stays limited for up to this `long` after (BIND's window)")
	fs.StringVar(&f.pdb, "pdb", "", "answer Kamailio pdb queries on these UDP `host:port`s (comma-separated; port defaults to 5574; \":5574\" is IPv4 and IPv6)")
	fs.StringVar(&f.pdbCarriersPath, "pdb-carriers", "", "pdb carrier ids `file`: lines \"D001 SPID...\" (default: every found number answers carrier 1000)")
	return f
}

// udpBuffer is the receive buffer asked for every front end's UDP socket.
const udpBuffer = 4 << 20

// dips are the running front ends.
type dips struct {
	vec      *dipstat.Vectors // nil when no dip front end is served
	errc     chan error       // a front end that stopped on its own
	shutdown []func(context.Context) error
}

type dbTables struct{ db *format.DB }

func (t dbTables) DB() *format.DB { return t.db }

// startDips listens on every address f names and serves db there; a busy
// address or a bad flag fails before anything is served. db stays the one
// table for the server's life: reloads and updates happen inside it.
func startDips(f *dipFlags, db *format.DB, reg prometheus.Registerer, log *slog.Logger) (*dips, error) {
	d := &dips{errc: make(chan error, 16)}
	if f.sip == "" && f.dns == "" && f.pdb == "" {
		return d, nil
	}
	if f.sipTCPMax < 0 || f.dnsTCPMax < 0 || f.sipTCPIdle < 0 || f.dnsRRLRate < 0 || f.rrlSlip < 0 || f.rrlWindow < 0 {
		return nil, fmt.Errorf("%w: --sip-tcp-max-conns, --sip-tcp-idle, --dns-tcp-max-conns and --dns-rrl-* must not be negative", cliutil.ErrUsage)
	}
	ok := false
	defer func() {
		if !ok {
			d.stop(context.Background())
		}
	}()
	vec, err := dipstat.Register(reg)
	if err != nil {
		return nil, err
	}
	d.vec = vec
	tables := dbTables{db}
	if f.pdb != "" {
		var carriers *kamailiopdb.Carriers
		if f.pdbCarriersPath != "" {
			if carriers, err = kamailiopdb.LoadCarriers(f.pdbCarriersPath); err != nil {
				return nil, err
			}
		}
		s, err := kamailiopdb.New(kamailiopdb.Config{Tables: tables, Carriers: carriers, Metrics: vec.For("pdb"), Logger: log})
		if err != nil {
			return nil, err
		}
		d.shutdown = append(d.shutdown, s.Shutdown)
		addrs, err := d.listen("--pdb", f.pdb, kamailiopdb.DefaultPort, false, s.Serve, nil)
		if err != nil {
			return nil, err
		}
		log.Info("serving pdb", "addr", addrs, "carrier_ids", carriers.Len())
	}
	if f.dns != "" {
		h, err := enum.New(enum.Config{Tables: tables, Suffix: f.enumSuffix, Metrics: vec.For("enum"), Logger: log})
		if err != nil {
			return nil, fmt.Errorf("%w: --enum-suffix: %v", cliutil.ErrUsage, err)
		}
		s := enum.NewServer(h, enum.ServerConfig{
			TCPMaxConns: orCap(f.dnsTCPMax, enum.DefaultTCPMaxConns, sockets.ShareDNS),
			RRL:         rrl.New(rrl.Config{Rate: f.dnsRRLRate, Slip: f.rrlSlip, Window: f.rrlWindow}),
			Metrics:     vec.For("enum"), Logger: log,
		})
		d.shutdown = append(d.shutdown, s.Shutdown)
		addrs, err := d.listen("--dns", f.dns, 53, true, s.ServeUDP, s.ServeTCP)
		if err != nil {
			return nil, err
		}
		log.Info("serving ENUM", "addr", addrs, "zone", h.Suffix(), "rrl_rate", f.dnsRRLRate, "rrl_slip", f.rrlSlip,
			"tcp_max_conns", orCap(f.dnsTCPMax, enum.DefaultTCPMaxConns, sockets.ShareDNS))
	}
	if f.sip != "" {
		allow, err := parsePrefixes("sip-allow", f.sipAllow)
		if err != nil {
			return nil, err
		}
		npdi, err := sipredirect.ParseNPDI(f.sipNPDI)
		if err != nil {
			return nil, fmt.Errorf("%w: --sip-npdi: %q is neither bare nor yes", cliutil.ErrUsage, f.sipNPDI)
		}
		s, err := sipredirect.New(sipredirect.Config{
			Tables: tables, Allow: allow, NPDI: npdi, Metrics: vec.For("sip"), Logger: log,
			TCPMaxConns: orCap(f.sipTCPMax, sipredirect.DefaultTCPMaxConns, sockets.ShareSIP),
			TCPIdle:     f.sipTCPIdle,
		})
		if err != nil {
			return nil, err
		}
		d.shutdown = append(d.shutdown, s.Shutdown)
		addrs, err := d.listen("--sip", f.sip, sipredirect.DefaultPort, true, s.ServeUDP, s.ServeTCP)
		if err != nil {
			return nil, err
		}
		log.Info("serving SIP redirects", "addr", addrs, "allow", f.sipAllow, "npdi", npdi,
			"tcp_max_conns", orCap(f.sipTCPMax, sipredirect.DefaultTCPMaxConns, sockets.ShareSIP), "tcp_idle", f.sipTCPIdle)
	}
	ok = true
	return d, nil
}

// listen opens UDP (and with withTCP, TCP on the same port) sockets on
// every address of list, serves them, and returns the bound addresses.
func (d *dips) listen(flagName, list string, port int, withTCP bool, udp func(net.PacketConn) error, tcp func(net.Listener) error) (string, error) {
	var bound []string
	for _, addr := range strings.Split(list, ",") {
		addr = withPort(strings.TrimSpace(addr), port)
		pc, l, err := listenPair(addr, withTCP)
		if err != nil {
			return "", fmt.Errorf("%s: %w", flagName, err)
		}
		// Bursts must wait in the socket, not be dropped: a dropped INVITE
		// or query costs the caller a retransmission timer (500 ms for
		// SIP). The kernel caps this at net.core.rmem_max.
		_ = pc.(*net.UDPConn).SetReadBuffer(udpBuffer)
		d.serve(flagName, func() error { return udp(pc) })
		bound = append(bound, pc.LocalAddr().String())
		if l != nil {
			d.serve(flagName, func() error { return tcp(l) })
		}
	}
	return strings.Join(bound, ","), nil
}

// listenPair opens a UDP socket on addr and, with withTCP, a TCP listener
// on the same port. Port 0 lets UDP pick the port and TCP take it; when a
// TCP socket (a client's, say) already holds that port, the pair is opened
// again on another.
func listenPair(addr string, withTCP bool) (net.PacketConn, net.Listener, error) {
	_, p, _ := net.SplitHostPort(addr)
	for try := 0; ; try++ {
		pc, err := net.ListenPacket("udp", addr)
		if err != nil || !withTCP {
			return pc, nil, err
		}
		l, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, l, nil
		}
		pc.Close()
		if p != "0" || !errors.Is(err, syscall.EADDRINUSE) || try == 20 {
			return nil, nil, err
		}
	}
}

func (d *dips) serve(flagName string, serve func() error) {
	go func() {
		err := serve()
		if err != nil && !errors.Is(err, kamailiopdb.ErrServerClosed) && !errors.Is(err, enum.ErrServerClosed) && !errors.Is(err, sipredirect.ErrServerClosed) {
			d.errc <- fmt.Errorf("%s: %w", flagName, err)
		}
	}()
}

// stop shuts every front end down, each waiting for what it is answering.
func (d *dips) stop(ctx context.Context) error {
	var errs []error
	for _, f := range d.shutdown {
		errs = append(errs, f(ctx))
	}
	return errors.Join(errs...)
}

// orCap is a connection cap given by a flag (n), or when the flag is 0 the
// front end's default bounded by its share of the open-file limit.
func orCap(n, def, share int) int {
	if n > 0 {
		return n
	}
	return sockets.Cap(def, share)
}

// withPort adds port to an address that has none ("127.0.0.1", "[::1]",
// "host").
func withPort(addr string, port int) string {
	if _, _, err := net.SplitHostPort(addr); err == nil {
		return addr
	}
	return net.JoinHostPort(strings.Trim(addr, "[]"), strconv.Itoa(port))
}

// parsePrefixes parses the comma-separated networks (CIDR prefixes) and
// addresses of the flag named flag: an address is a network of its whole
// length, and an IPv4-mapped IPv6 form is taken as IPv4, as the sources
// it is compared with are.
func parsePrefixes(flag, s string) ([]netip.Prefix, error) {
	var ps []netip.Prefix
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, fmt.Errorf("%w: --%s: %q is neither a network (CIDR) nor an address", cliutil.ErrUsage, flag, f)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		ps = append(ps, p.Masked())
	}
	return ps, nil
}
