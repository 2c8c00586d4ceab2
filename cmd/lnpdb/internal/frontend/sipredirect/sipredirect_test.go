package sipredirect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emiago/sipgo/sip"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/dipstat"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/diptest"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/lnpdb/lnpdb/lrn"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sampleServer returns a server of the sample table, the table, and its
// numbers of every kind.
func sampleServer(t testing.TB) (*Server, *format.DB, diptest.Numbers) {
	t.Helper()
	return diptest.Sample(t, func(tables diptest.FixedTables) (*Server, error) { return New(Config{Tables: tables}) })
}

func invite(method, ruri, laddr string, cseq int) string {
	return fmt.Sprintf("%[1]s %[2]s SIP/2.0\r\n"+
		"Via: SIP/2.0/UDP %[3]s;branch=z9hG4bK-%[4]d-test;rport\r\n"+
		"Max-Forwards: 70\r\n"+
		"From: <sip:caller@%[3]s>;tag=caller-%[4]d\r\n"+
		"To: <%[2]s>\r\n"+
		"Call-ID: call-%[4]d@test\r\n"+
		"CSeq: %[4]d %[1]s\r\n"+
		"Contact: <sip:caller@%[3]s>\r\n"+
		"Content-Length: 0\r\n\r\n", method, ruri, laddr, cseq)
}

// startUDP serves s on loopback UDP and returns a connected client socket.
func startUDP(t *testing.T, s *Server) net.Conn {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- s.ServeUDP(pc) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		assert.NoError(t, s.Shutdown(ctx))
		assert.ErrorIs(t, <-done, ErrServerClosed)
	})
	c, err := net.Dial("udp", pc.LocalAddr().String())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

var seq = 0

// ask sends a request and returns the final response, resending on loss.
func ask(t *testing.T, c net.Conn, method, ruri string) *sip.Response {
	t.Helper()
	seq++
	msg := invite(method, ruri, c.LocalAddr().String(), seq)
	buf := make([]byte, 65535)
	for try := 0; try < 4; try++ {
		_, err := c.Write([]byte(msg))
		require.NoError(t, err)
		require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Second)))
		for {
			n, err := c.Read(buf)
			if err != nil {
				break
			}
			m, err := sip.ParseMessage(buf[:n])
			require.NoError(t, err, string(buf[:n]))
			res, ok := m.(*sip.Response)
			require.True(t, ok)
			if res.StatusCode >= 200 {
				if method == "INVITE" {
					ack := strings.Replace(msg, "INVITE "+ruri, "ACK "+ruri, 1)
					ack = strings.Replace(ack, fmt.Sprintf("CSeq: %d INVITE", seq), fmt.Sprintf("CSeq: %d ACK", seq), 1)
					_, err := c.Write([]byte(ack))
					require.NoError(t, err)
				}
				return res
			}
		}
	}
	t.Fatalf("no final response to %s %s", method, ruri)
	return nil
}

func contactOf(t *testing.T, res *sip.Response) string {
	t.Helper()
	h := res.GetHeader("Contact")
	require.NotNil(t, h, res.String())
	return strings.Trim(h.Value(), "<>")
}

