package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/root"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/serve"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testio"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// serving runs lnpdb with args in the background until the test ends or
// stop is called, and returns its output streams.
type serving struct {
	stdout, stderr testio.Buffer
	cancel         context.CancelFunc
	done           chan int
}

func startServe(t *testing.T, args ...string) *serving {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &serving{cancel: cancel, done: make(chan int, 1)}
	go func() {
		s.done <- root.Run(ctx, &cliutil.Env{Stdout: &s.stdout, Stderr: &s.stderr}, append([]string{"serve"}, args...))
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			t.Error("serve did not stop")
		}
	})
	return s
}

// await waits until re matches the stream and returns its first group.
func (s *serving) await(t *testing.T, stream *testio.Buffer, re string) string {
	t.Helper()
	rx := regexp.MustCompile(re)
	var m []string
	require.Eventually(t, func() bool {
		select {
		case code := <-s.done:
			s.done <- code
			t.Fatalf("serve exited %d: %s%s", code, s.stdout.String(), s.stderr.String())
		default:
		}
		m = rx.FindStringSubmatch(stream.String())
		return m != nil
	}, 30*time.Second, 10*time.Millisecond, "waiting for %q", re)
	return m[1]
}

// awaitCount waits until s's stderr holds want n times.
func (s *serving) awaitCount(t *testing.T, want string, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Count(s.stderr.String(), want) >= n },
		30*time.Second, 10*time.Millisecond, "waiting for %q ×%d in: %s", want, n, s.stderr.String())
}

// stop cancels serve's context and returns its exit status.
func (s *serving) stop(t *testing.T) int {
	t.Helper()
	s.cancel()
	select {
	case code := <-s.done:
		s.done <- code
		return code
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not shut down")
		return -1
	}
}

func call(t *testing.T, method, url, key, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}

func TestServeSampleWithDevKey(t *testing.T) {
	s := startServe(t, "--addr", "127.0.0.1:0", "--log-format", "json")
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	key := s.await(t, &s.stdout, `development API key[^:]*: (lnp_[a-z2-7]{32})`)
	table := s.await(t, &s.stderr, `"table":"([^"]+)"`)
	// The start line does not say keys=0 beside the key it printed.
	assert.Equal(t, "accounts", s.await(t, &s.stderr, `"msg":"serving".*"keys":"?([^",]+)`))
	assert.Contains(t, s.stdout.String(), "curl -s "+base+"/api/v1/lrn")
	assert.Contains(t, s.stdout.String(), "curl -s "+base+"/graphql")

	code, body := call(t, "POST", base+"/api/v1/lrn", key, `{"phone_number":"12025550123"}`)
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `"lrn":"1`)
	code, body = call(t, "POST", base+"/graphql", key, `{"query":"{ lookupLrn(phoneNumber: \"12025550123\") { lrn success } }"}`)
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `"success":true`)
	code, _ = call(t, "POST", base+"/api/v1/lrn", "", `{"phone_number":"12025550123"}`)
	assert.Equal(t, http.StatusUnauthorized, code)
	code, body = call(t, "GET", base+"/api/v1/status", "", "")
	assert.Equal(t, http.StatusOK, code, body)
	code, body = call(t, "GET", base+"/metrics", "", "")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `lnpdb_http_requests_total{code="200",path="/api/v1/lrn"} 1`)

	require.Equal(t, 0, s.stop(t))
	// The access log (written in batches, the last at shutdown) names the
	// key by its id, never by itself.
	assert.Contains(t, s.stderr.String(), `"path":"/api/v1/lrn"`)
	assert.NotContains(t, s.stderr.String(), key)
	_, err := http.Get(base + "/api/v1/status")
	assert.Error(t, err, "the listener is closed")
	assert.NoFileExists(t, table, "the sample's temporary table is removed")
}

