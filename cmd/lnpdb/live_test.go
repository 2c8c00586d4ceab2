package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/root"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/ingest/feed"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/lnpdb/lnpdb/lrn"
)

// liveProbes is how many of the sample's ported numbers the live tests
// change and look up.
const liveProbes = 24

// liveFixture is a sample table, an alternate table in which the probe
// numbers are ported elsewhere, an update feed that ports them a third
// way, and every REST answer each of the three states gives for them.
type liveFixture struct {
	dir      string   // holds the served table and the replacements
	table    string   // the served path
	sample   string   // the sample table, kept aside
	alt      string   // the alternate table, kept aside
	probes   []string // 11-digit numbers
	feed     string   // CSV: U rows for every probe
	answers  map[string]map[string]string
	apiKey   string
	adminKey string
	keys     string // keys file, lookup key with a high limit
	admins   string // admin keys file
}

func newLiveFixture(t *testing.T) *liveFixture {
	t.Helper()
	f := &liveFixture{dir: t.TempDir(), answers: map[string]map[string]string{}}
	src := lnpdb.Sample()
	rows := readCSV(t, src, "ported.csv") // tn,lrn,spid,activated_at,sv_type
	carriers := readCSV(t, src, "carriers.csv")
	require.Greater(t, len(rows), liveProbes*2)

	// The alternate table: the probes take the LRN and SPID of other rows.
	alt := testdb.Copy(t, src)
	var altRows, feedBuf bytes.Buffer
	aw, fw := csv.NewWriter(&altRows), csv.NewWriter(&feedBuf)
	require.NoError(t, aw.Write(rows[0]))
	require.NoError(t, fw.Write([]string{"action", "tn", "lrn", "spid", "activated_at"}))
	for i, r := range rows[1:] {
		if i < liveProbes {
			f.probes = append(f.probes, "1"+r[0])
			other := rows[1+liveProbes+i]
			require.NoError(t, aw.Write([]string{r[0], other[1], carriers[1+i%(len(carriers)-1)][0], "2026-01-02T03:04:05Z", ""}))
			third := rows[len(rows)-1-i]
			require.NoError(t, fw.Write([]string{"U", r[0], third[1], carriers[len(carriers)-1-i%(len(carriers)-1)][0], "2026-11-20T10:00:00Z"}))
			continue
		}
		require.NoError(t, aw.Write(r))
	}
	aw.Flush()
	fw.Flush()
	alt["ported.csv"] = &fstest.MapFile{Data: altRows.Bytes()}
	f.feed = feedBuf.String()

	f.sample = testdb.Build(t, src)
	f.alt = testdb.Build(t, alt)
	f.table = filepath.Join(f.dir, "live.lnpdb")
	f.replace(t, f.sample)

	// What each state answers, from the lookup package itself.
	withUpdates := filepath.Join(t.TempDir(), "updated.lnpdb")
	copyFile(t, f.sample, withUpdates)
	for state, path := range map[string]string{"sample": f.sample, "alt": f.alt, "updated": withUpdates} {
		db, err := format.OpenWriter(path)
		require.NoError(t, err)
		if path == withUpdates {
			var ups []format.Update
			require.NoError(t, feed.Read(strings.NewReader(f.feed), "feed", func(u format.Update) error {
				ups = append(ups, u)
				return nil
			}))
			require.NoError(t, db.Apply(ups))
		}
		for _, p := range f.probes {
			r, err := lrn.Lookup(db, p, lrn.Options{Enhanced: true})
			require.NoError(t, err)
			b, err := json.Marshal(&r)
			require.NoError(t, err)
			if f.answers[p] == nil {
				f.answers[p] = map[string]string{}
			}
			f.answers[p][canonicalJSON(b)] = state
		}
		require.NoError(t, db.Close())
	}
	for _, p := range f.probes {
		require.Len(t, f.answers[p], 3, "the three states differ for %s", p)
	}

	f.apiKey, f.adminKey = auth.NewKey(), auth.NewKey()
	k := auth.HashKey(f.apiKey)
	k.Limit = 1 << 30
	f.keys = filepath.Join(t.TempDir(), "keys")
	require.NoError(t, os.WriteFile(f.keys, []byte(k.Line()+"\n"), 0o600))
	f.admins = filepath.Join(t.TempDir(), "admin-keys")
	ak := auth.HashKey(f.adminKey)
	require.NoError(t, os.WriteFile(f.admins, []byte(ak.Line()+"\n"), 0o600))
	return f
}