// TestRedirect sends INVITEs for every kind of number, in every request URI
// form, and checks each answer against lrn.Lookup.
func TestRedirect(t *testing.T) {
	s, db, nums := sampleServer(t)
	c := startUDP(t, s)
	for _, k := range nums.All() {
		for _, form := range []string{"sip:+%s@example.net", "sip:%s@example.net;user=phone", "sip:%.0s%s@10.0.0.1:5080", "tel:+%s"} {
			var ruri string
			if strings.Contains(form, "%.0s") {
				ruri = fmt.Sprintf(form, k[1][:1], k[1][1:]) // ten digits
			} else {
				ruri = fmt.Sprintf(form, k[1])
			}
			t.Run(k[0]+"/"+ruri, func(t *testing.T) {
				res := ask(t, c, "INVITE", ruri)
				// The usual headers, with a To tag.
				for _, h := range []string{"Via", "From", "To", "Call-ID", "CSeq"} {
					assert.NotNil(t, res.GetHeader(h), h)
				}
				assert.Contains(t, res.GetHeader("To").Value(), "tag=")
				assert.Equal(t, "0", res.GetHeader("Content-Length").Value())
				r, err := lrn.Lookup(db, k[1], lrn.Options{})
				switch k[0] {
				case "vacant":
					assert.ErrorIs(t, err, lrn.ErrNotFound)
					assert.Equal(t, 404, res.StatusCode)
					return
				case "invalid":
					assert.ErrorIs(t, err, lrn.ErrInvalidNumber)
					assert.Equal(t, 484, res.StatusCode)
					assert.Contains(t, res.GetHeader("Reason").Value(), "not a NANP number")
					return
				}
				require.NoError(t, err)
				require.Equal(t, 302, res.StatusCode, res.String())
				var u sip.Uri
				require.NoError(t, sip.ParseUri(ruri, &u))
				tg, why := parseTarget(&u)
				require.Nil(t, why)
				user := tg.number
				want := user + ";npdi"
				if r.LRN != r.PhoneNumber {
					want += ";rn=+" + r.LRN
				}
				got := contactOf(t, res)
				if u.Scheme == "tel" {
					assert.Equal(t, "tel:"+want, got)
				} else {
					assert.Equal(t, strings.Replace(ruri, user, want, 1), got)
				}
				// What lrn reads back from the Contact is the lookup.
				var cu sip.Uri
				require.NoError(t, sip.ParseUri(got, &cu))
				ct, why := parseTarget(&cu)
				require.Nil(t, why)
				tel, err := lrn.ParseTelURI(ct.telURI())
				require.NoError(t, err)
				assert.Equal(t, r.TelURI(), tel)
			})
		}
	}
}

func TestAlreadyDipped(t *testing.T) {
	db := testdb.Sample(t)
	s, err := New(Config{Tables: diptest.Fixed(nil)}) // no table: a dip would fail
	require.NoError(t, err)
	c := startUDP(t, s)
	nums := diptest.Find(t, db)
	ruri := "sip:+" + nums.Ported + ";npdi;rn=+12025550000@example.net"
	res := ask(t, c, "INVITE", ruri)
	require.Equal(t, 302, res.StatusCode)
	assert.Equal(t, ruri, contactOf(t, res), "redirected to itself, not dipped again")

	res = ask(t, c, "INVITE", "sip:+"+nums.Ported+"@example.net")
	assert.Equal(t, 503, res.StatusCode, "no table")
}

func TestMethodsAndAllowList(t *testing.T) {
	s, db, nums := sampleServer(t)
	c := startUDP(t, s)

	assert.Equal(t, 200, ask(t, c, "OPTIONS", "sip:example.net").StatusCode, "health probe")
	assert.Equal(t, 302, ask(t, c, "OPTIONS", "sip:+"+nums.Ported+"@example.net").StatusCode)
	assert.Equal(t, 484, ask(t, c, "INVITE", "sip:example.net").StatusCode)
	assert.Equal(t, 484, ask(t, c, "INVITE", "sip:alice@example.net").StatusCode)
	res := ask(t, c, "MESSAGE", "sip:+"+nums.Ported+"@example.net")
	assert.Equal(t, 405, res.StatusCode)
	assert.NotNil(t, res.GetHeader("Allow"))

	// A source outside the allow-list is dropped, unanswered (a 403 would
	// go to whoever a spoofed datagram names), and counted.
	reg := prometheus.NewRegistry()
	vec, err := dipstat.Register(reg)
	require.NoError(t, err)
	s2, err := New(Config{Tables: diptest.Fixed(db), Allow: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}, Metrics: vec.For("sip")})
	require.NoError(t, err)
	c2 := startUDP(t, s2)
	for i := range 3 {
		_, err := c2.Write([]byte(invite("INVITE", "sip:+"+nums.Ported+"@example.net", c2.LocalAddr().String(), 100+i)))
		require.NoError(t, err)
	}
	require.NoError(t, c2.SetReadDeadline(time.Now().Add(500*time.Millisecond)))
	n, err := c2.Read(make([]byte, 4096))
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded, "answered %d bytes", n)
	assert.Equal(t, 3.0, dropped(t, reg, "sip", "denied"))
	s3, err := New(Config{Tables: diptest.Fixed(db), Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	require.NoError(t, err)
	c3 := startUDP(t, s3)
	assert.Equal(t, 302, ask(t, c3, "INVITE", "sip:+"+nums.Ported+"@example.net").StatusCode)
}

func TestTCP(t *testing.T) {
	s, db, nums := sampleServer(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- s.ServeTCP(l) }()
	c, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	msg := strings.Replace(invite("INVITE", "sip:+"+nums.Pooled+"@example.net", c.LocalAddr().String(), 1), "SIP/2.0/UDP", "SIP/2.0/TCP", 1)
	_, err = c.Write([]byte(msg))
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(3*time.Second)))
	buf := make([]byte, 4096)
	n, err := c.Read(buf)
	require.NoError(t, err)
	m, err := sip.ParseMessage(buf[:n])
	require.NoError(t, err)
	res := m.(*sip.Response)
	r, err := lrn.Lookup(db, nums.Pooled, lrn.Options{})
	require.NoError(t, err)
	assert.Equal(t, 302, res.StatusCode)
	assert.Contains(t, res.GetHeader("Contact").Value(), ";npdi;rn=+"+r.LRN+"@")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx))
	assert.ErrorIs(t, <-done, ErrServerClosed)
}

