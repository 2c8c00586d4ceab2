// Package rrl owns response-rate limiting for answers sent over UDP, as
// BIND's RRL does it for DNS: a UDP source can be spoofed, so a server that
// answers every datagram can be made to send its (larger) answers to a
// victim. Answers are counted per client network — the /24 of an IPv4
// source, the /56 of an IPv6 one, where one network's hosts are one victim
// — and a network over Rate answers a second is limited: its answers are
// dropped, except every Slip-th, which is sent truncated (TC set, no
// records: no larger than the query) so that a real client behind a spoofed
// address retries over TCP, which is never limited. A network's balance
// gains Rate a second up to Rate, loses one an answer, and sinks at most to
// -Rate×Window: a flood keeps its network limited for up to Window after it
// stops, and does not earn a fresh second of answers each second.
//
// The limiter keeps at most MaxNetworks networks; when full it forgets the
// networks whose balance is whole again and, if that is not enough, an
// arbitrary half: a flood from many spoofed networks costs bounded memory.
package rrl

import (
	"net/netip"
	"sync"
	"time"
)

// Defaults of Config.
const (
	// DefaultRate is the answers a second one client network gets before
	// it is limited. It is set well above what a softswitch making dips
	// over UDP from one network asks (and one over it still gets every
	// Slip-th answer, truncated, and its retry over TCP), and low enough
	// that reflection through the server is worth little: DefaultRate
	// answers of ~150 bytes are ~1.2 Mbit/s at most toward one network.
	DefaultRate = 1000
	// DefaultSlip: every second dropped answer is sent truncated, BIND's
	// default.
	DefaultSlip = 2
	// DefaultWindow: how long a flood's debt limits its network, BIND's
	// default.
	DefaultWindow = 15 * time.Second
	// DefaultMaxNetworks bounds the networks tracked (BIND's
	// max-table-size is 20000 entries by default).
	DefaultMaxNetworks = 100000
)

// Config configures a Limiter.
type Config struct {
	Rate        int           // answers a second per network; 0: no limit
	Slip        int           // every Slip-th dropped answer is sent truncated; 0: none, 1: all
	Window      time.Duration // 0: DefaultWindow
	MaxNetworks int           // 0: DefaultMaxNetworks
	IPv4Prefix  int           // 0: 24
	IPv6Prefix  int           // 0: 56
}

// Verdict is what to do with one answer.
type Verdict int

const (
	Send     Verdict = iota // send it as it is
	Drop                    // send nothing
	Truncate                // send it truncated: TC set, no records
)

// Limiter limits answers per client network; safe for concurrent use. A
// nil *Limiter sends every answer.
type Limiter struct {
	cfg    Config
	rate   float64
	floor  float64 // the lowest balance: -Rate×Window
	shards [16]shard
}

type shard struct {
	mu   sync.Mutex
	nets map[netip.Prefix]*account
}

type account struct {
	balance float64
	at      time.Time // when balance was last brought up to date
	dropped int       // answers dropped since the last one truncated
}

// New returns a Limiter, or nil (no limit) when cfg.Rate is 0.
func New(cfg Config) *Limiter {
	if cfg.Rate <= 0 {
		return nil
	}
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.MaxNetworks <= 0 {
		cfg.MaxNetworks = DefaultMaxNetworks
	}
	if cfg.IPv4Prefix <= 0 || cfg.IPv4Prefix > 32 {
		cfg.IPv4Prefix = 24
	}
	if cfg.IPv6Prefix <= 0 || cfg.IPv6Prefix > 128 {
		cfg.IPv6Prefix = 56
	}
	l := &Limiter{cfg: cfg, rate: float64(cfg.Rate), floor: -float64(cfg.Rate) * cfg.Window.Seconds()}
	for i := range l.shards {
		l.shards[i].nets = make(map[netip.Prefix]*account)
	}
	return l
}

// Network returns the client network of addr that answers are counted by.
func (l *Limiter) Network(addr netip.Addr) netip.Prefix {
	addr = addr.Unmap()
	bits := l.cfg.IPv6Prefix
	if addr.Is4() {
		bits = l.cfg.IPv4Prefix
	}
	p, _ := addr.Prefix(bits)
	return p
}

// Answer counts one answer to addr at now and says what to do with it.
func (l *Limiter) Answer(addr netip.Addr, now time.Time) Verdict {
	if l == nil {
		return Send
	}
	n := l.Network(addr)
	sh := &l.shards[shardOf(n)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	a := sh.nets[n]
	if a == nil {
		if len(sh.nets) >= l.cfg.MaxNetworks/len(l.shards)+1 {
			l.forget(sh, now)
		}
		a = &account{balance: l.rate, at: now}
		sh.nets[n] = a
	} else if d := now.Sub(a.at); d > 0 {
		a.balance = min(l.rate, a.balance+d.Seconds()*l.rate)
		a.at = now
	}
	a.balance = max(l.floor, a.balance-1)
	if a.balance >= 0 {
		a.dropped = 0
		return Send
	}
	a.dropped++
	if l.cfg.Slip > 0 && a.dropped >= l.cfg.Slip {
		a.dropped = 0
		return Truncate
	}
	return Drop
}

// forget makes room in sh: it drops the networks whose balance is whole
// again at now, then, if that freed less than a quarter, every other one.
func (l *Limiter) forget(sh *shard, now time.Time) {
	before := len(sh.nets)
	for n, a := range sh.nets {
		if a.balance+now.Sub(a.at).Seconds()*l.rate >= l.rate {
			delete(sh.nets, n)
		}
	}
	if len(sh.nets) > before*3/4 {
		i := 0
		for n := range sh.nets {
			if i%2 == 0 {
				delete(sh.nets, n)
			}
			i++
		}
	}
}

// Networks returns the number of networks tracked.
func (l *Limiter) Networks() int {
	if l == nil {
		return 0
	}
	n := 0
	for i := range l.shards {
		l.shards[i].mu.Lock()
		n += len(l.shards[i].nets)
		l.shards[i].mu.Unlock()
	}
	return n
}

func shardOf(p netip.Prefix) int {
	b := p.Addr().As16()
	h := 0
	for _, x := range b {
		h = h*31 + int(x)
	}
	return h & 15
}
