package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/format"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// damage flips one bit in the middle of a section of the table at path.
func damage(t *testing.T, path, section string) {
	t.Helper()
	db, err := format.Open(path, format.IgnoreJournal())
	require.NoError(t, err)
	var off int64 = -1
	for _, s := range db.Info().Sections {
		if s.ID == section {
			off = int64(s.Offset + s.Length/2)
		}
	}
	require.NoError(t, db.Close())
	require.GreaterOrEqual(t, off, int64(0), "no section %s", section)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	b[off] ^= 0x10
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// A table with a damaged PORTED section is refused at start, naming the
// section, before any lookup could read it.
func TestServeRefusesDamagedTable(t *testing.T) {
	f := newLiveFixture(t)
	damage(t, f.table, "PORTED")
	code, _, errs := runCmd(t, "serve", "--db", f.table, "--keys", f.keys, "--addr", "127.0.0.1:0")
	assert.NotZero(t, code)
	assert.Contains(t, errs, "PORTED")
	assert.Contains(t, errs, "checksum")
}

// A damaged replacement is refused: the old table keeps serving, and the
// failure shows in the log, in /api/v1/status and in the metrics. The next
// good replacement is taken.
func TestServeRefusesDamagedReload(t *testing.T) {
	f := newLiveFixture(t)
	s := startServe(t, "--db", f.table, "--keys", f.keys, "--addr", "127.0.0.1:0", "--watch", "10ms",
		"--access-log=false", "--log-format", "json")
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	p := f.probes[0]
	_, before, err := lookup(http.DefaultClient, base, f.apiKey, p)
	require.NoError(t, err)
	require.Equal(t, "sample", f.answers[p][before])

	bad := filepath.Join(t.TempDir(), "bad.lnpdb")
	copyFile(t, f.alt, bad)
	damage(t, bad, "PORTED")
	f.replace(t, bad)
	s.await(t, &s.stderr, `("table reload failed)`)
	var st struct {
		Live struct {
			Reloads         int    `json:"reloads"`
			ReloadFailures  int    `json:"reload_failures"`
			LastReloadError string `json:"last_reload_error"`
		} `json:"live"`
	}
	code, body := call(t, http.MethodGet, base+"/api/v1/status", "", "")
	require.Equal(t, http.StatusOK, code)
	require.NoError(t, json.Unmarshal([]byte(body), &st), body)
	assert.Equal(t, 1, st.Live.ReloadFailures)
	assert.Contains(t, st.Live.LastReloadError, "PORTED")
	_, metrics := call(t, http.MethodGet, base+"/metrics", "", "")
	assert.Contains(t, metrics, `lnpdb_table_reloads_total{result="failed"} 1`)
	for _, p := range f.probes {
		_, got, err := lookup(http.DefaultClient, base, f.apiKey, p)
		require.NoError(t, err)
		require.Equal(t, "sample", f.answers[p][got], "%s is answered from the old table", p)
	}

	f.replace(t, f.alt)
	require.Eventually(t, func() bool {
		_, got, err := lookup(http.DefaultClient, base, f.apiKey, p)
		return err == nil && f.answers[p][got] == "alt"
	}, 10*time.Second, 10*time.Millisecond)
	code, body = call(t, http.MethodGet, base+"/api/v1/status", "", "")
	require.Equal(t, http.StatusOK, code)
	st.Live.LastReloadError = ""
	require.NoError(t, json.Unmarshal([]byte(body), &st))
	assert.Equal(t, 1, st.Live.Reloads)
	assert.Empty(t, st.Live.LastReloadError, "the last attempt succeeded")
}

// postFeedKey posts a feed with an Idempotency-Key and returns the status,
// the replay header and the body.
func (f *liveFixture) postFeedKey(t *testing.T, base, feed, key string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/admin/v1/updates", strings.NewReader(feed))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "text/csv")
	req.Header.Set("Authorization", "Bearer "+f.adminKey)
	req.Header.Set("Idempotency-Key", key)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, res.Header.Get("Idempotent-Replayed"), string(b)
}

// A feed retried with its Idempotency-Key is answered as the first time and
// applied once — also after a restart; the key with another feed is 422.
func TestServeIdempotentFeed(t *testing.T) {
	f := newLiveFixture(t)
	args := []string{"--db", f.table, "--keys", f.keys, "--admin-keys", f.admins, "--addr", "127.0.0.1:0",
		"--compact-at", "0", "--access-log=false", "--log-format", "json"}
	s := startServe(t, args...)
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)

	code, replayed, first := f.postFeedKey(t, base, f.feed, "invoice-42")
	require.Equal(t, http.StatusOK, code, first)
	assert.Empty(t, replayed)
	code, replayed, again := f.postFeedKey(t, base, f.feed, "invoice-42")
	require.Equal(t, http.StatusOK, code, again)
	assert.Equal(t, "true", replayed)
	assert.JSONEq(t, first, again, "the first answer, again")

	other := strings.Replace(f.feed, "U,", "D,", 1)
	code, _, body := f.postFeedKey(t, base, other, "invoice-42")
	assert.Equal(t, http.StatusUnprocessableEntity, code)
	assert.Contains(t, body, `"IDEMPOTENCY_KEY_REUSED"`)
	require.Zero(t, s.stop(t))

	// After a restart the key is still remembered.
	s = startServe(t, args...)
	base = s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	code, replayed, again = f.postFeedKey(t, base, f.feed, "invoice-42")
	require.Equal(t, http.StatusOK, code, again)
	assert.Equal(t, "true", replayed)
	assert.JSONEq(t, first, again)
	var st struct {
		Live struct {
			Pending int `json:"pending_updates"`
		} `json:"live"`
	}
	_, body = call(t, http.MethodGet, base+"/api/v1/status", "", "")
	require.NoError(t, json.Unmarshal([]byte(body), &st))
	assert.Equal(t, liveProbes, st.Live.Pending, "applied once")
}

