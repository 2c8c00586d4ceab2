package distribute_test

import (
	"bytes"
	"context"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/format/build"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/httpapi"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/distribute"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/live"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

const adminKey = "lnp_adminadminadminadminadminadmin"

// buildTable builds the sample with the given build time (tables built at
// different times differ in their header, hence in their ETag) and returns
// its bytes.
func buildTable(t *testing.T, at time.Time) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "t.lnpdb")
	_, err := build.Build(context.Background(), lnpdb.Sample(), p, build.Options{BuiltAt: at})
	require.NoError(t, err)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}

// origin is an lnpdb server's admin API on loopback, serving a table the
// test may replace.
type origin struct {
	*httptest.Server
	path string
}

func newOrigin(t *testing.T, table []byte) *origin {
	t.Helper()
	o := &origin{path: filepath.Join(t.TempDir(), "origin.lnpdb")}
	require.NoError(t, os.WriteFile(o.path, table, 0o644))
	db, err := format.OpenWriter(o.path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	lv, err := live.Start(live.Config{DB: db})
	require.NoError(t, err)
	t.Cleanup(lv.Stop)
	a, err := httpapi.NewAdmin(httpapi.AdminConfig{Tables: httpapi.NewTable(db), Keys: auth.NewKeySet(auth.HashKey(adminKey)), Live: lv})
	require.NoError(t, err)
	o.Server = httptest.NewServer(a)
	t.Cleanup(o.Close)
	return o
}

// replace renames a new table over the origin's file.
func (o *origin) replace(t *testing.T, table []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(o.path+".new", table, 0o644))
	require.NoError(t, os.Rename(o.path+".new", o.path))
}

// noTemps asserts that nothing but the table and its ETag file is in dir.
func noTemps(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.HasPrefix(e.Name(), "."), "temporary file left: %s", e.Name())
	}
}

func fileIs(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, got), "%s holds another table", path)
}

var t0 = testdb.BuiltAt

func TestPullFromLnpdbOrigin(t *testing.T) {
	one, two := buildTable(t, t0), buildTable(t, t0.Add(time.Hour))
	o := newOrigin(t, one)
	dir := t.TempDir()
	path := filepath.Join(dir, "us.lnpdb")
	ctx := context.Background()
	opt := distribute.Options{Key: adminKey}

	res, err := distribute.Pull(ctx, o.URL+"/admin/v1/table", path, opt)
	require.NoError(t, err)
	assert.False(t, res.NotModified)
	assert.Equal(t, int64(len(one)), res.Bytes)
	assert.Equal(t, path, res.Info.Path)
	assert.Equal(t, t0, res.Info.BuiltAt)
	assert.NotEmpty(t, res.ETag)
	fileIs(t, path, one)
	tag, err := os.ReadFile(distribute.ETagPath(path))
	require.NoError(t, err)
	assert.Equal(t, res.ETag+"\n", string(tag))

	// Unchanged at the origin: 304, and the file is not touched.
	before, err := os.Stat(path)
	require.NoError(t, err)
	res, err = distribute.Pull(ctx, o.URL+"/admin/v1/table", path, opt)
	require.NoError(t, err)
	assert.True(t, res.NotModified)
	assert.Zero(t, res.Bytes)
	after, err := os.Stat(path)
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "a 304 replaced the file")

	// A new table at the origin is fetched.
	o.replace(t, two)
	res, err = distribute.Pull(ctx, o.URL+"/admin/v1/table", path, opt)
	require.NoError(t, err)
	assert.False(t, res.NotModified)
	assert.Equal(t, t0.Add(time.Hour), res.Info.BuiltAt)
	fileIs(t, path, two)

	// Compressed on the fly, as a .zst body.
	o.replace(t, one)
	res, err = distribute.Pull(ctx, o.URL+"/admin/v1/table?zstd=1", path, opt)
	require.NoError(t, err)
	assert.Less(t, res.Bytes, int64(len(one)), "fewer bytes on the wire")
	fileIs(t, path, one)
	res, err = distribute.Pull(ctx, o.URL+"/admin/v1/table?zstd=1", path, opt)
	require.NoError(t, err)
	assert.True(t, res.NotModified)

	// A table removed by hand is fetched again, whatever the ETag file says.
	require.NoError(t, os.Remove(path))
	res, err = distribute.Pull(ctx, o.URL+"/admin/v1/table?zstd=1", path, opt)
	require.NoError(t, err)
	assert.False(t, res.NotModified)
	fileIs(t, path, one)
	noTemps(t, dir)

	// Without the admin key: refused, and the error says why.
	_, err = distribute.Pull(ctx, o.URL+"/admin/v1/table", filepath.Join(dir, "other.lnpdb"), distribute.Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "401")
	assert.Contains(t, err.Error(), "MISSING_API_KEY")
}

