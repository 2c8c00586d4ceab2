package enum

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/rrl"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/dipstat"
	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// burst sends n queries from laddr to addr as fast as it can, then reads
// what comes back: the full answers, the truncated ones, and the bytes sent
// and received.
func burst(t *testing.T, laddr, addr string, n int, number string) (full, tc, out, in int) {
	t.Helper()
	c, err := net.ListenPacket("udp", laddr)
	require.NoError(t, err)
	defer c.Close()
	to, err := net.ResolveUDPAddr("udp", addr)
	require.NoError(t, err)
	for i := range n {
		q := query(number)
		q.Id = uint16(i + 1)
		b, err := q.Pack()
		require.NoError(t, err)
		_, err = c.WriteTo(b, to)
		require.NoError(t, err)
		out += len(b)
	}
	buf := make([]byte, 4096)
	for {
		require.NoError(t, c.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
		k, _, err := c.ReadFrom(buf)
		if err != nil {
			require.ErrorIs(t, err, os.ErrDeadlineExceeded)
			return
		}
		in += k
		var m dns.Msg
		require.NoError(t, m.Unpack(buf[:k]))
		require.Len(t, m.Question, 1, "every reply names its question")
		if m.Truncated {
			assert.Empty(t, m.Answer)
			tc++
		} else {
			require.Len(t, m.Answer, 1)
			full++
		}
	}
}

// TestRRL: a burst from one client network is limited to the rate, every
// second answer beyond it sent truncated (no larger than its query) and
// the rest dropped, counted; another network is answered in full, and so
// is the first over TCP.
func TestRRL(t *testing.T) {
	h, _, nums := sampleHandler(t)
	reg := prometheus.NewRegistry()
	vec, err := dipstat.Register(reg)
	require.NoError(t, err)
	const rate, n = 20, 200
	udp, tcp := serveWith(t, h, ServerConfig{RRL: rrl.New(rrl.Config{Rate: rate, Slip: 2}), Metrics: vec.For("enum")})

	full, tc, sent, got := burst(t, "127.0.0.1:0", udp, n, nums.Ported)
	t.Logf("%d queries (%d bytes): %d answered, %d truncated, %d dropped; %d bytes back: %.2f×", n, sent, full, tc, n-full-tc, got, float64(got)/float64(sent))
	assert.GreaterOrEqual(t, full, rate)
	assert.LessOrEqual(t, full, rate+5, "no more than the rate (and what a second refills while the burst runs)")
	assert.InDelta(t, (n-full)/2, tc, 2, "every second limited answer truncated")
	assert.Less(t, got, sent, "the limited burst sends back less than it received")
	assert.Equal(t, float64(n-full), droppedCount(t, reg, dipstat.DropRateLimited), "every limited answer counted")

	// Another network (127.0.1.0/24 is loopback too on Linux).
	full2, tc2, _, _ := burst(t, "127.0.1.1:0", udp, rate, nums.Ported)
	assert.Equal(t, []int{rate, 0}, []int{full2, tc2}, "another network is not limited")

	// TCP is never limited.
	for range 3 * rate {
		r := exchange(t, "tcp", tcp, enumName(nums.Ported, "e164.arpa."), dns.TypeNAPTR)
		require.False(t, r.Truncated)
		require.Len(t, r.Answer, 1)
	}
}

func TestTruncated(t *testing.T) {
	m := query("12025550123")
	m.Response = true
	m.Answer = []dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: m.Question[0].Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET}, Txt: []string{"x"}}}
	m.SetEdns0(4096, false)
	b, err := m.Pack()
	require.NoError(t, err)
	out, ok := truncated(b)
	require.True(t, ok)
	var r dns.Msg
	require.NoError(t, r.Unpack(out))
	assert.True(t, r.Truncated)
	assert.Equal(t, m.Question, r.Question)
	assert.Empty(t, r.Answer)
	assert.Empty(t, r.Extra)
	assert.Equal(t, m.Id, r.Id)
	for _, bad := range [][]byte{nil, b[:12], b[:14]} {
		_, ok := truncated(append([]byte(nil), bad...))
		assert.False(t, ok)
	}
}

// TestTCPBounds: DNS over TCP holds at most TCPMaxConns connections (a
// connection beyond is closed at accept, counted) and closes one that sends
// no query within the initial timeout.
func TestTCPBounds(t *testing.T) {
	h, _, nums := sampleHandler(t)
	reg := prometheus.NewRegistry()
	vec, err := dipstat.Register(reg)
	require.NoError(t, err)
	_, tcp := serveWith(t, h, ServerConfig{TCPMaxConns: 2, Metrics: vec.For("enum")})
	var cs []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", tcp)
		require.NoError(t, err)
		defer c.Close()
		cs = append(cs, c)
	}
	closed := func(c net.Conn, within time.Duration) bool {
		require.NoError(t, c.SetReadDeadline(time.Now().Add(within)))
		n, err := c.Read(make([]byte, 1))
		return n == 0 && err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
	}
	assert.True(t, closed(cs[2], time.Second), "beyond the cap: closed at accept")
	assert.Equal(t, 1.0, droppedCount(t, reg, dipstat.DropFull))
	// The two held answer; then, silent, they are closed after the
	// initial timeout (2 s).
	dc := &dns.Conn{Conn: cs[0]}
	require.NoError(t, dc.WriteMsg(query(nums.Ported)))
	require.NoError(t, cs[0].SetReadDeadline(time.Now().Add(2*time.Second)))
	r, err := dc.ReadMsg()
	require.NoError(t, err)
	assert.Len(t, r.Answer, 1)
	assert.True(t, closed(cs[1], 4*time.Second), "silent: closed after the initial timeout")
}

// droppedCount returns lnpdb_dip_dropped_total{reason} from reg.
func droppedCount(t *testing.T, reg *prometheus.Registry, reason string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "lnpdb_dip_dropped_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == reason {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
