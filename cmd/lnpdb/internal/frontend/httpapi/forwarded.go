package httpapi

import (
	"net/http"
	"net/netip"
	"strings"
)

// clientAddr is the address, as host:port, of the client of a request
// that arrived from remote (the connection's peer, as http.Request's
// RemoteAddr) with the X-Forwarded-For header values xff, in the order
// received. It is remote unless remote is a trusted proxy; then each proxy
// appended the address of its own peer, so the entries are walked from
// the right, past the trusted proxies, and the first that is not one is
// the client. Entries further left were written by the client and are not
// believed. When every entry is a trusted proxy, or one is not an address
// (a proxy writes addresses; garbage came from the other side), the
// answer is the last trusted address reached. The port of a forwarded
// client is unknown and given as 0.
func clientAddr(remote string, xff []string, trusted []netip.Prefix) string {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil || !IsTrusted(ap.Addr().Unmap(), trusted) {
		return remote
	}
	reached := remote
	for i := len(xff) - 1; i >= 0; i-- {
		h := xff[i]
		for h != "" {
			var e string
			if j := strings.LastIndexByte(h, ','); j >= 0 {
				h, e = h[:j], h[j+1:]
			} else {
				h, e = "", h
			}
			e = strings.TrimSpace(e)
			if e == "" {
				continue
			}
			a, ok := forwardedAddr(e)
			if !ok {
				return reached
			}
			reached = netip.AddrPortFrom(a, 0).String()
			if !IsTrusted(a, trusted) {
				return reached
			}
		}
	}
	return reached
}

// forwardedAddr parses one X-Forwarded-For entry: an address, with or
// without a port ("192.0.2.1", "192.0.2.1:443", "2001:db8::1",
// "[2001:db8::1]:443").
func forwardedAddr(e string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(e); err == nil && a.Zone() == "" {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(e); err == nil && ap.Addr().Zone() == "" {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}

// IsTrusted reports whether a is in one of the trusted proxies' networks.
func IsTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// forwardedHTTPS reports whether r came from a trusted proxy (its
// RemoteAddr, before X-Forwarded-For is read) that says the client reached
// it over TLS: the last X-Forwarded-Proto entry, the nearest proxy's, is
// https.
func forwardedHTTPS(r *http.Request, trusted []netip.Prefix) bool {
	vals := r.Header.Values("X-Forwarded-Proto")
	if len(vals) == 0 {
		return false
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil || !IsTrusted(ap.Addr().Unmap(), trusted) {
		return false
	}
	last := vals[len(vals)-1]
	if i := strings.LastIndexByte(last, ','); i >= 0 {
		last = last[i+1:]
	}
	return strings.EqualFold(strings.TrimSpace(last), "https")
}
