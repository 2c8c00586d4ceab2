package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/distribute"
	"github.com/lnpdb/lnpdb/format"
)

// adminKeyFile writes f's admin key to a file, as --key-file wants it.
func (f *liveFixture) adminKeyFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "origin-key")
	require.NoError(t, os.WriteFile(p, []byte(f.adminKey+"\n"), 0o600))
	return p
}

// onlyTable asserts that dir holds the table, its ETag file, its lock
// file and nothing else: no temporary file.
func onlyTable(t *testing.T, path string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	for _, e := range entries {
		assert.Contains(t, []string{filepath.Base(path), filepath.Base(distribute.ETagPath(path)), filepath.Base(format.LockPath(path))}, e.Name())
	}
}

// TestPull fetches from an lnpdb serve origin over loopback: a new table,
// then 304, then the origin's replacement, plain and zstd.
func TestPull(t *testing.T) {
	f := newLiveFixture(t)
	s := startServe(t, "--db", f.table, "--keys", f.keys, "--admin-keys", f.admins,
		"--addr", "127.0.0.1:0", "--watch", "10ms", "--access-log=false")
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	keyFile := f.adminKeyFile(t)
	path := filepath.Join(t.TempDir(), "us.lnpdb")
	sample, err := os.ReadFile(f.sample)
	require.NoError(t, err)
	alt, err := os.ReadFile(f.alt)
	require.NoError(t, err)

	code, out, errOut := runCmd(t, "pull", "--key-file", keyFile, "--db", path, base+"/admin/v1/table")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "installed "+path)
	assert.Empty(t, errOut, "no progress when not on a terminal")
	fileIs(t, path, sample)

	code, out, errOut = runCmd(t, "pull", "--key-file", keyFile, "--db", path, base+"/admin/v1/table")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, path+" is current")

	f.replace(t, f.alt)
	code, out, errOut = runCmd(t, "pull", "--key-file", keyFile, "--db", path, base+"/admin/v1/table?zstd=1")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "installed "+path)
	fileIs(t, path, alt)
	code, out, _ = runCmd(t, "pull", "--key-file", keyFile, "--db", path, base+"/admin/v1/table?zstd=1")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "is current")
	onlyTable(t, path)

	// Without the key, and with a lookup key: refused, the table stays.
	code, _, errOut = runCmd(t, "pull", "--db", filepath.Join(t.TempDir(), "x.lnpdb"), base+"/admin/v1/table")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "401 Unauthorized")
	code, _, errOut = runCmd(t, "pull", "only-a-url")
	assert.Equal(t, 2, code, errOut)
	require.Equal(t, 0, s.stop(t))
}

// A cut-short download is refused: the table in place stays, no
// temporary file is left, and the exit status says so.
func TestPullRefusesTruncatedTable(t *testing.T) {
	f := newLiveFixture(t)
	alt, err := os.ReadFile(f.alt)
	require.NoError(t, err)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Etag", `"alt"`)
		w.Write(alt[:len(alt)-100])
	}))
	defer origin.Close()
	path := filepath.Join(t.TempDir(), "us.lnpdb")
	copyFile(t, f.sample, path)
	sample, err := os.ReadFile(f.sample)
	require.NoError(t, err)

	code, _, errOut := runCmd(t, "pull", "--db", path, origin.URL+"/us.lnpdb")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "(truncated)")
	fileIs(t, path, sample)
	onlyTable(t, path)
	_, err = os.Stat(distribute.ETagPath(path))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestServeDBURL runs an origin and a node that starts without a table:
