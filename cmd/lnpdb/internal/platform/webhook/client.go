package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// AttemptTimeout bounds one attempt, from dialing to the last byte of the
// response read.
const AttemptTimeout = 10 * time.Second

// ConnectTimeout bounds the TCP connect of an attempt.
const ConnectTimeout = 5 * time.Second

// MaxResponse is how much of a response body is read (and discarded)
// before the connection is closed.
const MaxResponse = 64 << 10

// ErrForbiddenAddress is returned (wrapped) when a webhook's URL names, or
// its host resolves to, an address webhooks may not reach.
var ErrForbiddenAddress = errors.New("webhook: address not allowed for webhooks")

// notPublic are the IPv4 and IPv6 ranges, besides those netip classifies
// (private, loopback, link-local, multicast, unspecified), that are not
// the public Internet.
var notPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),     // "this network"
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),  // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"), // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),   // reserved, and broadcast
	netip.MustParsePrefix("2001:db8::/32"), // documentation
	netip.MustParsePrefix("100::/64"),      // discard
	netip.MustParsePrefix("2002::/16"),     // 6to4: carries an IPv4 address, perhaps a private one
	netip.MustParsePrefix("2001::/32"),     // Teredo: carries an IPv4 address, obfuscated
	netip.MustParsePrefix("fec0::/10"),     // site-local (deprecated, still routed inside some sites)
}

// nat64 is the well-known NAT64 prefix, whose last 32 bits are an IPv4
// address reached through the translator.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// Public reports whether a is an address of the public Internet, one a
// webhook may be sent to without --webhooks-allow-private. IPv4-mapped
// and NAT64 IPv6 forms are judged by the IPv4 address they carry.
func Public(a netip.Addr) bool {
	a = a.Unmap()
	if nat64.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte(b[12:]))
	}
	if !a.IsValid() || a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() ||
		a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() || a.IsMulticast() ||
		a.IsUnspecified() {
		return false
	}
	for _, p := range notPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// CheckURL reports whether raw may be a webhook URL: absolute, https (or
// http where allowPrivate), with a host and no user information, and, if
// its host is an IP address literal, a public one unless allowPrivate.
// A host name is checked when it is dialed, on every attempt.
func CheckURL(raw string, allowPrivate bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("webhook: URL: %w", err)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowPrivate:
	case u.Scheme == "http":
		return errors.New("webhook: URL must be https")
	default:
		return fmt.Errorf("webhook: URL scheme %q is not https", u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" || u.Opaque != "" {
		return errors.New("webhook: URL has no host")
	}
	if u.User != nil {
		return errors.New("webhook: URL must not carry user information")
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(u.Hostname(), "["), "]")); err == nil && !allowPrivate && !Public(a) {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, a)
	}
	return nil
}

// Client sends webhooks. Its zero value is not usable: make one with
// [NewClient].
type Client struct {
	hc           *http.Client
	allowPrivate bool
}

// ClientOptions configure a [Client].
type ClientOptions struct {
	// AllowPrivate lets webhooks reach any address, and use http
	// (serve --webhooks-allow-private).
	AllowPrivate bool
	// Resolver resolves host names (nil: net.DefaultResolver).
	Resolver *net.Resolver
	// Timeout bounds an attempt (zero: AttemptTimeout).
	Timeout time.Duration
}

// NewClient returns a Client. Every connection it makes is checked, at
// the address dialed after resolution, by [Public] unless AllowPrivate;
// it uses no proxy and follows no redirect.
func NewClient(o ClientOptions) *Client {
	if o.Timeout == 0 {
		o.Timeout = AttemptTimeout
	}
	d := &net.Dialer{Timeout: ConnectTimeout, Resolver: o.Resolver}
	if !o.AllowPrivate {
		d.Control = controlPublic
	}
	tr := &http.Transport{
		Proxy:                 nil, // a proxy would be the address dialed
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   ConnectTimeout,
		ResponseHeaderTimeout: o.Timeout,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       90 * time.Second,
	}
	return &Client{
		hc: &http.Client{
			Transport:     tr,
			Timeout:       o.Timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		allowPrivate: o.AllowPrivate,
	}
}

// controlPublic is the dialer's Control: it runs for each address the
// dialer connects to, after resolution, so neither a name resolving to an
// internal address nor one whose answer changes between check and connect
// reaches it.
func controlPublic(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrForbiddenAddress, address, err)
	}
	if !Public(ap.Addr()) {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, ap.Addr())
	}
	return nil
}

// StatusError is the error of an attempt answered with a status other
// than 2xx (a redirect included: redirects are not followed).
type StatusError struct{ Code int }

func (e *StatusError) Error() string {
	return fmt.Sprintf("webhook: answered %d %s", e.Code, http.StatusText(e.Code))
}

// errPermanent marks an error no retry can mend: the delivery's URL or
// secret is not valid.
var errPermanent = errors.New("webhook: not deliverable")

// Send makes one attempt at d: POSTs its body, signed with a timestamp of
// now, to its URL. It returns nil for a 2xx answer, a [*StatusError] for
// any other, or the error that stopped it.
func (c *Client) Send(ctx context.Context, d Delivery, now time.Time) error {
	if err := CheckURL(d.URL, c.allowPrivate); err != nil {
		return fmt.Errorf("%w: %w", errPermanent, err)
	}
	key, err := ParseSecret(d.Secret)
	if err != nil {
		return fmt.Errorf("%w: %w", errPermanent, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(d.Body))
	if err != nil {
		return fmt.Errorf("%w: %w", errPermanent, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "lnpdb-webhook")
	SetHeaders(req.Header, key, d.ID, now, d.Body)
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxResponse))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &StatusError{Code: resp.StatusCode}
	}
	return nil
}