// staticOrigin serves fixed bytes as an object store or a CDN would: with
// an ETag and the given headers, honouring If-None-Match.
func staticOrigin(t *testing.T, body []byte, etag string, hdr ...string) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Etag", etag)
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Set(hdr[i], hdr[i+1])
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

func zstdOf(t *testing.T, b []byte) []byte {
	t.Helper()
	e, err := zstd.NewWriter(nil)
	require.NoError(t, err)
	return e.EncodeAll(b, nil)
}

// A zstd body is recognised by the URL's .zst, by Content-Type or by
// Content-Encoding, and decompressed while written.
func TestPullZstd(t *testing.T) {
	table := buildTable(t, t0)
	z := zstdOf(t, table)
	for name, c := range map[string]struct {
		path string
		hdr  []string
	}{
		"us.lnpdb.zst":           {"/us.lnpdb.zst", []string{"Content-Type", "application/octet-stream"}},
		"application/zstd":       {"/table", []string{"Content-Type", "application/zstd"}},
		"Content-Encoding: zstd": {"/table", []string{"Content-Encoding", "zstd"}},
	} {
		t.Run(name, func(t *testing.T) {
			s := staticOrigin(t, z, `"v1"`, c.hdr...)
			path := filepath.Join(t.TempDir(), "us.lnpdb")
			res, err := distribute.Pull(context.Background(), s.URL+c.path, path, distribute.Options{})
			require.NoError(t, err)
			assert.Equal(t, int64(len(z)), res.Bytes)
			assert.Equal(t, `"v1"`, res.ETag)
			fileIs(t, path, table)
			res, err = distribute.Pull(context.Background(), s.URL+c.path, path, distribute.Options{})
			require.NoError(t, err)
			assert.True(t, res.NotModified)
		})
	}
}

