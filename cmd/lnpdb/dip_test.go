package main

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/kamailiopdb"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServeDips serves the sample over SIP, ENUM and pdb beside HTTP, asks
// each once, and checks the answers and the shared /metrics.
func TestServeDips(t *testing.T) {
	s := startServe(t, "--addr", "127.0.0.1:0", "--sip", "127.0.0.1:0", "--dns", "127.0.0.1:0", "--pdb", "127.0.0.1:0,[::1]:0")
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	pdbAddr := s.await(t, &s.stderr, `serving pdb" addr=(127\.0\.0\.1:\d+),`)
	dnsAddr := s.await(t, &s.stderr, `serving ENUM" addr=(\S+)`)
	sipAddr := s.await(t, &s.stderr, `serving SIP redirects" addr=(\S+)`)

	// pdb: +1 202 555 0123 is ported in the sample.
	c, err := net.Dial("udp", pdbAddr)
	require.NoError(t, err)
	defer c.Close()
	q, err := kamailiopdb.AppendRequest(nil, 7, "12025550123")
	require.NoError(t, err)
	var rep kamailiopdb.Reply
	buf := make([]byte, 512)
	for try := 0; try < 5; try++ {
		_, err = c.Write(q)
		require.NoError(t, err)
		require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Second)))
		n, rerr := c.Read(buf)
		if rerr == nil {
			rep, err = kamailiopdb.ParseReply(buf[:n])
			require.NoError(t, err)
			break
		}
	}
	assert.Equal(t, uint8(kamailiopdb.CodeOK), rep.Code)
	assert.Equal(t, int16(kamailiopdb.OtherCarrier), rep.Carrier, "no carrier file")

	// ENUM over TCP.
	m := new(dns.Msg)
	m.SetQuestion("3.2.1.0.5.5.5.2.0.2.1.e164.arpa.", dns.TypeNAPTR)
	resp, _, err := (&dns.Client{Net: "tcp", Timeout: 3 * time.Second}).Exchange(m, dnsAddr)
	require.NoError(t, err)
	require.Len(t, resp.Answer, 1)
	assert.Contains(t, resp.Answer[0].(*dns.NAPTR).Regexp, "tel:+12025550123;npdi;rn=+1")

	// SIP over TCP.
	sc, err := net.Dial("tcp", sipAddr)
	require.NoError(t, err)
	defer sc.Close()
	fmt.Fprintf(sc, "INVITE sip:+12025550123@example.net SIP/2.0\r\nVia: SIP/2.0/TCP %s;branch=z9hG4bK-serve\r\nFrom: <sip:a@example.net>;tag=1\r\nTo: <sip:+12025550123@example.net>\r\nCall-ID: serve-1\r\nCSeq: 1 INVITE\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n", sc.LocalAddr())
	require.NoError(t, sc.SetReadDeadline(time.Now().Add(3*time.Second)))
	n, err := sc.Read(buf)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(buf[:n]), "SIP/2.0 302 "), string(buf[:n]))
	assert.Contains(t, string(buf[:n]), "sip:+12025550123;npdi;rn=+1", "RFC 4694's npdi, as in the ENUM answer")

	code, body := call(t, "GET", base+"/metrics", "", "")
	require.Equal(t, http.StatusOK, code)
	for _, proto := range []string{"pdb", "enum", "sip"} {
		assert.Contains(t, body, `lnpdb_dip_answers_total{outcome="ported",proto="`+proto+`"} 1`)
		assert.Contains(t, body, `lnpdb_dip_duration_seconds_count{proto="`+proto+`"} 1`)
	}
	assert.Contains(t, body, "go_goroutines", "the runtime collectors stay")
	require.Equal(t, 0, s.stop(t))
}

// TestServeSIPNPDI: --sip-npdi yes, or LNPDB_SIP_NPDI=yes, makes the
// Contact carry npdi=yes for the switches that want a value.
func TestServeSIPNPDI(t *testing.T) {
	for _, how := range []string{"flag", "env"} {
		args := []string{"--addr", "127.0.0.1:0", "--sip", "127.0.0.1:0"}
		if how == "flag" {
			args = append(args, "--sip-npdi", "yes")
		} else {
			t.Setenv("LNPDB_SIP_NPDI", "yes")
		}
		s := startServe(t, args...)
		sipAddr := s.await(t, &s.stderr, `serving SIP redirects" addr=(\S+)`)
		c, err := net.Dial("udp", sipAddr)
		require.NoError(t, err)
		defer c.Close()
		buf := make([]byte, 4096)
		var n int
		for try := 0; try < 5; try++ {
			fmt.Fprintf(c, "INVITE sip:+12025550123@example.net SIP/2.0\r\nVia: SIP/2.0/UDP %s;branch=z9hG4bK-npdi\r\nFrom: <sip:a@example.net>;tag=1\r\nTo: <sip:+12025550123@example.net>\r\nCall-ID: npdi-1\r\nCSeq: 1 INVITE\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n", c.LocalAddr())
			require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Second)))
			if n, err = c.Read(buf); err == nil {
				break
			}
		}
		require.NoError(t, err)
		assert.Contains(t, string(buf[:n]), "sip:+12025550123;npdi=yes;rn=+1", how)
		require.Equal(t, 0, s.stop(t))
	}
}

func TestServeDipFlagsRefused(t *testing.T) {
	for _, args := range [][]string{
		{"--sip", "127.0.0.1:0", "--sip-allow", "not-a-network"},
		{"--dns", "127.0.0.1:0", "--enum-suffix", "bad..zone"},
		{"--pdb", "127.0.0.1:0", "--pdb-carriers", "/nonexistent/carriers"},
		{"--pdb", "256.0.0.1:0"},
		{"--sip", "127.0.0.1:0", "--sip-tcp-max-conns", "-1"},
		{"--sip", "127.0.0.1:0", "--sip-tcp-idle", "-1s"},
		{"--dns", "127.0.0.1:0", "--dns-rrl-rate", "-5"},
		{"--sip", "127.0.0.1:0", "--sip-npdi", "true"},
	} {
		s := startServe(t, append([]string{"--addr", "127.0.0.1:0"}, args...)...)
		select {
		case code := <-s.done:
			s.done <- code
			assert.NotEqual(t, 0, code, args)
		case <-time.After(30 * time.Second):
			t.Fatalf("serve %v did not refuse", args)
		}
	}
}
