package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/webhook"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/diptest"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testpg"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// jobNumbers returns n numbers for a job, drawn in a scrambled order from
// a few distinct ones: numbers in the sample table, a vacant one and
// invalid ones, so that the results hold success and error lines and
// their order shows.
func jobNumbers(t *testing.T, n int) (numbers, distinct []string) {
	t.Helper()
	for i := range 40 {
		distinct = append(distinct, fmt.Sprintf("120255501%02d", i))
	}
	distinct = append(distinct, diptest.Vacant(t, testdb.Sample(t)), "1", "555")
	numbers = make([]string, n)
	x := uint32(2463534242)
	for i := range numbers {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		numbers[i] = distinct[int(x%uint32(len(distinct)))]
	}
	return numbers, distinct
}

// singleBodies asks base's single-number LRN endpoint, with key, for each
// of numbers once: the body each answers.
func singleBodies(t *testing.T, base, key string, numbers []string) map[string]string {
	t.Helper()
	bodies := make(map[string]string, len(numbers))
	for _, n := range numbers {
		_, b := call(t, "POST", base+"/api/v1/lrn", key, `{"phone_number":"`+n+`"}`)
		bodies[n] = strings.TrimSuffix(b, "\n") // a results line is the body; NDJSON ends it
	}
	return bodies
}

// isAnswer reports whether a results line is a success body (charged),
// not the {error, code, details} of an invalid or unknown number.
func isAnswer(t *testing.T, line string) bool {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(line), &m), "results line %q", line)
	_, isErr := m["code"]
	return !isErr
}

// hookReceiver is a webhook endpoint: it refuses the first delivery with
// 500 (so that the deliverer retries), unless acceptFirst, and keeps
// every request.
type hookReceiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []hookRequest
	ok  chan hookRequest
}

type hookRequest struct {
	header http.Header
	body   []byte
	at     time.Time
}