// lnpdb journal check reports a damaged journal and exits 1; recover sets
// it aside and keeps every batch that verifies; serve refuses it until then.
func TestJournalCheckAndRecover(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "t.lnpdb")
	code, _, errs := runCmd(t, "build", "--db", table, "../../format/testdata/mini")
	require.Equal(t, 0, code, errs)
	for i, row := range []string{"A,2025550199,2025569000,3003,", "A,2025550198,2025569000,3003,", "A,2025550197,2025569000,3003,"} {
		feed := filepath.Join(dir, "feed.csv")
		require.NoError(t, os.WriteFile(feed, []byte("action,tn,lrn,spid,activated_at\n"+row+"\n"), 0o644))
		code, _, errs := runCmd(t, "apply", "--db", table, feed)
		require.Equal(t, 0, code, "feed %d: %s", i, errs)
	}
	code, out, errs := runCmd(t, "journal", "check", "--db", table)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "ok: 3 committed batches, 3 updates replay")

	jp := format.JournalPath(table)
	b, err := os.ReadFile(jp)
	require.NoError(t, err)
	b[16+30] ^= 1 // inside the first batch's update
	require.NoError(t, os.WriteFile(jp, b, 0o644))

	code, out, _ = runCmd(t, "journal", "check", "--db", table)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "DAMAGED")
	assert.Regexp(t, regexp.MustCompile(`offset \d+`), out)
	assert.Contains(t, out, "2 committed batches (2 updates) still verify")

	code, _, errs = runCmd(t, "lookup", "--db", table, "12025550198")
	assert.NotZero(t, code, "a damaged journal is not served")
	assert.Contains(t, errs, "journal damaged")
	code, _, _ = runCmd(t, "verify", "--db", table)
	assert.Zero(t, code, "the table itself is fine")

	code, out, errs = runCmd(t, "journal", "recover", "--db", table)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "kept: 2 committed batches, 2 updates")
	m := regexp.MustCompile(`set aside as (\S+)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	aside, err := os.ReadFile(m[1])
	require.NoError(t, err)
	assert.Equal(t, b, aside)
	code, out, errs = runCmd(t, "lookup", "--db", table, "12025550198")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"lrn":"12025569000"`)
}
