package httpapi

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newConventionsServer serves the handler of newServer through Conventions.
func newConventionsServer(t *testing.T, cfg ConventionsConfig) *server {
	t.Helper()
	s := newServer(t, unlimited)
	h, err := Conventions(s.h, cfg)
	require.NoError(t, err)
	s.Config.Handler = h
	return s
}

func gzipped(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, err := zw.Write([]byte(s))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return b.String()
}

// rawDo sends a request with the default transport's automatic gzip off, so
// that the test sees the wire.
func rawDo(t *testing.T, s *server, method, path, body string, hdr ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	res, err := tr.RoundTrip(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return response{res, b}
}

func TestGzipResponses(t *testing.T) {
	s := newConventionsServer(t, ConventionsConfig{})
	r := rawDo(t, s, "GET", "/openapi.json", "", "Accept-Encoding", "gzip")
	require.Equal(t, http.StatusOK, r.StatusCode)
	assert.Equal(t, "gzip", r.Header.Get("Content-Encoding"))
	assert.Less(t, len(r.body), len(OpenAPI())/3)
	zr, err := gzip.NewReader(bytes.NewReader(r.body))
	require.NoError(t, err)
	plain, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.Equal(t, OpenAPI(), plain)

	r = rawDo(t, s, "GET", "/openapi.json", "")
	assert.Empty(t, r.Header.Get("Content-Encoding"), "not asked")
	assert.Equal(t, OpenAPI(), r.body)

	// A single lookup's answer is never worth compressing, so it does not
	// vary with Accept-Encoding and says none; its largest form is well
	// under what gzhttp would compress.
	for _, path := range []string{"/api/v1/lrn", "/api/v1/cnam", "/api/v1/messaging", "/api/v1/trust"} {
		body := `{"phone_number":"12025550123","include_enhanced_lrn":true,"messaging_lookup":true}`
		if path != "/api/v1/lrn" {
			body = `{"phone_number":"12025550123"}`
		}
		r = rawDo(t, s, "POST", path, body, append(jsonKey, "Accept-Encoding", "gzip")...)
		require.Equal(t, http.StatusOK, r.StatusCode, path)
		assert.Empty(t, r.Header.Get("Content-Encoding"), path)
		assert.Empty(t, r.Header.Values("Vary"), path)
		assert.Less(t, len(r.body), gzhttp.DefaultMinSize/2, path)
	}
	// A single lookup sent gzip still goes through the decompression.
	r = rawDo(t, s, "POST", "/api/v1/lrn", gzipped(t, `{"phone_number":"12025550123"}`), append(jsonKey, "Content-Encoding", "gzip")...)
	require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
	assert.Contains(t, string(r.body), `"lrn":"1`)

	// A bulk answer is compressed when asked, and says it varies.
	var numbers []string
	for i := range 100 {
		numbers = append(numbers, fmt.Sprintf(`"120255501%02d"`, i))
	}
	bulk := `{"phone_numbers":[` + strings.Join(numbers, ",") + `],"include_enhanced_lrn":true}`
	r = rawDo(t, s, "POST", "/api/v1/lrn/bulk", bulk, append(jsonKey, "Accept-Encoding", "gzip")...)
	require.Equal(t, http.StatusOK, r.StatusCode)
	assert.Equal(t, "gzip", r.Header.Get("Content-Encoding"))
	assert.Contains(t, r.Header.Values("Vary"), "Accept-Encoding")
}

// TestCacheControl: a POST answer carries no Cache-Control, as no cache
// stores it (RFC 9110 §9.3.3: it would need explicit freshness and a
// Content-Location); any other JSON answer, errors included (a 404 is
// cacheable by default), says no-store.
func TestCacheControl(t *testing.T) {
	s := newConventionsServer(t, ConventionsConfig{})
	for _, c := range []struct {
		method, path, body string
		status             int
		cache              string
	}{
		{"POST", "/api/v1/lrn", `{"phone_number":"12025550123"}`, 200, ""},
		{"POST", "/api/v1/lrn", `{"phone_number":"1"}`, 400, ""},
		{"POST", "/api/v1/lrn/bulk", `{"phone_numbers":["12025550123"]}`, 200, ""},
		{"POST", "/graphql", `{"query":"{ lookupLrn(phoneNumber: \"12025550123\") { lrn } }"}`, 200, ""},
		{"GET", "/graphql?query=%7B%20lookupLrn(phoneNumber%3A%20%2212025550123%22)%20%7B%20lrn%20%7D%20%7D", "", 200, "no-store"},
		{"GET", "/api/v1/nothing", "", 404, "no-store"},
		{"GET", "/api/v1/lrn", "", 405, "no-store"},
	} {
		r := rawDo(t, s, c.method, c.path, c.body, jsonKey...)
		require.Equal(t, c.status, r.StatusCode, "%s %s: %s", c.method, c.path, r.body)
		assert.Equal(t, c.cache, r.Header.Get("Cache-Control"), "%s %s", c.method, c.path)
		assert.Equal(t, "nosniff", r.Header.Get("X-Content-Type-Options"), "%s %s", c.method, c.path)
	}
}

func TestGzipRequestBodies(t *testing.T) {
	s := newConventionsServer(t, ConventionsConfig{})
	plain := `{"phone_numbers":["12025550123","12025550124"],"include_enhanced_lrn":true}`
	want := rawDo(t, s, "POST", "/api/v1/lrn/bulk", plain, jsonKey...)
	require.Equal(t, http.StatusOK, want.StatusCode)
	r := rawDo(t, s, "POST", "/api/v1/lrn/bulk", gzipped(t, plain), append(jsonKey, "Content-Encoding", "gzip")...)
	require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
	assert.Equal(t, want.body, r.body)

	// The size limit applies to what the body decompresses to.
	bomb := `{"phone_numbers":["12025550123"],"pad":"` + strings.Repeat("0", MaxBodyBytes) + `"}`
	r = rawDo(t, s, "POST", "/api/v1/lrn/bulk", gzipped(t, bomb), append(jsonKey, "Content-Encoding", "gzip")...)
	checkErrorBody(t, r, http.StatusRequestEntityTooLarge, CodeInvalidRequest)

	r = rawDo(t, s, "POST", "/api/v1/lrn/bulk", "junk", append(jsonKey, "Content-Encoding", "gzip")...)
	checkErrorBody(t, r, http.StatusBadRequest, CodeInvalidRequest)
	r = rawDo(t, s, "POST", "/api/v1/lrn/bulk", plain, append(jsonKey, "Content-Encoding", "br")...)
	checkErrorBody(t, r, http.StatusUnsupportedMediaType, CodeInvalidRequest)
}

func TestRequestID(t *testing.T) {
	s := newConventionsServer(t, ConventionsConfig{})
	r := rawDo(t, s, "POST", "/api/v1/lrn", `{"phone_number":"12025550123"}`, append(jsonKey, "X-Request-ID", "abc-123")...)
	assert.Equal(t, "abc-123", r.Header.Get("X-Request-ID"))
	r2 := rawDo(t, s, "GET", "/api/v1/status", "")
	gen := r2.Header.Get("X-Request-ID")
	assert.NotEmpty(t, gen)
	r3 := rawDo(t, s, "GET", "/api/v1/status", "", "X-Request-ID", strings.Repeat("x", 200))
	assert.NotEqual(t, gen, r3.Header.Get("X-Request-ID"), "a new id for each request")
	assert.Len(t, r3.Header.Get("X-Request-ID"), len(gen), "an overlong id is replaced")
	require.Eventually(t, func() bool { return strings.Contains(s.logs.String(), `"request_id":"abc-123"`) }, 5*time.Second, 10*time.Millisecond)
	assert.Contains(t, s.logs.String(), `"request_id":"`+gen+`"`)
}

func TestCORS(t *testing.T) {
	preflight := []string{"Origin", "https://app.example", "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization,content-type"}
	t.Run("off by default", func(t *testing.T) {
		s := newConventionsServer(t, ConventionsConfig{})
		r := rawDo(t, s, "OPTIONS", "/api/v1/lrn", "", preflight...)
		checkErrorBody(t, r, http.StatusMethodNotAllowed, CodeMethodNotAllowed)
		assert.Empty(t, r.Header.Get("Access-Control-Allow-Origin"))
	})
	t.Run("allowed origin", func(t *testing.T) {
		s := newConventionsServer(t, ConventionsConfig{CORSOrigins: []string{"https://app.example"}})
		r := rawDo(t, s, "OPTIONS", "/api/v1/lrn", "", preflight...)
		assert.Equal(t, http.StatusNoContent, r.StatusCode)
		assert.Equal(t, "https://app.example", r.Header.Get("Access-Control-Allow-Origin"))
		assert.Contains(t, r.Header.Get("Access-Control-Allow-Methods"), "POST")
		assert.Contains(t, strings.ToLower(r.Header.Get("Access-Control-Allow-Headers")), "authorization")
		r = rawDo(t, s, "POST", "/api/v1/lrn", `{"phone_number":"12025550123"}`, append(jsonKey, "Origin", "https://app.example")...)
		assert.Equal(t, http.StatusOK, r.StatusCode)
		assert.Equal(t, "https://app.example", r.Header.Get("Access-Control-Allow-Origin"))
		assert.Contains(t, r.Header.Get("Access-Control-Expose-Headers"), "X-RateLimit-Remaining")
		r = rawDo(t, s, "POST", "/api/v1/lrn", `{"phone_number":"12025550123"}`, append(jsonKey, "Origin", "https://evil.example")...)
		assert.Empty(t, r.Header.Get("Access-Control-Allow-Origin"), "another origin")
	})
	t.Run("any origin", func(t *testing.T) {
		s := newConventionsServer(t, ConventionsConfig{CORSOrigins: []string{"*"}})
		r := rawDo(t, s, "OPTIONS", "/graphql", "", preflight...)
		assert.Equal(t, http.StatusNoContent, r.StatusCode)
		assert.Equal(t, "*", r.Header.Get("Access-Control-Allow-Origin"))
	})
}

func TestCacheableDocuments(t *testing.T) {
	s := newServer(t)
	for _, c := range []struct{ path, cache string }{{"/openapi.json", "public, max-age=300"}, {"/api/v1/status", "no-cache"}} {
		r := s.do(t, "GET", c.path, "")
		require.Equal(t, http.StatusOK, r.StatusCode)
		etag := r.Header.Get("ETag")
		assert.Regexp(t, `^W/"[0-9a-f]{24}"$`, etag, c.path)
		assert.Equal(t, c.cache, r.Header.Get("Cache-Control"))
		assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
		r = s.do(t, "GET", c.path, "", "If-None-Match", etag)
		assert.Equal(t, http.StatusNotModified, r.StatusCode, c.path)
		assert.Empty(t, r.body)
		r = s.do(t, "GET", c.path, "", "If-None-Match", `W/"other"`)
		assert.Equal(t, http.StatusOK, r.StatusCode)
	}
	// The status's tag follows the table.
	before := s.do(t, "GET", "/api/v1/status", "").Header.Get("ETag")
	old := s.h.tables.(*Table).Swap(nil)
	t.Cleanup(func() { s.h.tables.(*Table).Swap(old) })
	r := s.do(t, "GET", "/api/v1/status", "")
	assert.Equal(t, http.StatusServiceUnavailable, r.StatusCode)
	assert.Empty(t, r.Header.Get("ETag"))
	s.h.tables.(*Table).Swap(old)
	assert.Equal(t, before, s.do(t, "GET", "/api/v1/status", "").Header.Get("ETag"))
}

// TestGzipAdminFeed: an update feed sent gzipped through Conventions, as
// lnpdb serve mounts the admin API, applies as the plain one does.
func TestGzipAdminFeed(t *testing.T) {
	s := newAdminServer(t)
	h, err := Conventions(s.Config.Handler, ConventionsConfig{})
	require.NoError(t, err)
	s.Config.Handler = h
	feed := "action,tn,lrn,spid,activated_at\nU,2025550123,7327370999,0987,2026-11-20T10:00:00Z\n"
	r := s.do(t, http.MethodPost, "/admin/v1/updates", gzipped(t, feed),
		"Content-Type", "text/csv", "Content-Encoding", "gzip", "Authorization", "Bearer "+adminKey)
	require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
	assert.Equal(t, 1.0, r.json(t)["applied"])
	assert.Equal(t, "17327370999", s.lrnOf(t, "12025550123"))
}

// TestHeaderIsGet: header reads what Header.Get reads for the canonical
// keys it is given.
func TestHeaderIsGet(t *testing.T) {
	h := http.Header{}
	h.Add("content-type", "application/json")
	h.Add("X-REQUEST-ID", "a")
	h.Add("X-Request-Id", "b")
	h["Origin"] = []string{}
	for _, k := range []string{"Content-Type", "X-Request-Id", "Origin", "Authorization", "Accept", "Content-Encoding"} {
		assert.Equal(t, h.Get(k), header(h, k), k)
	}
	assert.Equal(t, "application/json", header(h, "Content-Type"))
}
