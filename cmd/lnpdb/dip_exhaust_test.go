package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/kamailiopdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testio"
)

// limitedServe is a real lnpdb serve process run under an open-file limit
// (prlimit), with every front end on loopback.
type limitedServe struct {
	cmd                    *exec.Cmd
	logs                   *testio.Buffer
	exit                   chan error
	http, sip, dnsa, pdbAd string
}

func startLimitedServe(t *testing.T, nofile int, args ...string) *limitedServe {
	t.Helper()
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit is missing (Debian package util-linux)")
	}
	p := &limitedServe{logs: new(testio.Buffer), exit: make(chan error, 1)}
	cmd := exec.Command(prlimit, append([]string{fmt.Sprintf("--nofile=%d:%d", nofile, nofile), "--", os.Args[0],
		"serve", "--addr", "127.0.0.1:0", "--dev-key", "--access-log=false",
		"--sip", "127.0.0.1:0", "--dns", "127.0.0.1:0", "--pdb", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), asLnpdbEnv+"=1")
	cmd.Stderr = p.logs
	out := new(testio.Buffer)
	cmd.Stdout = out
	require.NoError(t, cmd.Start())
	p.cmd = cmd
	go func() { p.exit <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("lnpdb serve's log:\n%s", tail(p.logs.String(), 4000))
		}
	})
	find := func(b *testio.Buffer, re string) string {
		rx := regexp.MustCompile(re)
		var m []string
		require.Eventually(t, func() bool {
			p.requireAlive(t)
			m = rx.FindStringSubmatch(b.String())
			return m != nil
		}, time.Minute, 10*time.Millisecond, "waiting for %q", re)
		return m[1]
	}
	p.http = find(out, `on (http://127\.0\.0\.1:\d+)`)
	p.pdbAd = find(p.logs, `serving pdb" addr=(\S+)`)
	p.dnsa = find(p.logs, `serving ENUM" addr=(\S+)`)
	p.sip = find(p.logs, `serving SIP redirects" addr=(\S+)`)
	return p
}

func (p *limitedServe) stop(t *testing.T) {
	t.Helper()
	p.requireAlive(t)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-p.exit:
		require.NoError(t, err, "exits 0 on SIGTERM")
	case <-time.After(time.Minute):
		t.Fatal("no exit on SIGTERM")
	}
}

func (p *limitedServe) requireAlive(t *testing.T) {
	t.Helper()
	select {
	case err := <-p.exit:
		p.exit <- err
		t.Fatalf("lnpdb serve exited (%v): %s", err, tail(p.logs.String(), 2000))
	default:
	}
}

// idleConns opens n TCP connections to addr that send nothing (the server
// may close some at once: its cap).
func idleConns(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	var cs []net.Conn
	for range n {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			continue // the backlog is full: as many as the kernel takes
		}
		cs = append(cs, c)
	}
	t.Cleanup(func() {
		for _, c := range cs {
			c.Close()
		}
	})
	return cs
}

// stillOpen counts the connections of cs the server has not closed.
func stillOpen(cs []net.Conn) int {
	n := 0
	buf := make([]byte, 1)
	for _, c := range cs {
		_ = c.SetReadDeadline(time.Now().Add(time.Millisecond))
		_, err := c.Read(buf)
		var ne net.Error
		if err != nil && errors.As(err, &ne) && ne.Timeout() {
			n++
		}
	}
	return n
}

func (p *limitedServe) httpOK(timeout time.Duration) error {
	c := &http.Client{Timeout: timeout}
	res, err := c.Get(p.http + "/metrics")
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.Contains(string(body), "lnpdb_dip_requests_total") {
		return fmt.Errorf("GET /metrics: %d", res.StatusCode)
	}
	return nil
}

func (p *limitedServe) metrics(t *testing.T) string {
	t.Helper()
	res, err := http.Get(p.http + "/metrics")
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return string(body)
}

// probeWait bounds each probe of a front end that should answer: only a
// real failure reaches it, not a busy machine. A probe repeated until the
// front ends recover waits retryWait, and the loop around it a minute.
const probeWait, retryWait = 10 * time.Second, 2 * time.Second

func (p *limitedServe) pdbOK() error {
	c, err := net.Dial("udp", p.pdbAd)
	if err != nil {
		return err
	}
	defer c.Close()
	q, err := kamailiopdb.AppendRequest(nil, 9, "12025550123")
	if err != nil {
		return err
	}
	buf := make([]byte, 512)
	for range 5 {
		if _, err := c.Write(q); err != nil {
			return err
		}
		_ = c.SetReadDeadline(time.Now().Add(probeWait / 5))
		n, err := c.Read(buf)
		if err != nil {
			continue
		}
		rep, err := kamailiopdb.ParseReply(buf[:n])
		if err != nil {
			return err
		}
		if rep.Code != kamailiopdb.CodeOK {
			return fmt.Errorf("pdb answered code %d", rep.Code)
		}
		return nil
	}
	return fmt.Errorf("pdb: no answer")
}

