//go:build linux

package resilience

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testpg"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testredis"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// cluster is two nodes on one PostgreSQL and one Redis.
type cluster struct {
	t        *testing.T
	pg       *testpg.Server
	redis    *testredis.Server
	dsn      string
	adminKey string
	mu       sync.Mutex
	nodes    []*node
	store    billing.Store
	accounts int
	// probeKey asks the front ends between attacks: its lookups are not
	// the attacked accounts', whose ledgers are compared with their loads.
	probeKey string
}

func newCluster(t *testing.T) *cluster {
	c := &cluster{t: t, pg: testpg.NewServer(t), redis: testredis.Start(t)}
	c.dsn = c.pg.DSN()
	dir := t.TempDir()
	admins := filepath.Join(dir, "admin-keys")
	c.adminKey = run(t, "key", "new", "--keys", admins)
	run(t, "account", "list", "--accounts", c.dsn) // creates the accounts schema
	for i := range 2 {
		table := testdb.Build(t, lnpdb.Sample())
		c.nodes = append(c.nodes, startNode(t, fmt.Sprintf("node%d", i), 0,
			"--db", table, "--accounts", c.dsn, "--updates-log", c.dsn, "--node", fmt.Sprintf("node%d", i),
			"--admin-keys", admins, "--redis", c.redis.URL(), "--redis-timeout", "200ms",
			"--lease-ttl", "2s"))
	}
	st, err := billing.Open(ctx(t), c.dsn)
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	c.store = st
	return c
}

func (c *cluster) live() []*node {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*node
	for _, n := range c.nodes {
		if n.cmd != nil {
			out = append(out, n)
		}
	}
	return out
}

// account creates an account with $100 of credit and a key without a
// practical rate limit, and waits until every live node knows the key;
// warm is how many lookups that took (each answered 200, so charged).
func (c *cluster) account(t *testing.T) (id, key string, warm int64) {
	c.accounts++
	id = run(t, "account", "create", "--accounts", c.dsn, "--name", fmt.Sprintf("resilience %d", c.accounts))
	key = run(t, "key", "new", "--accounts", c.dsn, "--account", id, "--rpm", "100000000")
	run(t, "wallet", "credit", "--accounts", c.dsn, "--account", id, "--amount", "100", "--ref", "INV-"+id)
	for _, n := range c.live() {
		var code int
		var body []byte
		for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			if code, body = n.lookup(key, "12025550123"); code == http.StatusOK {
				warm++
				break
			}
		}
		require.Equal(t, http.StatusOK, code, "%s never knew the new key: %s", n.name, body)
	}
	return id, key, warm
}

// charged is how many lookups the ledger holds for the account this month.
func (c *cluster) charged(t *testing.T, id string) int64 {
	rows, err := c.store.Usage(ctx(t), id, billing.Month(time.Now()))
	require.NoError(t, err)
	var n int64
	for _, r := range rows {
		n += r.Lookups
	}
	return n
}

// settleLedger waits until the ledger holds want lookups for id (the nodes
// sync about once a second) and returns what it holds then.
func (c *cluster) settleLedger(t *testing.T, id string, want int64) int64 {
	var got int64
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if got = c.charged(t, id); got == want {
			return got
		}
	}
	return got
}

// everyNodeAnswers checks every front end of every live node.
func (c *cluster) everyNodeAnswers(t *testing.T) {
	t.Helper()
	for _, n := range c.live() {
		n.answersAll(t, c.probeKey)
	}
}

// postgresPIDs finds the PostgreSQL server's processes.
func (c *cluster) postgresPIDs(t *testing.T) []int {
	conn, err := pgx.Connect(ctx(t), c.dsn)
	require.NoError(t, err)
	defer conn.Close(ctx(t))
	var backend int
	require.NoError(t, conn.QueryRow(ctx(t), "select pg_backend_pid()").Scan(&backend))
	return postgresPIDs(t, backend)
}

// suiteEnv names the variable that runs the suite: it takes minutes, and
// is not part of the test command a contributor runs every time.
const suiteEnv = "LNPDB_RESILIENCE"