func readCSV(t *testing.T, fsys fs.FS, name string) [][]string {
	t.Helper()
	b, err := fs.ReadFile(fsys, name)
	require.NoError(t, err)
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	require.NoError(t, err)
	return recs
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, b, 0o644))
}

// replace puts a copy of from at the served path by rename, as an operator
// (or a distribution job) replaces a table.
func (f *liveFixture) replace(t *testing.T, from string) {
	tmp, err := os.CreateTemp(f.dir, ".incoming-*")
	if err != nil {
		t.Error(err)
		return
	}
	src, err := os.Open(from)
	if err == nil {
		_, err = io.Copy(tmp, src)
		src.Close()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), f.table)
	}
	if err != nil {
		t.Error(err)
	}
}

// lookup asks the server for p's LRN and returns the status and body.
func lookup(c *http.Client, base, key, p string) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, base+"/api/v1/lrn", strings.NewReader(`{"phone_number":"`+p+`","include_enhanced_lrn":true}`))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, canonicalJSON(b), err
}

// canonicalJSON is b with its object keys sorted and no white space, so
// that answers compare by what they say, not by how they are encoded.
func canonicalJSON(b []byte) string {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return string(b)
	}
	c, err := json.Marshal(v)
	if err != nil {
		return string(b)
	}
	return string(c)
}

func (f *liveFixture) postFeed(c *http.Client, base, feed string) error {
	req, err := http.NewRequest(http.MethodPost, base+"/admin/v1/updates", strings.NewReader(feed))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "text/csv")
	req.Header.Set("Authorization", "Bearer "+f.adminKey)
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("POST /admin/v1/updates: %d %s", res.StatusCode, b)
	}
	return nil
}

// TestServeLiveUnderLoad looks numbers up over real HTTP from several
// goroutines while the table file is replaced by rename again and again
// and updates arrive through the admin API (and compact past a small
// threshold): no request may fail, and every answer must be one that the
// sample, the alternate table or the updates give.
func TestServeLiveUnderLoad(t *testing.T) {
	f := newLiveFixture(t)
	s := startServe(t, "--db", f.table, "--keys", f.keys, "--admin-keys", f.admins,
		"--addr", "127.0.0.1:0", "--watch", "10ms", "--compact-at", "12", "--access-log=false", "--log-format", "json")
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	const workers = 4
	var (
		requests, non2xx, transport atomic.Int64
		mu                          sync.Mutex
		wrong                       []string
		seen                        = map[string]bool{} // states answered
	)
	// The load runs until the changes below are done and a compaction has
	// run, for at least a second; the deadline only bounds a hung server.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; ctx.Err() == nil; i++ {
				p := f.probes[i%len(f.probes)]
				code, body, err := lookup(client, base, f.apiKey, p)
				if ctx.Err() != nil && err != nil {
					return // the deadline, not the server
				}
				requests.Add(1)
				switch {
				case err != nil:
					transport.Add(1)
				case code/100 != 2:
					non2xx.Add(1)
				default:
					state, ok := f.answers[p][body]
					mu.Lock()
					if !ok && len(wrong) < 5 {
						wrong = append(wrong, p+": "+body)
					}
					seen[state] = true
					mu.Unlock()
				}
			}
		})
	}
	start := time.Now()
	// awaitLoad waits until the load has made some progress, so that every
	// state is looked at.
	awaitLoad := func() {
		n := requests.Load()
		require.Eventually(t, func() bool { return requests.Load() >= n+workers*4 }, 20*time.Second, time.Millisecond)
	}
	// The table changes under the load: replacements by rename, each
	// awaited until reloaded, and the update feed in slices of five numbers
	// (past --compact-at, so a compaction runs too).
	feedRows := strings.SplitAfter(strings.TrimSuffix(f.feed, "\n"), "\n")
	header, rows := feedRows[0], feedRows[1:]
	const changes = 6
	replacements, batches := 0, 0
	for i := range changes {
		reloads := strings.Count(s.stderr.String(), `"msg":"table reloaded"`)
		f.replace(t, []string{f.alt, f.sample}[i%2])
		replacements++
		require.Eventually(t, func() bool {
			return strings.Count(s.stderr.String(), `"msg":"table reloaded"`) > reloads
		}, 20*time.Second, time.Millisecond, "reload %d", i)
		awaitLoad()
		lo := (i * 5) % len(rows)
		require.NoError(t, f.postFeed(client, base, header+strings.Join(rows[lo:min(lo+5, len(rows))], "")+"\n"))
		batches++
		awaitLoad()
	}
	// A compaction that met a replacement gives up; ask for another until
	// one is done.
	require.Eventually(t, func() bool {
		if strings.Contains(s.stderr.String(), `"msg":"compaction done"`) {
			return true
		}
		if req, err := http.NewRequest(http.MethodPost, base+"/admin/v1/compact", nil); err == nil {
			req.Header.Set("Authorization", "Bearer "+f.adminKey)
			if res, err := client.Do(req); err == nil {
				res.Body.Close()
			}
		}
		return false
	}, 20*time.Second, 20*time.Millisecond)
	awaitLoad()
	if d := time.Second - time.Since(start); d > 0 {
		time.Sleep(d)
	}
	cancel()
	wg.Wait()

	t.Logf("%d requests, %d replacements, %d update batches; states answered: %v", requests.Load(), replacements, batches, seen)
	assert.Zero(t, transport.Load(), "transport errors")
	assert.Zero(t, non2xx.Load(), "non-2xx responses")
	assert.Empty(t, wrong, "answers no state gives")
	assert.Greater(t, requests.Load(), int64(workers*10))
	assert.GreaterOrEqual(t, replacements, 4)
	assert.True(t, seen["sample"] && seen["alt"] && seen["updated"], "every state was served")
	assert.NotContains(t, s.stderr.String(), `"level":"ERROR"`)
	require.Equal(t, 0, s.stop(t))
}