func (p *limitedServe) dnsOK(network string, timeout time.Duration) error {
	m := new(dns.Msg)
	m.SetQuestion("3.2.1.0.5.5.5.2.0.2.1.e164.arpa.", dns.TypeNAPTR)
	resp, _, err := (&dns.Client{Net: network, Timeout: timeout}).Exchange(m, p.dnsa)
	if err != nil {
		return err
	}
	if len(resp.Answer) != 1 {
		return fmt.Errorf("ENUM over %s: %d answers", network, len(resp.Answer))
	}
	return nil
}

func (p *limitedServe) sipTCPOK(timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", p.sip, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Fprintf(c, "INVITE sip:+12025550123@example.net SIP/2.0\r\nVia: SIP/2.0/TCP %s;branch=z9hG4bK-x\r\nFrom: <sip:a@example.net>;tag=1\r\nTo: <sip:+12025550123@example.net>\r\nCall-ID: exhaust-1\r\nCSeq: 1 INVITE\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n", c.LocalAddr())
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	buf := make([]byte, 2048)
	n, err := c.Read(buf)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(string(buf[:n]), "SIP/2.0 302 ") {
		return fmt.Errorf("SIP over TCP answered %q", buf[:n])
	}
	return nil
}

// TestServeSurvivesDescriptorExhaustion holds 300 idle TCP connections to
// the SIP port of a real lnpdb limited to 256 descriptors. Bounded by the
// SIP connection cap (a quarter of the limit by default) the process never
// runs out, and every other front end answers while they are held; with a
// cap above the limit it runs out, accepts fail (EMFILE) and are retried,
// and once the idle connections expire everything answers again: no
// accept error ends the process.
func TestServeSurvivesDescriptorExhaustion(t *testing.T) {
	if testing.Short() {
		t.Skip("starts lnpdb processes")
	}
	const nofile, attack = 256, 300
	t.Run("cap", func(t *testing.T) {
		// The idle lifetime outlasts the test: what is held stays held.
		p := startLimitedServe(t, nofile, "--sip-tcp-idle", "5m")
		cs := idleConns(t, p.sip, attack)
		require.Eventually(t, func() bool { return stillOpen(cs) == nofile/4 }, time.Minute, 50*time.Millisecond,
			"the SIP connections held: the cap, a quarter of the descriptors")
		p.requireAlive(t)
		require.NoError(t, p.httpOK(probeWait), "HTTP while the SIP connections are held")
		require.NoError(t, p.dnsOK("udp", probeWait))
		require.NoError(t, p.dnsOK("tcp", probeWait))
		require.NoError(t, p.pdbOK())
		// Refused at once (closed at accept): the wait is only a bound.
		assert.Error(t, p.sipTCPOK(probeWait), "SIP over TCP is full")
		for _, c := range cs[:10] {
			c.Close()
		}
		require.Eventually(t, func() bool { return p.sipTCPOK(retryWait) == nil }, time.Minute, 50*time.Millisecond,
			"SIP over TCP answers again once connections close")
		m := regexp.MustCompile(`lnpdb_dip_dropped_total\{proto="sip",reason="full"\} (\d+)`).FindStringSubmatch(p.metrics(t))
		require.NotNil(t, m)
		t.Logf("%d idle connections: %d held, dropped at accept (full): %s", len(cs), nofile/4, m[1])
		p.stop(t)
	})
	t.Run("exhausted", func(t *testing.T) {
		// The idle lifetime outlasts opening the connections on a busy
		// machine: they exhaust the descriptors before the first expires.
		p := startLimitedServe(t, nofile, "--sip-tcp-idle", "5s", "--sip-tcp-max-conns", "100000")
		cs := idleConns(t, p.sip, attack)
		// Accepts fail now (EMFILE), and are logged; they are retried
		// until the idle connections expire.
		require.Eventually(t, func() bool {
			p.requireAlive(t)
			return strings.Contains(p.logs.String(), "too many open files")
		}, time.Minute, 10*time.Millisecond, "the accept errors were met and logged")
		t.Logf("%d idle connections, %d held by the server", len(cs), stillOpen(cs))
		require.NoError(t, p.dnsOK("udp", probeWait), "UDP needs no new descriptor")
		require.NoError(t, p.pdbOK())
		require.Eventually(t, func() bool {
			p.requireAlive(t)
			return p.httpOK(retryWait) == nil && p.dnsOK("tcp", retryWait) == nil && p.sipTCPOK(retryWait) == nil
		}, time.Minute, 100*time.Millisecond, "every TCP front end answers once the idle connections expire")
		p.stop(t)
	})
}