// TestResilience attacks a two-node cluster, then one node under a low
// descriptor limit, then lnpdb pull, in one run.
func TestResilience(t *testing.T) {
	if os.Getenv(suiteEnv) == "" {
		t.Skipf("a suite of minutes of its own: %s=1 runs it (.ci/run does)", suiteEnv)
	}
	if testing.Short() {
		t.Skip("starts PostgreSQL, Redis and lnpdb serve processes")
	}
	if raceDetector {
		// What is attacked is the lnpdb binary, which the suite builds
		// without -race either way: run under -race, it would only repeat
		// the plain run's two minutes.
		t.Skip("the suite attacks an lnpdb binary built without -race: it runs in the test run without -race")
	}
	c := newCluster(t)
	_, c.probeKey, _ = c.account(t)
	c.everyNodeAnswers(t)

	// PostgreSQL frozen under billed load: lookups keep being answered or
	// refused within the store's deadline, and the ledger holds exactly
	// the lookups the clients received.
	t.Run("postgres frozen", func(t *testing.T) {
		id, key, warm := c.account(t)
		l := startLoad(t, key, c.live, 2, 8)
		time.Sleep(2 * time.Second)
		pids := c.postgresPIDs(t)
		signalAll(pids, syscall.SIGSTOP)
		frozen := time.Now()
		for _, n := range c.live() {
			n.answersAll(t, c.probeKey, feHTTP) // the softswitch front ends never wait on a store
		}
		time.Sleep(time.Until(frozen.Add(12 * time.Second)))
		signalAll(pids, syscall.SIGCONT)
		time.Sleep(3 * time.Second)
		delivered := l.end() + warm
		charged := c.settleLedger(t, id, delivered)
		lost, undelivered := c.unbilled()
		t.Logf("postgres frozen 12 s: %d answered 200, others %v, %d without an answer, worst %v; ledger %d",
			delivered, l.statuses(), l.noAnswer.Load(), time.Duration(l.worst.Load()), charged)
		t.Logf("unbilled on the nodes since they started: %d answered on leases lost, %d paid for and not delivered", lost, undelivered)
		require.Equal(t, delivered, charged, "lookups charged against answers delivered")
		require.Zero(t, l.noAnswer.Load(), "requests left without an answer")
		require.Less(t, time.Duration(l.worst.Load()), 10*time.Second, "a lookup waited on the frozen store")
		c.everyNodeAnswers(t)
	})

	// PostgreSQL stopped: admin updates are refused, lookups go on, and
	// once it is back the nodes catch up and agree.
	t.Run("postgres stopped", func(t *testing.T) {
		id, key, warm := c.account(t)
		l := startLoad(t, key, c.live, 2, 8)
		time.Sleep(time.Second)
		c.pg.Stop(t)
		time.Sleep(time.Second)
		code, body := c.live()[0].postFeed(c.adminKey, "action,tn,lrn,spid,activated_at\nU,2014810001,7327370999,0987,\n", "")
		require.Equal(t, http.StatusServiceUnavailable, code, "an update while the log is down: %s", body)
		require.Equal(t, "STORAGE_UNAVAILABLE", jsonField(body, "code"), "%s", body)
		for _, n := range c.live() {
			n.answersAll(t, c.probeKey, feHTTP)
		}
		time.Sleep(4 * time.Second)
		c.pg.Start(t)
		time.Sleep(3 * time.Second)
		delivered := l.end() + warm
		charged := c.settleLedger(t, id, delivered)
		lost, undelivered := c.unbilled()
		t.Logf("postgres stopped 6 s: %d answered 200, others %v, %d without an answer, worst %v; ledger %d",
			delivered, l.statuses(), l.noAnswer.Load(), time.Duration(l.worst.Load()), charged)
		t.Logf("unbilled on the nodes since they started: %d answered on leases lost, %d paid for and not delivered", lost, undelivered)
		require.Equal(t, delivered, charged, "lookups charged against answers delivered")
		require.Zero(t, l.noAnswer.Load(), "requests left without an answer")
		c.everyNodeAnswers(t)
		c.agree(t, key, 1)
	})

	// Every way a customer obtains a billed answer, on each node: the
	// ledger holds exactly the lookups delivered.
	t.Run("every billed way", func(t *testing.T) {
		id, key, warm := c.account(t)
		delivered := warm
		for _, n := range c.live() {
			delivered += everyBilledWay(t, n, key)
		}
		charged := c.settleLedger(t, id, delivered)
		lost, undelivered := c.unbilled()
		t.Logf("every billed way: %d delivered, ledger %d; on the nodes since they started: %d answered on leases lost, %d given back", delivered, charged, lost, undelivered)
		require.Equal(t, delivered, charged, "lookups charged against answers delivered")
	})

	// Redis frozen, then stopped: every node decides rate limits locally
	// in the meantime and keeps answering.
	t.Run("redis frozen and stopped", func(t *testing.T) {
		id, key, warm := c.account(t)
		l := startLoad(t, key, c.live, 2, 8)
		time.Sleep(time.Second)
		before := l.ok[0].Load() + l.ok[1].Load()
		c.redis.Pause()
		time.Sleep(4 * time.Second)
		during := l.ok[0].Load() + l.ok[1].Load() - before
		c.everyNodeAnswers(t)
		c.redis.Resume()
		c.redis.Stop()
		time.Sleep(3 * time.Second)
		c.everyNodeAnswers(t)
		c.redis.Restart()
		time.Sleep(time.Second)
		delivered := l.end() + warm
		charged := c.settleLedger(t, id, delivered)
		t.Logf("redis frozen 4 s then stopped 3 s: %d answered 200 (%d while frozen), others %v, %d without an answer; ledger %d",
			delivered, during, l.statuses(), l.noAnswer.Load(), charged)
		require.Positive(t, during, "no lookup answered while Redis was frozen")
		require.Equal(t, delivered, charged)
		require.Zero(t, l.noAnswer.Load(), "requests left without an answer")
	})

	// A node killed with SIGKILL under load: the other answers on; the
	// ledger never holds more than was delivered, and no fewer than was
	// delivered less what the killed node answered since its last sync.
	t.Run("kill -9 under load", func(t *testing.T) {
		id, key, warm := c.account(t)
		l := startLoad(t, key, c.live, 2, 8)
		time.Sleep(3 * time.Second)
		victim := c.nodes[1]
		killed := time.Now()
		c.mu.Lock()
		victim.kill()
		c.mu.Unlock()
		c.nodes[0].answersAll(t, c.probeKey)
		time.Sleep(2 * time.Second)
		delivered := l.end() + warm
		window := l.okTimes[1].between(killed.Add(-2*time.Second), killed.Add(time.Second))
		c.mu.Lock()
		victim.start(t)
		c.mu.Unlock()
		time.Sleep(3 * time.Second) // the lease TTL
		_, err := c.store.ExpireLeases(ctx(t), time.Now())
		require.NoError(t, err)
		charged := c.settleLedger(t, id, delivered)
		t.Logf("kill -9: %d answered 200 (%d by the killed node in the 2 s before), ledger %d", delivered, window, charged)
		require.LessOrEqual(t, charged, delivered, "more lookups charged than delivered")
		require.LessOrEqual(t, delivered-charged, int64(window), "uncharged lookups beyond the last sync")
		c.everyNodeAnswers(t)
		c.agree(t, key, 2)
	})

	// Descriptors exhausted through each TCP front end of a node under a
	// 256-descriptor limit: the process stays up, the UDP front ends answer
	// throughout, and the attacked one answers again once the attacker
	// lets go.
	t.Run("descriptors", func(t *testing.T) {
		dir := t.TempDir()
		keys := filepath.Join(dir, "keys")
		key := run(t, "key", "new", "--keys", keys, "--rpm", "100000000")
		n := startNode(t, "lonely", 256, "--db", testdb.Build(t, lnpdb.Sample()), "--keys", keys)
		n.answersAll(t, key)
		for _, target := range []struct{ fe, addr string }{
			{feHTTP, strings.TrimPrefix(n.base, "http://")}, {feSIPTCP, n.sip}, {feDNSTCP, n.dns},
		} {
			var conns []net.Conn
			for range 400 {
				cn, err := net.DialTimeout("tcp", target.addr, time.Second)
				if err != nil {
					break
				}
				conns = append(conns, cn)
			}
			time.Sleep(time.Second)
			n.answersAll(t, key, feHTTP, feSIPTCP, feDNSTCP)
			for _, cn := range conns {
				cn.Close()
			}
			n.answersAll(t, key)
			t.Logf("%s: %d idle connections under RLIMIT_NOFILE 256: the process stayed up, every front end answers after", target.fe, len(conns))
		}
	})

	// A hostile origin: lnpdb pull refuses a decompression bomb, a table
	// followed by garbage and a trickle, writes no more than the table's
	// declared size, and leaves nothing behind.
	t.Run("hostile origin", func(t *testing.T) {
		good, err := os.ReadFile(testdb.Build(t, lnpdb.Sample()))
		require.NoError(t, err)
		var bomb bytes.Buffer
		zw, _ := zstd.NewWriter(&bomb, zstd.WithEncoderLevel(zstd.SpeedFastest))
		zeros := make([]byte, 1<<20)
		for range 256 {
			_, _ = zw.Write(zeros)
		}
		require.NoError(t, zw.Close())
		origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/bomb.lnpdb.zst":
				_, _ = w.Write(bomb.Bytes())
			case "/trailing.lnpdb":
				_, _ = w.Write(good)
				for range 64 {
					if _, err := w.Write(zeros); err != nil {
						return
					}
				}
			case "/trickle.lnpdb":
				for i := range good {
					if _, err := w.Write(good[i : i+1]); err != nil {
						return
					}
					w.(http.Flusher).Flush()
					select {
					case <-r.Context().Done():
						return
					case <-time.After(2 * time.Second):
					}
				}
			}
		}))
		defer origin.Close()
		for _, c := range []struct {
			path  string
			limit time.Duration
		}{{"/bomb.lnpdb.zst", 30 * time.Second}, {"/trailing.lnpdb", 30 * time.Second}, {"/trickle.lnpdb", 90 * time.Second}} {
			dir := t.TempDir()
			out := filepath.Join(dir, "us.lnpdb")
			cmd := exec.Command(lnpdbBinary(t), "pull", "--db", out, origin.URL+c.path)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			peak := int64(0)
			done := make(chan error, 1)
			start := time.Now()
			require.NoError(t, cmd.Start())
			go func() { done <- cmd.Wait() }()
			var err error
		watch:
			for {
				select {
				case err = <-done:
					break watch
				case <-time.After(50 * time.Millisecond):
					peak = max(peak, dirBytes(dir))
					if time.Since(start) > c.limit {
						_ = cmd.Process.Kill()
						err = <-done
						t.Errorf("%s: pull still running after %v", c.path, c.limit)
						break watch
					}
				}
			}
			t.Logf("%s: pull exited after %v (%v), at most %d bytes on disk: %s",
				c.path, time.Since(start).Round(time.Millisecond), err, peak, strings.TrimSpace(stderr.String()))
			require.Error(t, err, "%s was installed", c.path)
			require.LessOrEqual(t, peak, int64(len(good))+4096, "%s: more written than a table's declared size", c.path)
			entries, _ := os.ReadDir(dir)
			require.Empty(t, entries, "%s left files behind", c.path)
		}
		c.everyNodeAnswers(t)
	})
}

