package httpapi

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClientAddr(t *testing.T) {
	trusted := prefixes("10.0.0.0/8", "2001:db8:1::/48")
	for _, c := range []struct {
		name, remote string
		xff          []string
		want         string
	}{
		{"a client's own header, not believed", "203.0.113.9:5555", []string{"198.51.100.1"}, "203.0.113.9:5555"},
		{"one proxy", "10.1.2.3:40000", []string{"198.51.100.1"}, "198.51.100.1:0"},
		{"two proxies, the client's forged entry left of them", "10.1.2.3:40000", []string{"6.6.6.6, 198.51.100.1, 10.9.9.9"}, "198.51.100.1:0"},
		{"entries over two header lines", "10.1.2.3:40000", []string{"6.6.6.6, 198.51.100.1", "10.9.9.9"}, "198.51.100.1:0"},
		{"with ports and IPv6", "[2001:db8:1::5]:443", []string{"[2001:db8:2::1]:1234, 10.0.0.4:80"}, "[2001:db8:2::1]:0"},
		{"IPv4-mapped", "[::ffff:10.0.0.1]:443", []string{"::ffff:198.51.100.1"}, "198.51.100.1:0"},
		{"every entry a proxy", "10.1.2.3:40000", []string{"10.0.0.9, 10.0.0.8"}, "10.0.0.9:0"},
		{"garbage before the client: the last proxy reached", "10.1.2.3:40000", []string{"<script>, 10.0.0.8"}, "10.0.0.8:0"},
		{"garbage at once", "10.1.2.3:40000", []string{"unknown"}, "10.1.2.3:40000"},
		{"a zone is not a client", "10.1.2.3:40000", []string{"fe80::1%eth0"}, "10.1.2.3:40000"},
		{"empty entries skipped", "10.1.2.3:40000", []string{" , 198.51.100.1 ,, "}, "198.51.100.1:0"},
		{"a remote that is not host:port", "pipe", []string{"198.51.100.1"}, "pipe"},
	} {
		assert.Equal(t, c.want, clientAddr(c.remote, c.xff, trusted), c.name)
	}
}

// TestConventionsForwardedFor: through Conventions, a handler sees the
// client's address only for a request from a trusted proxy, and without
// trusted proxies the header changes nothing.
func TestConventionsForwardedFor(t *testing.T) {
	var seen string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r.RemoteAddr })
	trusted := prefixes("127.0.0.0/8")
	for _, c := range []struct {
		trusted      []netip.Prefix
		remote, want string
	}{
		{trusted, "127.0.0.1:1234", "198.51.100.1:0"},
		{trusted, "192.0.2.1:1234", "192.0.2.1:1234"},
		{nil, "127.0.0.1:1234", "127.0.0.1:1234"},
	} {
		conv, err := Conventions(h, ConventionsConfig{TrustedProxies: c.trusted})
		require.NoError(t, err)
		req := httptest.NewRequest(http.MethodGet, "/api/v1/status", nil)
		req.RemoteAddr = c.remote
		req.Header.Set("X-Forwarded-For", "198.51.100.1")
		conv.ServeHTTP(httptest.NewRecorder(), req)
		assert.Equal(t, c.want, seen, "%v from %s", c.trusted, c.remote)
	}
}

// TestConventionsForwardedProto: a request from a trusted proxy whose
// nearest X-Forwarded-Proto is https reaches the handler with URL.Scheme
// https; from anyone else, or with http, the header changes nothing.
func TestConventionsForwardedProto(t *testing.T) {
	var seen string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r.URL.Scheme })
	trusted := prefixes("127.0.0.0/8")
	for _, c := range []struct {
		trusted       []netip.Prefix
		remote, proto string
		want          string
	}{
		{trusted, "127.0.0.1:1234", "https", "https"},
		{trusted, "127.0.0.1:1234", "HTTPS", "https"},
		{trusted, "127.0.0.1:1234", "http, https", "https"},
		{trusted, "127.0.0.1:1234", "https, http", ""},
		{trusted, "127.0.0.1:1234", "", ""},
		{trusted, "192.0.2.1:1234", "https", ""},
		{nil, "127.0.0.1:1234", "https", ""},
	} {
		conv, err := Conventions(h, ConventionsConfig{TrustedProxies: c.trusted})
		require.NoError(t, err)
		req := httptest.NewRequest(http.MethodGet, "/account", nil)
		req.URL.Scheme = ""
		req.RemoteAddr = c.remote
		if c.proto != "" {
			req.Header.Set("X-Forwarded-Proto", c.proto)
		}
		conv.ServeHTTP(httptest.NewRecorder(), req)
		assert.Equal(t, c.want, seen, "%v from %s, %q", c.trusted, c.remote, c.proto)
	}
}

// FuzzClientAddr: whatever the header, the answer is the remote address
// itself or an address the header holds, with port 0; from an untrusted
// remote it is always the remote.
func FuzzClientAddr(f *testing.F) {
	f.Add("10.0.0.1:80", "198.51.100.1, 10.0.0.2")
	f.Add("203.0.113.1:80", "198.51.100.1")
	f.Add("[2001:db8:1::1]:80", "[2001:db8:2::1]:9, garbage")
	trusted := prefixes("10.0.0.0/8", "2001:db8:1::/48")
	f.Fuzz(func(t *testing.T, remote, xff string) {
		got := clientAddr(remote, []string{xff}, trusted)
		if got == remote {
			return
		}
		ap, err := netip.ParseAddrPort(remote)
		require.NoError(t, err, "a remote that does not parse is kept")
		require.True(t, IsTrusted(ap.Addr().Unmap(), trusted), "an untrusted remote is kept")
		c, err := netip.ParseAddrPort(got)
		require.NoError(t, err, got)
		assert.Zero(t, c.Port())
		found := false
		for e := range strings.SplitSeq(xff, ",") {
			if a, ok := forwardedAddr(strings.TrimSpace(e)); ok && a == c.Addr() {
				found = true
			}
		}
		assert.True(t, found, "%s is in the header %q", got, xff)
	})
}

func prefixes(ps ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ps))
	for i, p := range ps {
		out[i] = netip.MustParsePrefix(p)
	}
	return out
}
