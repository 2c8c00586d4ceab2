package webhook

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPublic(t *testing.T) {
	refused := []string{
		"10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1", // RFC 1918
		"127.0.0.1", "127.8.9.10", "::1", // loopback
		"169.254.169.254", "169.254.0.1", "fe80::1", // link-local, cloud metadata
		"0.0.0.0", "::", "0.1.2.3", // unspecified, this network
		"224.0.0.1", "239.1.1.1", "ff02::1", "ff05::2", // multicast
		"100.64.0.1", "100.127.255.254", "::ffff:100.64.0.1", // CGNAT
		"fc00::1", "fd12:3456::1", // unique local
		"::ffff:127.0.0.1", "::ffff:169.254.169.254", "::ffff:10.0.0.1", // IPv4-mapped
		"64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", // NAT64 of loopback, metadata
		"255.255.255.255", "240.0.0.1", "198.18.0.1", "::ffff:198.18.0.1", "192.0.0.1", "2001:db8::1",
		"2002:7f00:1::1", "2002:a00:1::1", "2001:0:4136:e378:8000:63bf:80ff:fffe", "fec0::1", // 6to4 and Teredo carrying 127.0.0.1, 10.0.0.1, 127.0.0.1; site-local
	}
	for _, s := range refused {
		assert.False(t, Public(netip.MustParseAddr(s)), s)
	}
	allowed := []string{"8.8.8.8", "1.1.1.1", "100.128.0.1", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"}
	for _, s := range allowed {
		assert.True(t, Public(netip.MustParseAddr(s)), s)
	}
	assert.False(t, Public(netip.Addr{}))
}

func TestCheckURL(t *testing.T) {
	ok := []string{"https://example.com/hook", "https://example.com:8443/a?b=c", "https://8.8.8.8/x", "https://[2606:4700::1111]/x"}
	for _, u := range ok {
		assert.NoError(t, CheckURL(u, false), u)
	}
	bad := map[string]error{
		"http://example.com/hook":           nil,
		"ftp://example.com/":                nil,
		"https:///path":                     nil,
		"https://user:pw@example.com/":      nil,
		"example.com/hook":                  nil,
		"https://127.0.0.1/":                ErrForbiddenAddress,
		"https://169.254.169.254/latest":    ErrForbiddenAddress,
		"https://[::ffff:127.0.0.1]:8443/x": ErrForbiddenAddress,
		"https://[::1]/":                    ErrForbiddenAddress,
		"https://10.1.2.3/":                 ErrForbiddenAddress,
		"https://%zz/":                      nil,
	}
	for u, want := range bad {
		err := CheckURL(u, false)
		assert.Error(t, err, u)
		if want != nil {
			assert.ErrorIs(t, err, want, u)
		}
	}
	// --webhooks-allow-private admits them all but the malformed.
	for _, u := range []string{"http://127.0.0.1:8080/", "https://169.254.169.254/", "http://[::ffff:127.0.0.1]/"} {
		assert.NoError(t, CheckURL(u, true), u)
	}
	assert.Error(t, CheckURL("ftp://127.0.0.1/", true))
}

// hostileDNS serves A and AAAA answers for names from zone on a loopback
// UDP port, and returns a resolver that asks it.
func hostileDNS(t *testing.T, zone map[string]string) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		for _, q := range r.Question {
			a, ok := zone[strings.TrimSuffix(q.Name, ".")]
			if !ok {
				m.Rcode = dns.RcodeNameError
				continue
			}
			ip := netip.MustParseAddr(a)
			hdr := dns.RR_Header{Name: q.Name, Class: dns.ClassINET, Ttl: 0}
			switch {
			case q.Qtype == dns.TypeA && ip.Is4():
				hdr.Rrtype = dns.TypeA
				m.Answer = append(m.Answer, &dns.A{Hdr: hdr, A: ip.AsSlice()})
			case q.Qtype == dns.TypeAAAA && ip.Is6():
				hdr.Rrtype = dns.TypeAAAA
				m.Answer = append(m.Answer, &dns.AAAA{Hdr: hdr, AAAA: ip.AsSlice()})
			}
		}
		_ = w.WriteMsg(m)
	})}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	addr := pc.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
}

// counting is a webhook receiver that counts the requests it gets.
type counting struct {
	hits chan *http.Request
	srv  *httptest.Server
}