// agree posts a feed that ports ten sample numbers (round names the run)
// to one node, waits until both applied it, and checks that both nodes
// answer every one of them alike and as the feed says.
func (c *cluster) agree(t *testing.T, key string, round int) {
	t.Helper()
	var feed strings.Builder
	feed.WriteString("action,tn,lrn,spid,activated_at\n")
	var nums []string
	for k := range 10 {
		tn := 2014810100 + 10*round + k
		nums = append(nums, fmt.Sprintf("1%d", tn))
		fmt.Fprintf(&feed, "U,%d,7327370999,0987,%s\n", tn, time.Unix(1700000000+int64(round), 0).UTC().Format(time.RFC3339))
	}
	nodes := c.live()
	var code int
	var body []byte
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		if code, body = nodes[0].postFeed(c.adminKey, feed.String(), fmt.Sprintf("?wait=%d", len(nodes))); code == http.StatusOK {
			break
		}
	}
	require.Equal(t, http.StatusOK, code, "%s", body)
	for _, num := range nums {
		var answers []string
		for _, n := range nodes {
			st, b := n.lookup(key, num)
			require.Equal(t, http.StatusOK, st, "%s: %s", n.name, b)
			var r map[string]any
			require.NoError(t, json.Unmarshal(b, &r))
			require.Equal(t, "17327370999", r["lrn"], "%s: %s", n.name, b)
			delete(r, "request_id")
			s, _ := json.Marshal(r)
			answers = append(answers, string(s))
		}
		for _, a := range answers[1:] {
			require.Equal(t, answers[0], a, "the nodes answer %s differently", num)
		}
	}
}
