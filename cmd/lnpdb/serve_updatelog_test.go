package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testpg"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// logNumbers is how many numbers of the sample's code 201-481 the update
// log tests port back and forth.
const logNumbers = 200

// logCluster is three lnpdb serve nodes, each with its own table, sharing
// one update log in a PostgreSQL server of the test's own.
type logCluster struct {
	pg               *testpg.Server
	dsn              string
	tables           []string
	keys, admins     string
	apiKey, adminKey string
	nodes            []*serveProcess
	client           *http.Client
	t                *testing.T // the whole test's: nodes outlive a subtest
}

func newLogCluster(t *testing.T, n int) *logCluster {
	t.Helper()
	c := &logCluster{pg: testpg.NewServer(t), apiKey: auth.NewKey(), adminKey: auth.NewKey(),
		client: &http.Client{Timeout: 15 * time.Second}, t: t}
	c.dsn = c.pg.DSN()
	dir := t.TempDir()
	c.keys, c.admins = filepath.Join(dir, "keys"), filepath.Join(dir, "admin-keys")
	ak, dk := auth.HashKey(c.apiKey), auth.HashKey(c.adminKey)
	ak.Limit = 1 << 30
	require.NoError(t, os.WriteFile(c.keys, []byte(ak.Line()+"\n"), 0o600))
	require.NoError(t, os.WriteFile(c.admins, []byte(dk.Line()+"\n"), 0o600))
	for i := range n {
		c.tables = append(c.tables, testdb.Build(t, lnpdb.Sample()))
		c.nodes = append(c.nodes, nil)
		c.start(i)
	}
	return c
}

// start starts node i on its table.
func (c *logCluster) start(i int) {
	c.nodes[i] = startServeProcess(c.t, "--db", c.tables[i], "--keys", c.keys, "--admin-keys", c.admins,
		"--updates-log", c.dsn, "--node", fmt.Sprintf("node%d", i+1))
}