func newHookReceiver(t *testing.T, acceptFirst bool) *hookReceiver {
	r := &hookReceiver{ok: make(chan hookRequest, 1)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		hr := hookRequest{header: req.Header.Clone(), body: b, at: time.Now()}
		r.mu.Lock()
		r.got = append(r.got, hr)
		first := len(r.got) == 1 && !acceptFirst
		r.mu.Unlock()
		if first {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		select {
		case r.ok <- hr:
		default:
		}
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// await returns the delivery answered 200.
func (r *hookReceiver) await(t *testing.T, within time.Duration) hookRequest {
	t.Helper()
	select {
	case hr := <-r.ok:
		return hr
	case <-time.After(within):
		t.Fatal("no webhook delivered")
		return hookRequest{}
	}
}

// check asserts every delivery r received carries the same webhook-id, a
// valid signature under secret, and job's final status.
func (r *hookReceiver) check(t *testing.T, secret string, job billing.JobView) {
	t.Helper()
	key, err := webhook.ParseSecret(secret)
	require.NoError(t, err)
	r.mu.Lock()
	defer r.mu.Unlock()
	require.GreaterOrEqual(t, len(r.got), 2, "the first delivery was refused, so it was retried")
	for i, hr := range r.got {
		require.NoError(t, webhook.Verify(key, hr.header, hr.body, hr.at), "delivery %d", i+1)
		assert.Equal(t, r.got[0].header.Get(webhook.HeaderID), hr.header.Get(webhook.HeaderID), "webhook-id is stable across retries")
		var ev struct {
			Type string          `json:"type"`
			Data billing.JobView `json:"data"`
		}
		require.NoError(t, json.Unmarshal(hr.body, &ev), "%s", hr.body)
		assert.Equal(t, "job.completed", ev.Type)
		assert.Equal(t, job, ev.Data)
	}
}

// jobClient speaks to the jobs API of a server with a key.
type jobClient struct {
	base, key string
}

func (c jobClient) submit(t *testing.T, numbers []string, hook string) string {
	t.Helper()
	body, err := json.Marshal(map[string]any{"phone_numbers": numbers, "webhook_url": hook})
	require.NoError(t, err)
	code, b := call(t, "POST", c.base+"/api/v1/jobs", c.key, string(body))
	require.Equal(t, http.StatusAccepted, code, b)
	var j billing.JobView
	require.NoError(t, json.Unmarshal([]byte(b), &j))
	require.Equal(t, int64(len(numbers)), j.Total)
	return j.ID
}

func (c jobClient) status(t *testing.T, id string) billing.JobView {
	t.Helper()
	code, b := call(t, "GET", c.base+"/api/v1/jobs/"+id, c.key, "")
	require.Equal(t, http.StatusOK, code, b)
	var j billing.JobView
	require.NoError(t, json.Unmarshal([]byte(b), &j))
	return j
}

// until polls the job's status until done says so; the interval only
// sets how soon the test notices.
func (c jobClient) until(t *testing.T, id string, within time.Duration, done func(billing.JobView) bool) billing.JobView {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		j := c.status(t, id)
		if done(j) {
			return j
		}
		require.True(t, time.Now().Before(deadline), "job %s is still %+v", id, j)
		time.Sleep(10 * time.Millisecond)
	}
}

func (c jobClient) results(t *testing.T, id string) []string {
	t.Helper()
	req, err := http.NewRequest("GET", c.base+"/api/v1/jobs/"+id+"/results", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Accept", "application/x-ndjson")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var lines []string
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	require.NoError(t, sc.Err())
	return lines
}

func (c jobClient) secret(t *testing.T) string {
	t.Helper()
	code, b := call(t, "POST", c.base+"/api/v1/webhook-secret", c.key, "")
	require.Equal(t, http.StatusCreated, code, b)
	var s struct {
		Secret string `json:"secret"`
	}
	require.NoError(t, json.Unmarshal([]byte(b), &s))
	return s.Secret
}

func (c jobClient) usage(t *testing.T) billing.UsageReport {
	t.Helper()
	code, b := call(t, "GET", c.base+"/api/v1/usage", c.key, "")
	require.Equal(t, http.StatusOK, code, b)
	var u billing.UsageReport
	require.NoError(t, json.Unmarshal([]byte(b), &u))
	return u
}

// lrnUsage is the account's LRN lookups, free lookups and charge this
// month.
func lrnUsage(t *testing.T, u billing.UsageReport) billing.KindUsage {
	t.Helper()
	for _, k := range u.CurrentMonth.Kinds {
		if k.Kind == billing.KindLRN {
			return k
		}
	}
	return billing.KindUsage{Kind: billing.KindLRN}
}

// checkResults asserts lines are numbers' answers in input order, each the
// single-number endpoint's body, and returns how many are charged
// answers.
func checkResults(t *testing.T, lines, numbers []string, single map[string]string) int64 {
	t.Helper()
	require.Len(t, lines, len(numbers))
	answers := map[string]bool{}
	for n, b := range single {
		answers[n] = isAnswer(t, b)
	}
	var paid int64
	for i, l := range lines {
		if l != single[numbers[i]] {
			require.Equal(t, single[numbers[i]], l, "results line %d (number %s)", i+1, numbers[i])
		}
		if answers[numbers[i]] {
			paid++
		}
	}
	return paid
}

// wantUsage asserts the account's LRN usage is paid lookups, the free
// tier first and the rest at the LRN price, charged once each.
func wantUsage(t *testing.T, u billing.KindUsage, paid int64) {
	t.Helper()
	free := min(paid, int64(billing.FreeTier))
	assert.Equal(t, paid, u.Lookups, "charged lookups = answered numbers")
	assert.Equal(t, free, u.Free)
	assert.Equal(t, billing.Micros(paid-free)*billing.DefaultPrices[billing.KindLRN], u.Amount)
}

// jobsTestSize is the numbers of the whole-server jobs tests' job: a
// million with LNPDB_TEST_JOBS_MILLION=1.
func jobsTestSize() int {
	if os.Getenv("LNPDB_TEST_JOBS_MILLION") != "" {
		return 1_000_000
	}
	return 200_000
}

// TestServeJobsTwoNodesOneKilled: two lnpdb serve processes on one
// PostgreSQL work one job; halfway, with both frozen while each holds a
// claimed chunk, one is killed with SIGKILL. The job succeeds; its results
// are every number's single-number answer in input order; the account is
// charged for exactly the numbers answered; the signed webhook arrives,
// with the same webhook-id on its retry.
func TestServeJobsTwoNodesOneKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts lnpdb serve processes")
	}
	if !canPause {
		t.Skip("pauses the nodes with SIGSTOP, which this system does not have")
	}
	dsn := testpg.New(t)
	ctx := context.Background()
	n := jobsTestSize()
	numbers, distinct := jobNumbers(t, n)

	id := strings.TrimSpace(mustRun(t, "account", "create", "--accounts", dsn, "--name", "Lists"))
	key := strings.TrimSpace(mustRun(t, "key", "new", "--accounts", dsn, "--account", id, "--rpm", "100000000"))
	const credit = billing.Micros(2_000_000_000) // $2,000: more than a million lookups cost
	mustRun(t, "wallet", "credit", "--accounts", dsn, "--account", id, "--amount", "2000", "--ref", "INV-1")
	// The single-number answers the results are compared with come
	// from another account, so that the job's account is charged for
	// the job alone.
	refID := strings.TrimSpace(mustRun(t, "account", "create", "--accounts", dsn, "--name", "Reference"))
	refKey := strings.TrimSpace(mustRun(t, "key", "new", "--accounts", dsn, "--account", refID))
	mustRun(t, "wallet", "credit", "--accounts", dsn, "--account", refID, "--amount", "1", "--ref", "INV-2")

	const ttl = 2 * time.Second // the chunk claim and credit lease of a killed node lapse this soon
	args := func() []string {
		return []string{"--db", testdb.Build(t, lnpdb.Sample()), "--accounts", dsn, "--lease-ttl", ttl.String(),
			"--accounts-timeout", "5s", "--webhooks-allow-private"}
	}
	p1, p2 := startServeProcess(t, args()...), startServeProcess(t, args()...)
	// The survivor is spoken to throughout.
	c := jobClient{base: p2.base, key: key}
	single := singleBodies(t, p2.base, refKey, distinct)
	secret := c.secret(t)
	hook := newHookReceiver(t, false)

	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)

	start := time.Now()
	jobID := c.submit(t, numbers, hook.srv.URL+"/hook")
	c.until(t, jobID, 2*time.Minute, func(j billing.JobView) bool { return j.Done >= int64(n/2) })

	// Freeze both nodes; when two unfinished chunks are claimed and
	// unexpired, each node holds one (a worker claims one at a time), so
	// p1 is killed holding a chunk it has not committed. Otherwise one
	// was between chunks: let both run a moment and look again.
	var held []int
	for attempt := 0; ; attempt++ {
		pause(t, p1.cmd.Process)
		pause(t, p2.cmd.Process)
		rows, err := conn.Query(ctx, `SELECT seq FROM job_chunks WHERE job_id = $1 AND done < size AND claimed_until > $2 ORDER BY seq`, jobID, time.Now())
		require.NoError(t, err)
		held, err = pgx.CollectRows(rows, pgx.RowTo[int])
		require.NoError(t, err)
		if len(held) == 2 {
			require.NoError(t, p1.cmd.Process.Kill()) // SIGKILL where there is one
			resume(t, p2.cmd.Process)
			break
		}
		resume(t, p1.cmd.Process)
		resume(t, p2.cmd.Process)
		require.Less(t, attempt, 10_000, "never saw both nodes holding a chunk")
		time.Sleep(2 * time.Millisecond)
	}
	atKill := c.status(t, jobID)
	t.Logf("killed p1 at %d/%d done, the nodes holding chunks %v", atKill.Done, n, held)

	hook.await(t, 2*time.Minute)
	elapsed := time.Since(start)
	job := c.until(t, jobID, time.Minute, func(j billing.JobView) bool { return j.Status != billing.JobRunning })
	require.Equal(t, billing.JobSucceeded, job.Status)
	assert.Equal(t, int64(n), job.Done)
	t.Logf("%d numbers, submit → webhook %v (a retry included)", n, elapsed)

	paid := checkResults(t, c.results(t, jobID), numbers, single)
	u := c.usage(t)
	k := lrnUsage(t, u)
	wantUsage(t, k, paid)
	assert.Equal(t, k.Amount.String(), job.Charged, "the job's charged is the ledger's")
	// The killed node leased none of this account's credit (it answered
	// no single lookup of it): balance + charged is the credit.
	assert.Equal(t, credit, u.Balance+k.Amount, "credit conserved")
	hook.check(t, secret, job)
	p2.stop(t)
}

