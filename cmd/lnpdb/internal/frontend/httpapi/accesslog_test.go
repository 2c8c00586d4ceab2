package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzAccessLogJSON: the access log line written without slog is, byte for
// byte, the line slog.NewJSONHandler writes for the same record, and it is
// written so for every request whose strings are plain ASCII.
func FuzzAccessLogJSON(f *testing.F) {
	f.Add("POST", "/api/v1/lrn", "c0269d17", "127.0.0.1:52086", "df64fd70bb5d-1zbl", true, 200, int64(9374), 267, int64(1795545799), int64(433556047), 0)
	f.Add("GET", "/api/v1/status", "", "[::1]:1", "", false, 404, int64(0), 0, int64(0), int64(0), 3600)
	f.Add("POST", "/api/v1/lrn/\u00e9\u2028", "k", "r", "a\"b\\c", true, 500, int64(-1), -1, int64(-62167219200), int64(1), -19800)
	f.Add("PO\x00ST", strings.Repeat("/x", 150), "\xff", "r\n", "<&>", true, 999, int64(1)<<62, 1<<40, int64(253402300800), int64(999999999), 50400)
	f.Fuzz(func(t *testing.T, method, path, key, remote, id string, hasID bool, status int, dur int64, n int, sec, nsec int64, offset int) {
		r := &http.Request{Method: method, URL: &url.URL{Path: path}, RemoteAddr: remote, Header: http.Header{}}
		if hasID {
			r.Header["X-Request-Id"] = []string{id}
		}
		rec := &recorder{status: status, bytes: n, keyID: key}
		if n&1 == 1 { // traced: the ids from the other inputs' bits
			rec.traced = true
			for i := range rec.traceID {
				rec.traceID[i] = byte(sec >> (i % 8 * 8))
			}
			for i := range rec.spanID {
				rec.spanID[i] = byte(nsec >> (i * 8))
			}
		}
		end := time.Unix(sec, nsec).In(time.FixedZone("z", offset%(18*3600)))
		d := time.Duration(dur)

		got, ok := appendAccessJSON([]byte("kept"), rec, r, end, d)
		var want bytes.Buffer
		want.WriteString("kept")
		require.NoError(t, slog.NewJSONHandler(&want, LogOptions(nil)).Handle(context.Background(), accessRecord(rec, r, end, d)))
		if ok {
			require.Equal(t, want.String(), string(got))
		} else {
			require.Equal(t, "kept", string(got), "a line refused is not begun")
		}
		plain := plainASCII(clip(method)) && plainASCII(clip(path)) && plainASCII(key) && plainASCII(remote) &&
			(!hasID || plainASCII(clip(id))) && end.Year() >= 0 && end.Year() < 10000
		require.Equal(t, plain, ok, "plain strings are written without slog, and only they")
	})
}

// TestAccessLogTo: with AccessLogTo the access log goes there, one JSON
// line per request, not through Logger, in both of its ways: plain (the
// usual request) and through slog (a path that is not plain ASCII).
func TestAccessLogTo(t *testing.T) {
	var access, other bytes.Buffer
	s := newServer(t, func(c *Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&other, nil))
		c.AccessLogTo = &access
	})
	s.post(t, "/api/v1/lrn", `{"phone_number":"12025550123"}`)
	r := s.do(t, http.MethodGet, "/api/v1/\u00e9t\u00e9", "")
	require.Equal(t, http.StatusNotFound, r.StatusCode)
	assert.NotContains(t, other.String(), `"msg":"request"`)

	lines := strings.Split(strings.TrimSuffix(access.String(), "\n"), "\n")
	require.Len(t, lines, 2)
	for i, want := range []struct {
		method, path string
		status       float64
	}{{"POST", "/api/v1/lrn", 200}, {"GET", "/api/v1/\u00e9t\u00e9", 404}} {
		var entry map[string]any
		require.NoError(t, json.Unmarshal([]byte(lines[i]), &entry), lines[i])
		assert.Equal(t, "request", entry["msg"])
		assert.Equal(t, want.method, entry["method"])
		assert.Equal(t, want.path, entry["path"])
		assert.Equal(t, want.status, entry["status"])
		ts, err := time.Parse(time.RFC3339Nano, entry["time"].(string))
		require.NoError(t, err)
		assert.WithinDuration(t, time.Now(), ts, time.Minute)
		assert.NotContains(t, entry, "request_id", "no request id was sent or made")
	}
}
