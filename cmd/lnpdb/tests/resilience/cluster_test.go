//go:build linux

package resilience

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/kamailiopdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testio"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testpg"
)

func TestMain(m *testing.M) {
	code := testpg.Main(m)
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// The lnpdb binary under test, built once.
var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// lnpdbBinary builds the lnpdb binary from this module and returns its path.
func lnpdbBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "lnpdb-resilience-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "lnpdb")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/lnpdb/lnpdb/cmd/lnpdb").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, binErr)
	return binPath
}

// run runs an lnpdb command to its end and returns its standard output.
func run(t *testing.T, args ...string) string {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(lnpdbBinary(t), args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "lnpdb %s: %s", strings.Join(args, " "), stderr.String())
	return strings.TrimSpace(string(out))
}

// node is one lnpdb serve process with every front end on.
type node struct {
	t                   *testing.T
	name                string
	args                []string
	nofile              int
	cmd                 *exec.Cmd
	exit                chan error
	logs                *testio.Buffer
	base, sip, dns, pdb string
	client              *http.Client
}

var (
	httpRx = regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)`)
	pdbRx  = regexp.MustCompile(`serving pdb" addr=(127\.0\.0\.1:\d+)`)
	enumRx = regexp.MustCompile(`serving ENUM" addr=(127\.0\.0\.1:\d+)`)
	sipRx  = regexp.MustCompile(`serving SIP redirects" addr=(127\.0\.0\.1:\d+)`)
)

// startNode starts lnpdb serve with args and SIP, ENUM and pdb on free
// loopback ports; nofile > 0 runs it under that RLIMIT_NOFILE.
func startNode(t *testing.T, name string, nofile int, args ...string) *node {
	t.Helper()
	n := &node{t: t, name: name, nofile: nofile, client: &http.Client{Timeout: 15 * time.Second}}
	n.args = append([]string{"serve", "--addr", "127.0.0.1:0", "--access-log=false",
		"--dns", "127.0.0.1:0", "--pdb", "127.0.0.1:0"}, args...)
	n.start(t)
	t.Cleanup(func() {
		if n.cmd != nil {
			_ = n.cmd.Process.Kill()
			<-n.exit
		}
		if t.Failed() {
			t.Logf("%s's log:\n%s", n.name, n.logs.String())
		}
	})
	return n
}

// start starts the process. SIP takes one port for UDP and TCP alike: it
// is given a port free for both, and when another socket takes it before
// lnpdb binds it, start tries again.
func (n *node) start(t *testing.T) {
	t.Helper()
	for try := 0; ; try++ {
		if n.startOnce(t, try == 4) {
			return
		}
	}
}

// sipPort is a loopback port that is free for TCP and UDP now.
func sipPort(t *testing.T) string {
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.Addr().String()
		u, err := net.ListenPacket("udp", addr)
		l.Close()
		if err == nil {
			u.Close()
			return addr
		}
	}
}

// startOnce starts the process once; it reports false when the process
// exited because a port was taken and last is false.
func (n *node) startOnce(t *testing.T, last bool) bool {
	t.Helper()
	bin := lnpdbBinary(t)
	n.exit = make(chan error, 1)
	n.logs = new(testio.Buffer)
	args := append(slices.Clone(n.args), "--sip", sipPort(t))
	n.cmd = exec.Command(bin, args...)
	n.cmd.Stderr = n.logs
	if n.nofile > 0 {
		// prlimit(1) sets the child's limit before it runs lnpdb; the
		// test process keeps its own.
		path, err := exec.LookPath("prlimit")
		if err != nil {
			t.Skip("prlimit not found: install the Debian package util-linux")
		}
		lim := strconv.Itoa(n.nofile)
		n.cmd = exec.Command(path, append([]string{"--nofile=" + lim + ":" + lim, "--", bin}, args...)...)
		n.cmd.Stderr = n.logs
	}
	out, err := n.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, n.cmd.Start())
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if m := httpRx.FindStringSubmatch(sc.Text()); m != nil {
			n.base = m[1]
			break
		}
	}
	if n.base == "" {
		err := n.cmd.Wait()
		if !last && strings.Contains(n.logs.String(), "address already in use") {
			return false
		}
		t.Fatalf("%s printed no address (%v): %s", n.name, err, n.logs.String())
	}
	go func() {
		_, _ = io.Copy(io.Discard, out)
		n.exit <- n.cmd.Wait()
	}()
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		s := n.logs.String()
		if pdbRx.MatchString(s) && enumRx.MatchString(s) && sipRx.MatchString(s) {
			n.pdb, n.dns, n.sip = pdbRx.FindStringSubmatch(s)[1], enumRx.FindStringSubmatch(s)[1], sipRx.FindStringSubmatch(s)[1]
			return true
		}
		select {
		case err := <-n.exit:
			if !last && strings.Contains(n.logs.String(), "address already in use") {
				return false
			}
			t.Fatalf("%s exited (%v): %s", n.name, err, n.logs.String())
		default:
		}
		if time.Now().After(end) {
			t.Fatalf("%s did not log its front ends: %s", n.name, n.logs.String())
		}
	}
}