// TestServeJobsWalletRunsOut: on one server with a bbolt accounts file, a
// job whose wallet runs out stops insufficient_balance with every answer
// stored charged and nothing more; the wallet is credited with lnpdb
// wallet credit (the server stopped: bbolt is one process's), and after a
// restart POST /api/v1/jobs/{id}/resume finishes it, charged for every
// number answered once.
func TestServeJobsWalletRunsOut(t *testing.T) {
	if testing.Short() {
		t.Skip("starts lnpdb serve processes")
	}
	const n = 30_000
	numbers, distinct := jobNumbers(t, n)
	table := testdb.Build(t, lnpdb.Sample())
	dsn := "bolt://" + filepath.Join(t.TempDir(), "accounts.db")
	id := strings.TrimSpace(mustRun(t, "account", "create", "--accounts", dsn, "--name", "Lists"))
	key := strings.TrimSpace(mustRun(t, "key", "new", "--accounts", dsn, "--account", id, "--rpm", "100000000"))
	mustRun(t, "wallet", "credit", "--accounts", dsn, "--account", id, "--amount", "5", "--ref", "INV-1") // 5,000 lookups after the free 10
	refID := strings.TrimSpace(mustRun(t, "account", "create", "--accounts", dsn, "--name", "Reference"))
	refKey := strings.TrimSpace(mustRun(t, "key", "new", "--accounts", dsn, "--account", refID))
	mustRun(t, "wallet", "credit", "--accounts", dsn, "--account", refID, "--amount", "1", "--ref", "INV-2")

	args := []string{"--db", table, "--accounts", dsn, "--webhooks-allow-private"}
	p := startServeProcess(t, args...)
	c := jobClient{base: p.base, key: key}
	single := singleBodies(t, p.base, refKey, distinct)
	jobID := c.submit(t, numbers, "")
	job := c.until(t, jobID, time.Minute, func(j billing.JobView) bool { return j.Status != billing.JobQueued && j.Status != billing.JobRunning })
	require.Equal(t, billing.JobInsufficientBalance, job.Status)
	require.Less(t, job.Done, int64(n))

	lines := c.results(t, jobID)
	require.Len(t, lines, int(job.Done), "the answers so far are kept")
	paid := checkResults(t, lines, numbers[:job.Done], single)
	k := lrnUsage(t, c.usage(t))
	wantUsage(t, k, paid)
	assert.Equal(t, billing.Micros(5_000_000), k.Amount, "the wallet was spent to the last lookup")
	assert.Equal(t, k.Amount.String(), job.Charged)
	p.stop(t)

	mustRun(t, "wallet", "credit", "--accounts", dsn, "--account", id, "--amount", "100", "--ref", "INV-3")
	p = startServeProcess(t, args...)
	c.base = p.base
	code, b := call(t, "POST", c.base+"/api/v1/jobs/"+jobID+"/resume", key, "")
	require.Equal(t, http.StatusOK, code, b)
	job = c.until(t, jobID, time.Minute, func(j billing.JobView) bool { return j.Status != billing.JobQueued && j.Status != billing.JobRunning })
	require.Equal(t, billing.JobSucceeded, job.Status)
	paid = checkResults(t, c.results(t, jobID), numbers, single)
	k = lrnUsage(t, c.usage(t))
	wantUsage(t, k, paid)
	assert.Equal(t, k.Amount.String(), job.Charged)
	p.stop(t)
}