func newCounting(t *testing.T, h http.HandlerFunc) *counting {
	c := &counting{hits: make(chan *http.Request, 100)}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.hits <- r
		if h != nil {
			h(w, r)
		}
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func testDelivery(u string) Delivery {
	return Delivery{ID: "msg_test", AccountID: "acct", URL: u, Secret: vectorSecret, Body: []byte(`{"type":"job.completed"}`),
		CreatedAt: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func TestSendSigned(t *testing.T) {
	var body []byte
	var header http.Header
	rcv := newCounting(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		header = r.Header.Clone()
		w.WriteHeader(http.StatusNoContent)
	})
	c := NewClient(ClientOptions{AllowPrivate: true})
	d := testDelivery(rcv.srv.URL + "/hook")
	now := time.Unix(vectorTimestamp, 0)
	require.NoError(t, c.Send(t.Context(), d, now))
	assert.Equal(t, d.Body, body)
	assert.Equal(t, "application/json", header.Get("Content-Type"))
	key, _ := ParseSecret(d.Secret)
	assert.NoError(t, Verify(key, header, body, now))
	assert.Equal(t, d.ID, header.Get(HeaderID))
}

func TestSendNon2xx(t *testing.T) {
	rcv := newCounting(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	c := NewClient(ClientOptions{AllowPrivate: true})
	err := c.Send(t.Context(), testDelivery(rcv.srv.URL), time.Now())
	var se *StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusInternalServerError, se.Code)
}

// A name that resolves to an internal address is refused at the
// connection, after resolution: the URL's check cannot see it.
func TestSendRefusesResolvedInternal(t *testing.T) {
	rcv := newCounting(t, nil)
	port := rcv.srv.Listener.Addr().(*net.TCPAddr).Port
	res := hostileDNS(t, map[string]string{
		"loopback.test": "127.0.0.1",
		"metadata.test": "169.254.169.254",
		"mapped.test":   "::ffff:127.0.0.1",
		"private.test":  "10.0.0.1",
	})
	c := NewClient(ClientOptions{Resolver: res})
	for _, host := range []string{"loopback.test", "metadata.test", "mapped.test", "private.test"} {
		u := (&url.URL{Scheme: "https", Host: net.JoinHostPort(host, itoa(port)), Path: "/hook"}).String()
		require.NoError(t, CheckURL(u, false), u)
		err := c.Send(t.Context(), testDelivery(u), time.Now())
		assert.ErrorIs(t, err, ErrForbiddenAddress, host)
		assert.False(t, errors.Is(err, errPermanent), "a name's answer may change: %s is retried", host)
	}
	// Address literals are refused before dialing.
	for _, host := range []string{"127.0.0.1", "169.254.169.254", "[::ffff:127.0.0.1]", "[::1]"} {
		err := c.Send(t.Context(), testDelivery("https://"+host+":"+itoa(port)+"/"), time.Now())
		assert.ErrorIs(t, err, ErrForbiddenAddress, host)
	}
	assert.Empty(t, rcv.hits, "no request reached the loopback receiver")

	// With --webhooks-allow-private the same name reaches it: the
	// resolver above is the one dialed through.
	c = NewClient(ClientOptions{Resolver: res, AllowPrivate: true})
	require.NoError(t, c.Send(t.Context(), testDelivery("http://loopback.test:"+itoa(port)+"/"), time.Now()))
	assert.Len(t, rcv.hits, 1)
}

func itoa(n int) string { return strconv.Itoa(n) }

// A redirect is an answer, not followed: an attempt cannot be sent on to
// an internal address by the receiver.
func TestSendDoesNotFollowRedirects(t *testing.T) {
	inner := newCounting(t, nil)
	outer := newCounting(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, inner.srv.URL+"/metadata", http.StatusTemporaryRedirect)
	})
	c := NewClient(ClientOptions{AllowPrivate: true})
	err := c.Send(t.Context(), testDelivery(outer.srv.URL), time.Now())
	var se *StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusTemporaryRedirect, se.Code)
	assert.Len(t, outer.hits, 1)
	assert.Empty(t, inner.hits)
}

// A receiver that never answers holds an attempt only as long as its
// context, or the client's timeout.
func TestSendSlowReceiver(t *testing.T) {
	release := make(chan struct{})
	rcv := newCounting(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)

	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-rcv.hits // the request has arrived and hangs
		cancel()
	}()
	c := NewClient(ClientOptions{AllowPrivate: true})
	err := c.Send(ctx, testDelivery(rcv.srv.URL), time.Now())
	assert.ErrorIs(t, err, context.Canceled)

	// The client's own bound: a timeout far shorter than the test's.
	c = NewClient(ClientOptions{AllowPrivate: true, Timeout: 50 * time.Millisecond})
	err = c.Send(t.Context(), testDelivery(rcv.srv.URL), time.Now())
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	assert.True(t, ne.Timeout(), "%v", err)
}

// A huge response body is read to MaxResponse and dropped: the client
// closes the connection rather than reading on.
func TestSendHugeResponse(t *testing.T) {
	const huge = 256 << 20
	written := make(chan int, 1)
	rcv := newCounting(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		chunk := make([]byte, 32<<10)
		n := 0
		for n < huge {
			m, err := w.Write(chunk)
			n += m
			if err != nil {
				break
			}
		}
		written <- n
	})
	c := NewClient(ClientOptions{AllowPrivate: true})
	require.NoError(t, c.Send(t.Context(), testDelivery(rcv.srv.URL), time.Now()))
	// What the receiver could write is what it read plus the sockets'
	// buffers, a few MiB; never the whole.
	assert.Less(t, <-written, huge/2)
}

func TestSendPermanent(t *testing.T) {
	c := NewClient(ClientOptions{})
	err := c.Send(t.Context(), testDelivery("http://example.com/"), time.Now())
	assert.ErrorIs(t, err, errPermanent)
	d := testDelivery("https://example.com/")
	d.Secret = "whsec_!"
	err = c.Send(t.Context(), d, time.Now())
	assert.ErrorIs(t, err, ErrSecret)
	assert.ErrorIs(t, err, errPermanent)
}