// alive fails t if the process has exited.
func (n *node) alive(t *testing.T) {
	t.Helper()
	select {
	case err := <-n.exit:
		n.exit <- err
		t.Fatalf("%s exited (%v): %s", n.name, err, n.logs.String())
	default:
	}
}

// kill kills the process with SIGKILL and waits for it.
func (n *node) kill() {
	_ = n.cmd.Process.Signal(syscall.SIGKILL)
	<-n.exit
	n.cmd = nil
}

// lookup posts one REST LRN lookup with key and returns its status and
// body (status 0: no answer reached the client).
func (n *node) lookup(key, number string) (int, []byte) {
	req, _ := http.NewRequest("POST", n.base+"/api/v1/lrn", strings.NewReader(`{"phone_number":"`+number+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := n.client.Do(req)
	if err != nil {
		return 0, nil
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, nil
	}
	return res.StatusCode, b
}

// postFeed posts a CSV feed to the admin API.
func (n *node) postFeed(adminKey, feed, query string) (int, []byte) {
	req, _ := http.NewRequest("POST", n.base+"/admin/v1/updates"+query, strings.NewReader(feed))
	req.Header.Set("Content-Type", "text/csv")
	req.Header.Set("Authorization", "Bearer "+adminKey)
	res, err := n.client.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// The front ends a probe can ask.
const (
	feHTTP   = "http"
	fePDB    = "pdb"
	feDNSUDP = "enum/udp"
	feDNSTCP = "enum/tcp"
	feSIPUDP = "sip/udp"
	feSIPTCP = "sip/tcp"
)

var frontEnds = []string{feHTTP, fePDB, feDNSUDP, feDNSTCP, feSIPUDP, feSIPTCP}

// probe asks front end fe once for the sample's ported number and says
// why it got no right answer ("" when it did).
func (n *node) probe(fe, key string) string {
	const number = "12025550123"
	deadline := time.Now().Add(2 * time.Second)
	switch fe {
	case feHTTP:
		code, body := n.lookup(key, number)
		if code != http.StatusOK {
			return fmt.Sprintf("status %d %s", code, body)
		}
		return ""
	case fePDB:
		c, err := net.Dial("udp", n.pdb)
		if err != nil {
			return err.Error()
		}
		defer c.Close()
		q, _ := kamailiopdb.AppendRequest(nil, 1, number)
		buf := make([]byte, 512)
		for try := 0; try < 3; try++ {
			_, _ = c.Write(q)
			_ = c.SetReadDeadline(time.Now().Add(700 * time.Millisecond))
			k, err := c.Read(buf)
			if err != nil {
				continue
			}
			rep, err := kamailiopdb.ParseReply(buf[:k])
			if err != nil || rep.Code != kamailiopdb.CodeOK {
				return fmt.Sprintf("pdb reply %+v %v", rep, err)
			}
			return ""
		}
		return "no pdb reply"
	case feDNSUDP, feDNSTCP:
		m := new(dns.Msg)
		m.SetQuestion("3.2.1.0.5.5.5.2.0.2.1.e164.arpa.", dns.TypeNAPTR)
		netw := "udp"
		if fe == feDNSTCP {
			netw = "tcp"
		}
		var last error
		for try := 0; try < 3; try++ {
			r, _, err := (&dns.Client{Net: netw, Timeout: 700 * time.Millisecond}).Exchange(m, n.dns)
			if err != nil {
				last = err
				continue
			}
			if len(r.Answer) != 1 {
				return fmt.Sprintf("ENUM answer %v", r)
			}
			return ""
		}
		return fmt.Sprintf("no ENUM answer: %v", last)
	case feSIPUDP, feSIPTCP:
		netw := "udp"
		if fe == feSIPTCP {
			netw = "tcp"
		}
		c, err := net.DialTimeout(netw, n.sip, time.Second)
		if err != nil {
			return err.Error()
		}
		defer c.Close()
		buf := make([]byte, 2048)
		for try := 0; try < 3 && time.Now().Before(deadline.Add(time.Second)); try++ {
			fmt.Fprintf(c, "INVITE sip:+%s@example.net SIP/2.0\r\nVia: SIP/2.0/%s %s;branch=z9hG4bK-r%d\r\n"+
				"From: <sip:a@example.net>;tag=1\r\nTo: <sip:+%s@example.net>\r\nCall-ID: resilience-%d\r\n"+
				"CSeq: 1 INVITE\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n",
				number, strings.ToUpper(netw), c.LocalAddr(), try, number, try)
			_ = c.SetReadDeadline(time.Now().Add(700 * time.Millisecond))
			k, err := c.Read(buf)
			if err != nil {
				if netw == "tcp" {
					return "no SIP answer over TCP: " + err.Error()
				}
				continue
			}
			if !strings.HasPrefix(string(buf[:k]), "SIP/2.0 302 ") {
				return "SIP answer " + strings.SplitN(string(buf[:k]), "\r\n", 2)[0]
			}
			return ""
		}
		return "no SIP answer"
	}
	return "unknown front end " + fe
}

// answersAll fails t unless every front end but those in except answers,
// each within a few seconds.
func (n *node) answersAll(t *testing.T, key string, except ...string) {
	t.Helper()
	n.alive(t)
	for _, fe := range frontEnds {
		skip := false
		for _, e := range except {
			skip = skip || e == fe
		}
		if skip {
			continue
		}
		var why string
		ok := false
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
			if why = n.probe(fe, key); why == "" {
				ok = true
				break
			}
		}
		require.True(t, ok, "%s: %s does not answer: %s", n.name, fe, why)
	}
}

// load sends billed REST lookups with key to the nodes until stopped and
// counts what the clients received.
type load struct {
	stop     chan struct{}
	once     sync.Once
	wg       sync.WaitGroup
	ok       []atomic.Int64 // 200s received, per node
	mu       sync.Mutex
	other    map[int]int64 // any other status received
	noAnswer atomic.Int64  // no answer (connection error or timeout)
	worst    atomic.Int64  // worst time to any answer or error, ns
	okTimes  []*timeline   // when each node's 200s arrived
}

type timeline struct {
	mu sync.Mutex
	at []time.Time
}

func (tl *timeline) add(t time.Time) { tl.mu.Lock(); tl.at = append(tl.at, t); tl.mu.Unlock() }

// between counts the times in (from, to].
func (tl *timeline) between(from, to time.Time) int {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	k := 0
	for _, t := range tl.at {
		if t.After(from) && !t.After(to) {
			k++
		}
	}
	return k
}

func startLoad(t *testing.T, key string, nodes func() []*node, total int, workers int) *load {
	l := &load{stop: make(chan struct{}), ok: make([]atomic.Int64, total), other: map[int]int64{}}
	t.Cleanup(func() { l.end() })
	for range total {
		l.okTimes = append(l.okTimes, new(timeline))
	}
	for w := range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := w; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				ns := nodes()
				k := i % len(ns)
				n := ns[k]
				idx := 0
				fmt.Sscanf(n.name, "node%d", &idx)
				start := time.Now()
				code, _ := n.lookup(key, "12025550123")
				if d := int64(time.Since(start)); d > l.worst.Load() {
					l.worst.Store(d)
				}
				switch code {
				case http.StatusOK:
					l.ok[idx].Add(1)
					l.okTimes[idx].add(time.Now())
				case 0:
					l.noAnswer.Add(1)
					time.Sleep(20 * time.Millisecond)
				default:
					l.mu.Lock()
					l.other[code]++
					l.mu.Unlock()
					time.Sleep(5 * time.Millisecond)
				}
			}
		}()
	}
	return l
}