// post posts a one-row feed to node i; it returns the status and body.
func (c *logCluster) post(i int, key, feedCSV, query string) (int, []byte, error) {
	req, _ := http.NewRequest("POST", c.nodes[i].base+"/admin/v1/updates"+query, strings.NewReader(feedCSV))
	req.Header.Set("Content-Type", "text/csv")
	req.Header.Set("Authorization", "Bearer "+c.adminKey)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	res, err := c.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// answers is node i's bulk answer for every log number, as JSON per number.
func (c *logCluster) answers(t *testing.T, i int) []string {
	t.Helper()
	nums := make([]string, logNumbers)
	for k := range nums {
		nums[k] = fmt.Sprintf("1%d", 2014810000+k)
	}
	body, _ := json.Marshal(map[string]any{"phone_numbers": nums, "include_enhanced_lrn": true})
	req, _ := http.NewRequest("POST", c.nodes[i].base+"/api/v1/lrn/bulk", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.apiKey)
	res, err := c.client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", b)
	var out struct {
		Results []json.RawMessage `json:"results"`
	}
	require.NoError(t, json.Unmarshal(b, &out), "%s", b)
	require.Len(t, out.Results, logNumbers)
	s := make([]string, logNumbers)
	for k, r := range out.Results {
		s[k] = string(r)
	}
	return s
}

// lookup is node i's answer for one number: status and lrn_activated_at.
func (c *logCluster) activatedAt(i int, tn uint64) (int, string) {
	req, _ := http.NewRequest("POST", c.nodes[i].base+"/api/v1/lrn", strings.NewReader(fmt.Sprintf(`{"phone_number":"1%d"}`, tn)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.apiKey)
	res, err := c.client.Do(req)
	if err != nil {
		return 0, ""
	}
	defer res.Body.Close()
	var body struct {
		ActivatedAt string `json:"lrn_activated_at"`
	}
	_ = json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body.ActivatedAt
}

type logStatus struct {
	AppliedSeq int64  `json:"applied_seq"`
	HeadSeq    int64  `json:"head_seq"`
	Postgres   string `json:"postgres"`
	Listening  bool   `json:"listening"`
}

func (c *logCluster) status(i int) (logStatus, error) {
	res, err := c.client.Get(c.nodes[i].base + "/api/v1/status")
	if err != nil {
		return logStatus{}, err
	}
	defer res.Body.Close()
	var body struct {
		UpdateLog *logStatus `json:"update_log"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || body.UpdateLog == nil {
		return logStatus{}, fmt.Errorf("status without update_log: %v", err)
	}
	return *body.UpdateLog, nil
}

// settle waits until every node has applied the whole log.
func (c *logCluster) settle(t *testing.T) int64 {
	t.Helper()
	var head int64
	require.NoError(t, c.queryRow(`SELECT COALESCE(max(seq), 0) FROM update_log`, &head))
	require.Eventually(t, func() bool {
		for i := range c.nodes {
			if st, err := c.status(i); err != nil || st.AppliedSeq != head {
				return false
			}
		}
		return true
	}, 60*time.Second, 20*time.Millisecond, "every node applies the log up to %d", head)
	return head
}

func (c *logCluster) queryRow(sql string, dst ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.QueryRow(ctx, sql).Scan(dst...)
}

// loggedKeys is every idempotency key in the log.
func (c *logCluster) loggedKeys(t *testing.T) map[string]bool {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, c.dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT idempotency_key FROM update_log WHERE idempotency_key IS NOT NULL`)
	require.NoError(t, err)
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	m := map[string]bool{}
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// feedRow ports number k of the log numbers, activated at a time that
// names the post.
func feedRow(k int, post int) string {
	spids := []string{"0987", "083L", "6731"}
	return fmt.Sprintf("action,tn,lrn,spid,activated_at\nU,%d,7327370999,%s,%s\n", 2014810000+k, spids[post%3],
		time.Unix(1700000000+int64(post), 0).UTC().Format(time.RFC3339))
}

// poster posts one-row feeds, each with its own Idempotency-Key, to the
// given nodes in turn until stop, and counts what was answered.
type poster struct {
	mu         sync.Mutex
	acked      map[string]bool // keys answered 200
	refused    map[string]bool // keys answered with an error
	unanswered int             // a node killed mid-request: neither
	statuses   map[int]int
	done       chan struct{}
}

func (c *logCluster) postUntil(stop <-chan struct{}, first int, nodes func() []int, pause time.Duration) *poster {
	p := &poster{acked: map[string]bool{}, refused: map[string]bool{}, statuses: map[int]int{}, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for post := first; ; post++ {
			select {
			case <-stop:
				return
			default:
			}
			ns := nodes()
			key := fmt.Sprintf("post-%d", post)
			status, _, err := c.post(ns[post%len(ns)], key, feedRow(post%logNumbers, post), "")
			p.mu.Lock()
			switch {
			case err != nil:
				p.unanswered++
			case status == http.StatusOK:
				p.acked[key] = true
			default:
				p.refused[key] = true
			}
			p.statuses[status]++
			p.mu.Unlock()
			time.Sleep(pause)
		}
	}()
	return p
}

// await waits until what p has seen so far meets cond: the phases of a
// test move on progress made, not on time passed, so that a slow machine
// slows them and changes nothing they assert.
func (p *poster) await(t *testing.T, what string, cond func(p *poster) bool) {
	t.Helper()
	require.Eventually(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return cond(p)
	}, 2*time.Minute, 5*time.Millisecond, what)
}

// ackedPast returns the condition that more than n posts are acknowledged.
func ackedPast(n int) func(*poster) bool { return func(p *poster) bool { return len(p.acked) > n } }

// ackedSoFar returns how many posts are acknowledged so far.
func (p *poster) ackedSoFar() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.acked)
}

// check counts acknowledged posts missing from the log and refused posts
// in it.
func (p *poster) check(logged map[string]bool) (lost, visible int) {
	for k := range p.acked {
		if !logged[k] {
			lost++
		}
	}
	for k := range p.refused {
		if logged[k] {
			visible++
		}
	}
	return lost, visible
}