// TestLiveUpdate: a port applied to the served table changes the next
// redirect, with no restart.
func TestLiveUpdate(t *testing.T) {
	s, db, nums := sampleServer(t)
	req := func() *sip.Request {
		m, err := sip.ParseMessage([]byte(invite("INVITE", "sip:+"+nums.Home+"@example.net", "127.0.0.1:5099", 1)))
		require.NoError(t, err)
		return m.(*sip.Request)
	}
	assert.Equal(t, "sip:+"+nums.Home+";npdi@example.net", contactOf(t, s.Respond(req())))

	ported, err := lrn.Lookup(db, nums.Ported, lrn.Options{})
	require.NoError(t, err)
	tn, _ := strconv.ParseUint(nums.Home[1:], 10, 64)
	to, _ := strconv.ParseUint(ported.LRN[1:], 10, 64)
	require.NoError(t, db.Apply([]format.Update{{Action: format.Add, TN: tn, LRN: to, SPID: ported.SPID}}))
	assert.Equal(t, "sip:+"+nums.Home+";npdi;rn=+"+ported.LRN+"@example.net", contactOf(t, s.Respond(req())))
}

// TestStatelessTag: a retransmitted request gets the same To tag (RFC 3261
// §8.2.7), another request another one, and the request is left as it came.
func TestStatelessTag(t *testing.T) {
	s, _, nums := sampleServer(t)
	parse := func(cseq int) *sip.Request {
		m, err := sip.ParseMessage([]byte(invite("INVITE", "sip:+"+nums.Ported+"@example.net", "127.0.0.1:5099", cseq)))
		require.NoError(t, err)
		return m.(*sip.Request)
	}
	tag := func(res *sip.Response) string {
		v, ok := res.To().Params.Get("tag")
		require.True(t, ok)
		require.NotEmpty(t, v)
		return v
	}
	first := tag(s.Respond(parse(1)))
	assert.Equal(t, first, tag(s.Respond(parse(1))), "retransmission")
	assert.NotEqual(t, first, tag(s.Respond(parse(2))), "another request")
	req := parse(3)
	s.Respond(req)
	assert.False(t, req.To().Params.Has("tag"))
}

// TestDatagramsNotAnswered: an ACK and a response, with or without leading
// CRLFs, get no answer, while the INVITE they follow does.
func TestDatagramsNotAnswered(t *testing.T) {
	s, _, nums := sampleServer(t)
	ruri := "sip:+" + nums.Ported + "@example.net"
	from := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5099}
	inv := invite("INVITE", ruri, from.String(), 7)
	out, ok := s.answerDatagram(nil, []byte(inv), from)
	require.True(t, ok)
	m, err := sip.ParseMessage(out)
	require.NoError(t, err)
	require.Equal(t, 302, m.(*sip.Response).StatusCode)

	ack := strings.Replace(strings.Replace(inv, "INVITE "+ruri, "ACK "+ruri, 1), "CSeq: 7 INVITE", "CSeq: 7 ACK", 1)
	require.NotEqual(t, inv, ack)
	for _, d := range []string{ack, "\r\n" + ack, string(out), "\r\n\r\n" + string(out)} {
		_, ok := s.answerDatagram(nil, []byte(d), from)
		assert.False(t, ok, d)
	}
}