// statuses are the counts of the statuses other than 200.
func (l *load) statuses() map[int]int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.other)
}

func (l *load) end() int64 {
	l.once.Do(func() { close(l.stop) })
	l.wg.Wait()
	var sum int64
	for i := range l.ok {
		sum += l.ok[i].Load()
	}
	return sum
}

// pids are the PostgreSQL server's processes: the postmaster and its
// children, found from a backend's parent.
func postgresPIDs(t *testing.T, backend int) []int {
	t.Helper()
	ppid := func(pid int) int {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		p, _ := strconv.Atoi(f[1])
		return p
	}
	postmaster := ppid(backend)
	require.NotZero(t, postmaster, "no parent of backend %d", backend)
	pids := []int{postmaster}
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err == nil && ppid(pid) == postmaster {
			pids = append(pids, pid)
		}
	}
	return pids
}

// signalAll sends sig to every pid.
func signalAll(pids []int, sig syscall.Signal) {
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
	}
}

// jsonField reads one top-level string field of a JSON body.
func jsonField(b []byte, field string) string {
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return ""
	}
	s, _ := m[field].(string)
	return s
}

// dirBytes is the size of every file under dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// ctx is a short context for store reads.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// metric returns the value of the node's /metrics sample whose line
// starts with name (labels included), -1 when it has none.
func (n *node) metric(name string) int64 {
	res, err := n.client.Get(n.base + "/metrics")
	if err != nil {
		return -1
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return int64(f)
			}
		}
	}
	return -1
}

// unbilled is what the live nodes count as answered and never charged
// (their leases lost) and as paid for and given back (not delivered).
func (c *cluster) unbilled() (lost, undelivered int64) {
	for _, n := range c.live() {
		lost += n.metric(`lnpdb_billing_lookups_unbilled_total{reason="lease_lost"}`)
		undelivered += n.metric("lnpdb_billing_lookups_undelivered_total")
	}
	return lost, undelivered
}