// Whatever goes wrong with the download, the installed table, its ETag
// file and the directory stay as they were.
func TestPullRefusesBadTables(t *testing.T) {
	old, table := buildTable(t, t0), buildTable(t, t0.Add(time.Hour))
	flipped := bytes.Clone(table)
	flipped[len(flipped)*2/3] ^= 1
	z := zstdOf(t, table)
	cutShort := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Promises the whole table, sends half, and hangs up.
		w.Header().Set("Content-Length", strconv.Itoa(len(table)))
		w.Write(table[:len(table)/2])
	}))
	defer cutShort.Close()
	stalls := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(table)))
		w.Write(table[:1000])
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer stalls.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "the bucket is gone", http.StatusInternalServerError)
	}))
	defer failing.Close()
	for name, c := range map[string]struct {
		url  string
		want string
	}{
		"truncated table":     {staticOrigin(t, table[:len(table)/2], `"t"`).URL, "(truncated)"},
		"one bit wrong":       {staticOrigin(t, flipped, `"f"`).URL, "corrupt table"},
		"an error page":       {staticOrigin(t, []byte("<html>gateway timeout</html>"), `"e"`).URL, "within the 64-byte header"},
		"truncated zstd":      {staticOrigin(t, z[:len(z)/2], `"z"`).URL + "/us.lnpdb.zst", "unexpected EOF"},
		"not zstd":            {staticOrigin(t, table, `"n"`).URL + "/us.lnpdb.zst", "magic number mismatch"},
		"connection cut":      {cutShort.URL, "unexpected EOF"},
		"stalled":             {stalls.URL, "the origin sent 1000 bytes in the last 300ms, less than the 65536 required"},
		"unknown encoding":    {staticOrigin(t, table, `"b"`, "Content-Encoding", "br").URL, `unsupported Content-Encoding "br"`},
		"server error":        {failing.URL, "500 Internal Server Error: the bucket is gone"},
		"not an http URL":     {"ftp://127.0.0.1/us.lnpdb", "want an http:// or https:// URL"},
		"nobody listening":    {"http://127.0.0.1:1/us.lnpdb", "connection refused"},
		"a page, not a table": {staticOrigin(t, []byte("{}"), `"j"`, "Content-Type", "application/json").URL, "within the 64-byte header"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "us.lnpdb")
			require.NoError(t, os.WriteFile(path, old, 0o644))
			require.NoError(t, os.WriteFile(distribute.ETagPath(path), []byte(`"old"`+"\n"), 0o644))
			_, err := distribute.Pull(context.Background(), c.url, path, distribute.Options{StallTimeout: 300 * time.Millisecond})
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			fileIs(t, path, old)
			fileIs(t, distribute.ETagPath(path), []byte(`"old"`+"\n"))
			noTemps(t, dir)
		})
	}
}

func TestPollerMetricsAndStatus(t *testing.T) {
	one, two := buildTable(t, t0), buildTable(t, t0.Add(time.Hour))
	o := newOrigin(t, one)
	reg := prometheus.NewRegistry()
	m, err := distribute.NewMetrics(reg)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "us.lnpdb")
	replaced := 0
	p := &distribute.Poller{URL: o.URL + "/admin/v1/table?zstd=1", Path: path, Every: time.Minute,
		Options: distribute.Options{Key: adminKey}, Metrics: m, Log: slog.New(slog.DiscardHandler),
		Replace: func(install func() error) error { replaced++; return install() }}
	ctx := context.Background()
	count := func(result string) float64 { return metricValue(t, reg, "lnpdb_table_pulls_total", result) }

	_, err = p.Once(ctx)
	require.NoError(t, err)
	_, err = p.Once(ctx)
	require.NoError(t, err)
	o.replace(t, two)
	_, err = p.Once(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, replaced, "every fetch goes through Replace")
	assert.Equal(t, 2.0, count("new"))
	assert.Equal(t, 1.0, count("not_modified"))
	assert.Equal(t, 0.0, count("failed"))
	st := p.Status()
	assert.Equal(t, "new", st.LastResult)
	assert.Empty(t, st.LastError)
	assert.Equal(t, o.URL+"/admin/v1/table", st.URL, "the query is not shown")
	assert.False(t, st.LastNew.IsZero())
	fileIs(t, path, two)

	o.replace(t, one[:100])
	_, err = p.Once(ctx)
	require.Error(t, err)
	assert.Equal(t, 1.0, count("failed"))
	st = p.Status()
	assert.Equal(t, "failed", st.LastResult)
	assert.NotEmpty(t, st.LastError)
	assert.Equal(t, 4, replaced)
	assert.Positive(t, metricValue(t, reg, "lnpdb_table_pull_bytes_total", ""))
	assert.Positive(t, metricValue(t, reg, "lnpdb_table_pull_last_new_timestamp_seconds", ""))
	fileIs(t, path, two)
}

// metricValue reads a counter or gauge from reg; result, when set, picks
// the series with that result label.
func metricValue(t *testing.T, reg *prometheus.Registry, name, result string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if result != "" && (len(m.GetLabel()) != 1 || m.GetLabel()[0].GetValue() != result) {
				continue
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s %s", name, result)
	return 0
}