// serveTCP serves s on a loopback TCP listener and returns its address.
func serveTCP(t *testing.T, s *Server) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- s.ServeTCP(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		assert.NoError(t, s.Shutdown(ctx))
		assert.ErrorIs(t, <-done, ErrServerClosed)
	})
	return l.Addr().String()
}

// closedByServer reports whether the server closed c within two seconds,
// with nothing sent.
func closedByServer(t *testing.T, c net.Conn) bool {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(2*time.Second)))
	n, err := c.Read(make([]byte, 1))
	return n == 0 && err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
}

// TestTCPBounds: over TCP an idle connection is closed after TCPIdle, one
// beyond TCPMaxConns at once, and one from outside the allow-list at
// accept, before it sends anything.
func TestTCPBounds(t *testing.T) {
	db := testdb.Sample(t)
	s, err := New(Config{Tables: diptest.Fixed(db), TCPIdle: 200 * time.Millisecond, TCPMaxConns: 2})
	require.NoError(t, err)
	addr := serveTCP(t, s)
	var cs []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		cs = append(cs, c)
	}
	start := time.Now()
	assert.True(t, closedByServer(t, cs[2]), "beyond the cap")
	assert.Less(t, time.Since(start), 150*time.Millisecond, "closed at accept, not when idle")
	assert.True(t, closedByServer(t, cs[0]), "idle")
	assert.True(t, closedByServer(t, cs[1]), "idle")
	require.Eventually(t, func() bool { return s.TCPConns() == 0 }, 2*time.Second, 10*time.Millisecond)

	s2, err := New(Config{Tables: diptest.Fixed(db), Allow: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}})
	require.NoError(t, err)
	c, err := net.Dial("tcp", serveTCP(t, s2))
	require.NoError(t, err)
	defer c.Close()
	start = time.Now()
	assert.True(t, closedByServer(t, c), "outside the allow-list")
	assert.Less(t, time.Since(start), time.Second, "at accept")
	assert.Zero(t, s2.TCPConns())
}

// dropped returns lnpdb_dip_dropped_total{proto, reason} from reg.
func dropped(t *testing.T, reg *prometheus.Registry, proto, reason string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "lnpdb_dip_dropped_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["proto"] == proto && labels["reason"] == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestShutdownWhileRequestsArrive: Shutdown closes the listener first and
// the open connections last, so requests keep arriving on them while it
// waits for those being answered. Each is answered or dropped; none may be
// counted from zero while the wait runs (under -race, the WaitGroup this
// used reported exactly that) or hold the Shutdown past its context.
func TestShutdownWhileRequestsArrive(t *testing.T) {
	db := testdb.Sample(t)
	for round := range 5 {
		s, err := New(Config{Tables: diptest.Fixed(db)})
		require.NoError(t, err)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		served := make(chan error, 1)
		go func() { served <- s.ServeTCP(l) }()
		var senders sync.WaitGroup
		for c := range 4 {
			conn, err := net.Dial("tcp", l.Addr().String())
			require.NoError(t, err)
			defer conn.Close()
			senders.Add(1)
			go func() {
				defer senders.Done()
				go io.Copy(io.Discard, conn)
				from := conn.LocalAddr().String()
				for i := 1; ; i++ {
					inv := strings.Replace(invite("OPTIONS", "sip:+12025550123@example.net", from, round*100000+c*10000+i), "SIP/2.0/UDP", "SIP/2.0/TCP", 1)
					if _, err := conn.Write([]byte(inv)); err != nil {
						return // closed by the Shutdown
					}
				}
			}()
		}
		time.Sleep(20 * time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		require.NoError(t, s.Shutdown(ctx))
		cancel()
		require.ErrorIs(t, <-served, ErrServerClosed)
		senders.Wait()
	}
}