// TestServeUpdateLogNodes: three lnpdb serve processes share one update
// log. An update posted to node 1 is answered by nodes 2 and 3 (within 1 s on an idle machine);
// node 2 killed with SIGKILL while updates flow and restarted catches up
// and answers every number as the others do; with PostgreSQL stopped,
// lookups go on, updates are refused with 503, and once it is back updates
// flow again; a node restarted while it is down starts and catches up once
// it is back. Nothing acknowledged is lost, nothing refused is applied.
func TestServeUpdateLogNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts lnpdb serve processes and PostgreSQL")
	}
	c := newLogCluster(t, 3)

	t.Run("propagation to every node", func(t *testing.T) {
		var worst time.Duration
		for post := range 10 {
			row := feedRow(post, 100000+post)
			start := time.Now()
			status, body, err := c.post(0, "", row, "")
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, status, "%s", body)
			want := time.Unix(1700000000+int64(100000+post), 0).UTC().Format("2006-01-02T15:04:05") + "+00:00"
			_, got := c.activatedAt(0, 2014810000+uint64(post))
			require.Equal(t, want, got, "read-your-writes on the posting node")
			for _, n := range []int{1, 2} {
				for {
					if _, got := c.activatedAt(n, 2014810000+uint64(post)); got == want {
						break
					}
					// Within 1 s on an idle machine (the log line below says how
					// long); a loaded one may take longer, and only never is wrong.
					require.Less(t, time.Since(start), time.Minute, "node %d answers the update", n+1)
					time.Sleep(2 * time.Millisecond)
				}
			}
			worst = max(worst, time.Since(start))
		}
		t.Logf("slowest update to reach nodes 2 and 3: %v", worst)
	})

	t.Run("idempotency key, wait, bad feed, metrics", func(t *testing.T) {
		row := feedRow(20, 100100)
		status, first, err := c.post(0, "k-once", row, "")
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, status, "%s", first)
		var a, b struct {
			Seq          int64 `json:"seq"`
			NodesApplied int   `json:"nodes_applied"`
		}
		require.NoError(t, json.Unmarshal(first, &a))
		require.Positive(t, a.Seq)
		status, again, err := c.post(1, "k-once", row, "")
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, status, "%s", again)
		require.NoError(t, json.Unmarshal(again, &b))
		assert.Equal(t, a.Seq, b.Seq, "a retry to another node gets the first answer")
		status, body, err := c.post(2, "k-once", feedRow(21, 100101), "")
		require.NoError(t, err)
		assert.Equal(t, http.StatusUnprocessableEntity, status, "%s", body)
		assert.Contains(t, string(body), "IDEMPOTENCY_KEY_REUSED")

		status, body, err = c.post(1, "", feedRow(22, 100102), "?wait=3")
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, status, "%s", body)
		require.NoError(t, json.Unmarshal(body, &b))
		assert.Equal(t, 3, b.NodesApplied)
		for n := range c.nodes {
			_, got := c.activatedAt(n, 2014810022)
			assert.Equal(t, time.Unix(1700000000+100102, 0).UTC().Format("2006-01-02T15:04:05")+"+00:00", got, "node %d", n+1)
		}

		var head int64
		require.NoError(t, c.queryRow(`SELECT max(seq) FROM update_log`, &head))
		status, body, err = c.post(0, "", "action,tn,lrn,spid,activated_at\nU,2014810023,7327370999,ZZZZ,\n", "")
		require.NoError(t, err)
		assert.Equal(t, http.StatusBadRequest, status, "%s", body)
		var after int64
		require.NoError(t, c.queryRow(`SELECT max(seq) FROM update_log`, &after))
		assert.Equal(t, head, after, "a bad feed is refused before anything is logged")

		res, err := c.client.Get(c.nodes[2].base + "/metrics")
		require.NoError(t, err)
		m, _ := io.ReadAll(res.Body)
		res.Body.Close()
		assert.Contains(t, string(m), fmt.Sprintf("lnpdb_update_log_applied_seq %d", head))
		assert.Contains(t, string(m), "lnpdb_update_log_postgres_up 1")
	})

	t.Run("kill -9 of node 2 while updates flow", func(t *testing.T) {
		stop := make(chan struct{})
		var mu sync.Mutex
		targets := []int{0, 1, 2}
		p := c.postUntil(stop, 0, func() []int { mu.Lock(); defer mu.Unlock(); return targets }, time.Millisecond)
		p.await(t, "20 updates acknowledged by the three nodes", ackedPast(20))
		mu.Lock()
		targets = []int{0, 2}
		mu.Unlock()
		require.NoError(t, c.nodes[1].cmd.Process.Signal(syscall.SIGKILL))
		<-c.nodes[1].exit
		// The widest crash window: its journal has batches its recorded
		// position does not say, which it then applies again.
		statePath := c.tables[1] + ".updatelog"
		b, err := os.ReadFile(statePath)
		require.NoError(t, err)
		var st struct {
			Log string `json:"log"`
			Seq int64  `json:"seq"`
		}
		require.NoError(t, json.Unmarshal(b, &st))
		require.Positive(t, st.Seq)
		recorded := st.Seq
		st.Seq /= 2
		b, _ = json.Marshal(st)
		require.NoError(t, os.WriteFile(statePath, b, 0o644))
		p.await(t, "20 more updates acknowledged by nodes 1 and 3", ackedPast(p.ackedSoFar()+20))
		c.start(1)
		mu.Lock()
		targets = []int{0, 1, 2}
		mu.Unlock()
		p.await(t, "20 more updates acknowledged by the three nodes, node 2 restarted", ackedPast(p.ackedSoFar()+20))
		close(stop)
		<-p.done
		head := c.settle(t)

		lost, visible := p.check(c.loggedKeys(t))
		t.Logf("posted %d: %d acknowledged, %d refused, %d unanswered (%v); log head %d; node 2 killed at %d, restarted from %d",
			len(p.acked)+len(p.refused)+p.unanswered, len(p.acked), len(p.refused), p.unanswered, p.statuses, head, recorded, recorded/2)
		assert.Zero(t, lost, "acknowledged and lost")
		assert.Zero(t, visible, "refused but applied")
		require.Greater(t, len(p.acked), 60)
		want := c.answers(t, 0)
		for n := 1; n < 3; n++ {
			assert.Equal(t, want, c.answers(t, n), "node %d answers every number as node 1", n+1)
		}
	})

	t.Run("PostgreSQL stopped", func(t *testing.T) {
		before := c.answers(t, 0)
		c.pg.Stop(t)
		for i := range c.nodes {
			status, body, err := c.post(i, "down-"+fmt.Sprint(i), feedRow(i, 200000+i), "")
			require.NoError(t, err)
			require.Equal(t, http.StatusServiceUnavailable, status, "%s", body)
			var e struct{ Code, Error, Details string }
			require.NoError(t, json.Unmarshal(body, &e))
			assert.Equal(t, "STORAGE_UNAVAILABLE", e.Code)
			assert.Equal(t, before, c.answers(t, i), "node %d answers lookups from its table", i+1)
		}
		require.Eventually(t, func() bool {
			for i := range c.nodes {
				if st, err := c.status(i); err != nil || st.Postgres != "unavailable" {
					return false
				}
			}
			return true
		}, 10*time.Second, 20*time.Millisecond, "status shows PostgreSQL unavailable")

		// A node restarted meanwhile starts, and answers from its table.
		c.nodes[2].stop(t)
		c.start(2)
		assert.Equal(t, before, c.answers(t, 2), "node 3, restarted while PostgreSQL is down, answers lookups")
		st, err := c.status(2)
		require.NoError(t, err)
		assert.Equal(t, "unavailable", st.Postgres)

		stop := make(chan struct{})
		p := c.postUntil(stop, 300000, func() []int { return []int{0, 1, 2} }, 5*time.Millisecond)
		p.await(t, "an update refused while PostgreSQL is down", func(p *poster) bool { return p.statuses[http.StatusServiceUnavailable] > 0 })
		c.pg.Start(t)
		require.Eventually(t, func() bool {
			p.mu.Lock()
			defer p.mu.Unlock()
			return len(p.acked) >= 30
		}, 30*time.Second, 20*time.Millisecond, "updates flow again once PostgreSQL is back")
		close(stop)
		<-p.done
		c.settle(t)
		logged := c.loggedKeys(t)
		lost, visible := p.check(logged)
		for i := range c.nodes {
			if logged["down-"+fmt.Sprint(i)] {
				visible++
			}
		}
		t.Logf("posted %d: %d acknowledged, %d refused, %d unanswered (%v)",
			len(p.acked)+len(p.refused)+p.unanswered, len(p.acked), len(p.refused), p.unanswered, p.statuses)
		assert.Zero(t, lost, "acknowledged and lost")
		assert.Zero(t, visible, "refused but applied")
		assert.Positive(t, p.statuses[http.StatusServiceUnavailable], "posts while PostgreSQL was down were refused")
		want := c.answers(t, 0)
		for n := 1; n < 3; n++ {
			assert.Equal(t, want, c.answers(t, n), "node %d answers every number as node 1", n+1)
		}
		require.Eventually(t, func() bool {
			for i := range c.nodes {
				if st, err := c.status(i); err != nil || st.Postgres != "ok" || !st.Listening {
					return false
				}
			}
			return true
		}, 15*time.Second, 20*time.Millisecond, "every node reconnects")
	})
}

func TestServeUpdateLogFlags(t *testing.T) {
	table := testdb.Build(t, lnpdb.Sample())
	assertRefused(t, []string{"serve"}, []refusal{
		{[]string{"--node", "n1"}, 2, "--node names this node in --updates-log"},
		{[]string{"--updates-log", "mysql://db/x"}, 2, "--updates-log takes postgres://"},
		{[]string{"--db", table, "--dev-key", "--addr", "127.0.0.1:0", "--updates-log", "postgres://x@127.0.0.1:1/db?sslmode=bogus"}, 1, "update log DSN"},
	})
}