// TestServeReload checks the two ways a replaced table is picked up — the
// file watch and SIGHUP — that a bad replacement leaves the table serving,
// and that pending updates stay on top of a reloaded table.
func TestServeReload(t *testing.T) {
	f := newLiveFixture(t)
	s := startServe(t, "--db", f.table, "--keys", f.keys, "--admin-keys", f.admins,
		"--addr", "127.0.0.1:0", "--watch", "0", "--compact-at", "0", "--access-log=false")
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	client := &http.Client{}
	stateOf := func(p string) string {
		code, body, err := lookup(client, base, f.apiKey, p)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code, body)
		return f.answers[p][body]
	}
	p := f.probes[0]
	require.Equal(t, "sample", stateOf(p))

	// Without the watch, a replacement is picked up on SIGHUP only.
	f.replace(t, f.alt)
	require.Equal(t, "sample", stateOf(p), "not reloaded yet")
	sighup(t)
	s.await(t, &s.stderr, `msg="(table reloaded)" reason=SIGHUP`)
	require.Equal(t, "alt", stateOf(p))

	// A pending update stays on top of the next table.
	require.NoError(t, f.postFeed(client, base, strings.SplitAfterN(f.feed, "\n", 3)[0]+strings.SplitAfterN(f.feed, "\n", 3)[1]))
	assert.Equal(t, "updated", stateOf(p))

	// A damaged replacement is refused; the table keeps serving.
	require.NoError(t, os.WriteFile(f.table+".bad", []byte("not a table"), 0o644))
	require.NoError(t, os.Rename(f.table+".bad", f.table))
	sighup(t)
	s.await(t, &s.stderr, `msg="(table reload failed)`)
	assert.Equal(t, "updated", stateOf(p))
	assert.Equal(t, "alt", stateOf(f.probes[1]))
	require.Equal(t, 0, s.stop(t))
}

// TestServeAdminAPIOnlyWithAdminKeys checks that without --admin-keys there
// is no admin API, and that an empty admin keys file is refused.
func TestServeAdminAPIOnlyWithAdminKeys(t *testing.T) {
	f := newLiveFixture(t)
	s := startServe(t, "--db", f.table, "--keys", f.keys, "--addr", "127.0.0.1:0", "--access-log=false")
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	code, body := call(t, "POST", base+"/admin/v1/updates", f.apiKey, "")
	assert.Equal(t, http.StatusNotFound, code, body)
	assert.Contains(t, body, `"code":"NOT_FOUND"`)
	require.Equal(t, 0, s.stop(t))

	empty := filepath.Join(t.TempDir(), "admins")
	require.NoError(t, os.WriteFile(empty, []byte("# nobody\n"), 0o600))
	var out, errb bytes.Buffer
	code = root.Run(context.Background(), &cliutil.Env{Stdout: &out, Stderr: &errb}, []string{"serve", "--db", f.table, "--keys", f.keys, "--admin-keys", empty, "--addr", "127.0.0.1:0"})
	assert.Equal(t, 1, code)
	assert.Contains(t, errb.String(), "holds no keys")
}