// the node fetches it, answers from it, picks up the origin's replacement
// by itself (its own file watch is off), refuses a damaged one and keeps
// serving, and shows all of it in its status and metrics.
func TestServeDBURL(t *testing.T) {
	f := newLiveFixture(t)
	o := startServe(t, "--db", f.table, "--keys", f.keys, "--admin-keys", f.admins,
		"--addr", "127.0.0.1:0", "--watch", "10ms", "--access-log=false")
	originURL := o.await(t, &o.stdout, `on (http://127\.0\.0\.1:\d+)`)
	nodeTable := filepath.Join(t.TempDir(), "node.lnpdb")
	n := startServe(t, "--db", nodeTable, "--keys", f.keys, "--addr", "127.0.0.1:0",
		"--db-url", originURL+"/admin/v1/table?zstd=1", "--db-url-every", "50ms",
		"--db-url-key-file", f.adminKeyFile(t), "--watch", "0", "--access-log=false", "--log-format", "json")
	base := n.await(t, &n.stdout, `on (http://127\.0\.0\.1:\d+)`)
	client := &http.Client{Timeout: 10 * time.Second}
	stateOf := func(p string) string {
		code, body, err := lookup(client, base, f.apiKey, p)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code, body)
		return f.answers[p][body]
	}
	status := func() (st struct {
		Live struct {
			Reloads int `json:"reloads"`
		} `json:"live"`
		Pull struct {
			URL        string `json:"url"`
			LastResult string `json:"last_result"`
			LastError  string `json:"last_error"`
			ETag       string `json:"etag"`
		} `json:"pull"`
	}) {
		code, body := call(t, http.MethodGet, base+"/api/v1/status", "", "")
		require.Equal(t, http.StatusOK, code, body)
		require.NoError(t, json.Unmarshal([]byte(body), &st))
		return st
	}
	for _, p := range f.probes {
		require.Equal(t, "sample", stateOf(p))
	}
	assert.Equal(t, originURL+"/admin/v1/table", status().Pull.URL)
	require.Eventually(t, func() bool { return status().Pull.LastResult == "not_modified" }, 10*time.Second, 20*time.Millisecond)

	// The origin's table is replaced: the node fetches it and answers from
	// it, without its file watch.
	f.replace(t, f.alt)
	require.Eventually(t, func() bool { return stateOf(f.probes[0]) == "alt" }, 10*time.Second, 20*time.Millisecond)
	for _, p := range f.probes {
		assert.Equal(t, "alt", stateOf(p))
	}
	st := status()
	assert.Equal(t, 1, st.Live.Reloads)
	alt, err := os.ReadFile(f.alt)
	require.NoError(t, err)
	fileIs(t, nodeTable, alt)

	// A damaged table at the origin is refused; the node keeps answering.
	// (The ETag names the content the directory describes: a damaged copy
	// of the table the node has would be "not modified".)
	sample, err := os.ReadFile(f.sample)
	require.NoError(t, err)
	bad := bytes.Clone(sample)
	bad[len(bad)*2/3] ^= 1
	require.NoError(t, os.WriteFile(f.table+".bad", bad, 0o644))
	require.NoError(t, os.Rename(f.table+".bad", f.table))
	require.Eventually(t, func() bool { return status().Pull.LastResult == "failed" }, 10*time.Second, 20*time.Millisecond)
	assert.Contains(t, status().Pull.LastError, "corrupt table")
	assert.Equal(t, "alt", stateOf(f.probes[0]))
	fileIs(t, nodeTable, alt)

	code, metrics := call(t, http.MethodGet, base+"/metrics", "", "")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, metrics, `lnpdb_table_pulls_total{result="new"} 1`) // the replacement; the fetch at start precedes the poller
	assert.Regexp(t, `lnpdb_table_pulls_total\{result="failed"\} [1-9]`, metrics)
	assert.Regexp(t, `lnpdb_table_pull_bytes_total [1-9]`, metrics)
	assert.Contains(t, metrics, "lnpdb_table_pull_last_new_timestamp_seconds")
	require.Equal(t, 0, n.stop(t))
	// The poller fetches the damaged table every 50 ms until the node
	// stops, each fetch into a temporary file: once it has stopped, none
	// may be left, whether a fetch was under way or not.
	onlyTable(t, nodeTable)
	require.Equal(t, 0, o.stop(t))
	assert.Contains(t, n.stderr.String(), `"msg":"table fetched and installed"`)
	assert.NotContains(t, strings.ToLower(n.stderr.String()), f.adminKey)
}

func TestServeDBURLFlags(t *testing.T) {
	code, _, errOut := runCmd(t, "serve", "--db-url", "http://127.0.0.1:1/t", "--addr", "127.0.0.1:0")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--db-url needs --db FILE")
	f := newLiveFixture(t)
	code, _, errOut = runCmd(t, "serve", "--db", filepath.Join(t.TempDir(), "none.lnpdb"), "--keys", f.keys,
		"--db-url", "http://127.0.0.1:1/t", "--addr", "127.0.0.1:0")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "fetching it failed")
}

func fileIs(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, got), "%s holds another table", path)
}