// TestServeJobsMeasure (LNPDB_TEST_JOBS_MEASURE=1) measures, on one
// server with a bbolt accounts file: a 1,000,000-number LRN job from
// submit to its webhook, and the single-number REST endpoint's latency
// from 2 clients in phases without and with a job running, interleaved.
// It reports; it asserts only that the jobs succeed.
func TestServeJobsMeasure(t *testing.T) {
	if os.Getenv("LNPDB_TEST_JOBS_MEASURE") == "" {
		t.Skip("set LNPDB_TEST_JOBS_MEASURE=1 to measure lookup jobs")
	}
	const n, rounds, idle = 1_000_000, 3, 3 * time.Second
	numbers, _ := jobNumbers(t, n)
	dsn := "bolt://" + filepath.Join(t.TempDir(), "accounts.db")
	id := strings.TrimSpace(mustRun(t, "account", "create", "--accounts", dsn, "--name", "Lists"))
	key := strings.TrimSpace(mustRun(t, "key", "new", "--accounts", dsn, "--account", id, "--rpm", "100000000"))
	mustRun(t, "wallet", "credit", "--accounts", dsn, "--account", id, "--amount", "10000", "--ref", "INV-1")
	restID := strings.TrimSpace(mustRun(t, "account", "create", "--accounts", dsn, "--name", "Interactive"))
	restKey := strings.TrimSpace(mustRun(t, "key", "new", "--accounts", dsn, "--account", restID, "--rpm", "100000000"))
	mustRun(t, "wallet", "credit", "--accounts", dsn, "--account", restID, "--amount", "10000", "--ref", "INV-2")
	p := startServeProcess(t, "--db", testdb.Build(t, lnpdb.Sample()), "--accounts", dsn, "--webhooks-allow-private")
	c := jobClient{base: p.base, key: key}
	c.secret(t)
	body, err := json.Marshal(map[string]any{"phone_numbers": numbers})
	require.NoError(t, err)

	// Two clients post single lookups throughout; each latency goes to
	// the phase it started in.
	var mu sync.Mutex
	phase := "idle"
	lat := map[string][]time.Duration{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2}}
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				ph := phase
				mu.Unlock()
				req, _ := http.NewRequest("POST", p.base+"/api/v1/lrn", strings.NewReader(`{"phone_number":"12025550123"}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+restKey)
				t0 := time.Now()
				res, err := client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				d := time.Since(t0)
				if res.StatusCode != http.StatusOK {
					t.Errorf("single lookup: %d", res.StatusCode)
					return
				}
				mu.Lock()
				lat[ph] = append(lat[ph], d)
				mu.Unlock()
			}
		})
	}
	setPhase := func(ph string) { mu.Lock(); phase = ph; mu.Unlock() }
	load := func() string { b, _ := os.ReadFile("/proc/loadavg"); return strings.TrimSpace(string(b)) }
	t.Logf("load average at start: %s", load())
	for r := range rounds {
		setPhase("idle")
		time.Sleep(idle) // a phase's length, not a synchronisation
		hook := newHookReceiver(t, true)
		setPhase("job")
		b, _ := json.Marshal(map[string]any{"webhook_url": hook.srv.URL + "/hook"})
		full := append(body[:len(body)-1:len(body)-1], ',')
		full = append(full, b[1:]...)
		start := time.Now()
		code, out := call(t, "POST", p.base+"/api/v1/jobs", key, string(full))
		require.Equal(t, http.StatusAccepted, code, out)
		hr := hook.await(t, 5*time.Minute)
		took := time.Since(start)
		var ev struct {
			Data billing.JobView `json:"data"`
		}
		require.NoError(t, json.Unmarshal(hr.body, &ev))
		require.Equal(t, billing.JobSucceeded, ev.Data.Status)
		t.Logf("round %d: %d-number LRN job, submit → webhook %v (%.2fM numbers/s)", r+1, n, took.Round(time.Millisecond), float64(n)/took.Seconds()/1e6)
	}
	setPhase("idle")
	time.Sleep(idle)
	close(stop)
	wg.Wait()
	t.Logf("load average at end: %s", load())
	for _, ph := range []string{"idle", "job"} {
		d := lat[ph]
		slices.Sort(d)
		if len(d) == 0 {
			continue
		}
		q := func(f float64) time.Duration { return d[min(len(d)-1, int(f*float64(len(d))))] }
		t.Logf("single LRN lookups, 2 clients, %s phases: %d requests, p50 %v, p99 %v, max %v", ph, len(d), q(0.5), q(0.99), d[len(d)-1])
	}
	p.stop(t)
}