func TestServeTableWithKeysAndMetricsListener(t *testing.T) {
	table := testdb.Build(t, lnpdb.Sample())
	keys := filepath.Join(t.TempDir(), "keys")
	var out, errb bytes.Buffer
	require.Equal(t, 0, root.Run(context.Background(), &cliutil.Env{Stdout: &out, Stderr: &errb}, []string{"key", "new", "--keys", keys, "--rpm", "2"}), errb.String())
	key := strings.TrimSpace(out.String())

	s := startServe(t, "--db", table, "--keys", keys, "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0")
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	metrics := s.await(t, &s.stderr, `serving metrics.*addr=(http://\S+)`)
	assert.NotContains(t, s.stdout.String(), "development API key", "keys given: no dev key")

	for range 2 {
		code, body := call(t, "POST", base+"/api/v1/cnam", key, `{"phone_number":"12025550123"}`)
		require.Equal(t, http.StatusOK, code, body)
	}
	code, _ := call(t, "POST", base+"/api/v1/cnam", key, `{"phone_number":"12025550123"}`)
	assert.Equal(t, http.StatusTooManyRequests, code, "the key's own limit applies")

	code, _ = call(t, "GET", base+"/metrics", "", "")
	assert.Equal(t, http.StatusNotFound, code, "metrics are on their own listener")
	code, body := call(t, "GET", metrics, "", "")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "lnpdb_lookups_total")
	require.Equal(t, 0, s.stop(t))
	assert.FileExists(t, table, "a table given by --db is left alone")
}

func TestServeDevKeyBesideKeysFile(t *testing.T) {
	table := testdb.Build(t, lnpdb.Sample())
	s := startServe(t, "--db", table, "--dev-key", "--addr", "127.0.0.1:0", "--access-log=false")
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	key := s.await(t, &s.stdout, `development API key[^:]*: (lnp_[a-z2-7]{32})`)
	assert.Equal(t, "1", s.await(t, &s.stderr, `msg=serving .*keys=(\S+)`), "the development key is counted")
	code, body := call(t, "POST", base+"/api/v1/trust", key, `{"phone_number":"12025550123"}`)
	assert.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, 0, s.stop(t))
}

func TestServeRefuses(t *testing.T) {
	table := testdb.Build(t, lnpdb.Sample())
	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(empty, []byte("# nobody\n"), 0o600))
	bad := filepath.Join(t.TempDir(), "bad")
	require.NoError(t, os.WriteFile(bad, []byte("lnp_plaintextkey\n"), 0o600))
	// Every refusal comes before serve binds a port: with --addr held by
	// another listener (a server left running), each still names its own
	// cause, not the busy port.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	assertRefused(t, []string{"serve", "--addr", busy.Addr().String()}, []refusal{
		{[]string{"--db", table}, 2, "refusing to serve"},
		{[]string{"--db", table, "--keys", empty}, 1, "holds no keys"},
		{[]string{"--db", table, "--keys", bad}, 1, "bad:1:"},
		{[]string{"--db", filepath.Join(t.TempDir(), "missing.lnpdb"), "--dev-key"}, 1, "missing.lnpdb"},
		{[]string{"--db", table, "--dev-key", "--db-url", "http://127.0.0.1:1/t", "--db-url-key-file", filepath.Join(t.TempDir(), "nokey")}, 1, "--db-url-key-file"},
		{[]string{"--addr", "256.0.0.1:99999"}, 1, "--addr"},
		{[]string{"--log-format", "xml"}, 2, "--log-format"},
		{[]string{"extra"}, 2, "no arguments"},
	})
}

// TestServeGCPercent: serve runs the collector at gcPercent when GOGC is not
// set, and leaves it alone when it is.
func TestServeGCPercent(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set in this test's environment")
	}
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	s := startServe(t, "--addr", "127.0.0.1:0")
	s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	assert.Equal(t, serve.GCPercent, debug.SetGCPercent(100))

	t.Setenv("GOGC", "100")
	s = startServe(t, "--addr", "127.0.0.1:0")
	s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	assert.Equal(t, 100, debug.SetGCPercent(100), "an operator's GOGC stays")
}
