package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format/build"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// tableServer is an admin server over a table of its own, in a directory
// where the test may replace it.
func tableServer(t *testing.T) (*adminServer, string) {
	t.Helper()
	db, path := testdb.OpenFile(t, lnpdb.Sample())
	return newAdminServerOn(t, db), path
}

func unzstd(t *testing.T, b []byte) []byte {
	t.Helper()
	d, err := zstd.NewReader(nil)
	require.NoError(t, err)
	defer d.Close()
	out, err := d.DecodeAll(b, nil)
	require.NoError(t, err)
	return out
}

func TestAdminTable(t *testing.T) {
	s, path := tableServer(t)
	file, err := os.ReadFile(path)
	require.NoError(t, err)
	auth := []string{"Authorization", "Bearer " + adminKey}

	r := s.do(t, http.MethodGet, "/admin/v1/table", "", auth...)
	require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
	assert.True(t, bytes.Equal(file, r.body), "the body is the table file")
	etag := r.Header.Get("Etag")
	assert.Regexp(t, `^"[0-9a-f]{16}"$`, etag)
	assert.Equal(t, "no-cache", r.Header.Get("Cache-Control"))
	// The status names the served table by the same identity.
	st := s.do(t, http.MethodGet, "/api/v1/status", "")
	require.Equal(t, http.StatusOK, st.StatusCode, "%s", st.body)
	var status struct {
		Table struct {
			ID string `json:"id"`
		} `json:"table"`
	}
	require.NoError(t, json.Unmarshal(st.body, &status))
	assert.Equal(t, strings.Trim(etag, `"`), status.Table.ID, "status table.id is the table's ETag")

	r = s.do(t, http.MethodGet, "/admin/v1/table", "", append(auth, "If-None-Match", etag)...)
	assert.Equal(t, http.StatusNotModified, r.StatusCode)
	assert.Empty(t, r.body)
	r = s.do(t, http.MethodGet, "/admin/v1/table", "", append(auth, "If-None-Match", `"0000000000000000"`)...)
	assert.Equal(t, http.StatusOK, r.StatusCode)

	r = s.do(t, http.MethodGet, "/admin/v1/table", "", append(auth, "Range", "bytes=0-63")...)
	assert.Equal(t, http.StatusPartialContent, r.StatusCode)
	assert.Equal(t, file[:64], r.body)

	// Compressed: as a .zst file, and as a content encoding; each has an
	// ETag of its own that 304s.
	for name, hdr := range map[string][]string{
		"?zstd=1":               nil,
		"Accept-Encoding: zstd": {"Accept-Encoding", "gzip, zstd"},
	} {
		t.Run(name, func(t *testing.T) {
			p := "/admin/v1/table"
			if hdr == nil {
				p += "?zstd=1"
			}
			r := s.do(t, http.MethodGet, p, "", append(append([]string{}, auth...), hdr...)...)
			require.Equal(t, http.StatusOK, r.StatusCode)
			if hdr == nil {
				assert.Equal(t, "application/zstd", r.Header.Get("Content-Type"))
			} else {
				assert.Equal(t, "zstd", r.Header.Get("Content-Encoding"))
			}
			assert.Less(t, len(r.body), len(file))
			assert.True(t, bytes.Equal(file, unzstd(t, r.body)))
			zetag := r.Header.Get("Etag")
			assert.NotEqual(t, etag, zetag)
			r = s.do(t, http.MethodGet, p, "", append(append(append([]string{}, auth...), hdr...), "If-None-Match", zetag)...)
			assert.Equal(t, http.StatusNotModified, r.StatusCode)
		})
	}

	// A replaced file has another ETag; one that is not a table is not
	// sent.
	other := filepath.Join(filepath.Dir(path), "other.lnpdb")
	_, err = build.Build(context.Background(), lnpdb.Sample(), other, build.Options{BuiltAt: testdb.BuiltAt.Add(time.Hour)})
	require.NoError(t, err)
	require.NoError(t, os.Rename(other, path))
	r = s.do(t, http.MethodGet, "/admin/v1/table", "", append(auth, "If-None-Match", etag)...)
	require.Equal(t, http.StatusOK, r.StatusCode)
	assert.NotEqual(t, etag, r.Header.Get("Etag"))
	require.NoError(t, os.WriteFile(path+".x", []byte(strings.Repeat("not a table", 100)), 0o644))
	require.NoError(t, os.Rename(path+".x", path))
	checkErrorBody(t, s.do(t, http.MethodGet, "/admin/v1/table", "", auth...), http.StatusServiceUnavailable, CodeUnavailable)
}

func TestAdminTableNeedsAdminKey(t *testing.T) {
	s, _ := tableServer(t)
	checkErrorBody(t, s.do(t, http.MethodGet, "/admin/v1/table", ""), http.StatusUnauthorized, CodeMissingAPIKey)
	checkErrorBody(t, s.do(t, http.MethodGet, "/admin/v1/table", "", "Authorization", "Bearer "+testKey), http.StatusForbidden, CodeForbidden)
	checkErrorBody(t, s.do(t, http.MethodPost, "/admin/v1/table", "", "Authorization", "Bearer "+adminKey), http.StatusMethodNotAllowed, CodeMethodNotAllowed)
}

// The answers of GET /admin/v1/table are the ones openapi.json describes.
func TestAdminTableOpenAPI(t *testing.T) {
	doc := openAPIDoc(t)
	s, path := tableServer(t)
	auth := "Bearer " + adminKey
	ok := s.do(t, http.MethodGet, "/admin/v1/table", "", "Authorization", auth)
	require.Equal(t, http.StatusOK, ok.StatusCode)
	for _, c := range []struct {
		method, query string
		hdr           []string
		status        int
	}{
		{"GET", "", []string{"Authorization", auth}, 200},
		{"GET", "?zstd=1", []string{"Authorization", auth}, 200},
		{"GET", "", []string{"Authorization", auth, "If-None-Match", ok.Header.Get("Etag")}, 304},
		{"GET", "", []string{"Authorization", auth, "Range", "bytes=0-9"}, 206},
		{"GET", "", nil, 401},
		{"PUT", "", []string{"Authorization", auth}, 405},
		{"GET", "", []string{"Authorization", auth}, 503}, // after the file is cut short
	} {
		if c.status == 503 {
			require.NoError(t, os.Truncate(path, 10))
		}
		r := s.do(t, c.method, "/admin/v1/table"+c.query, "", c.hdr...)
		req, res, body := r.Request, r.Response, r.body
		require.Equal(t, c.status, res.StatusCode, "%s %s %v", c.method, c.query, c.hdr)
		validateAnswer(t, doc, req, res, body, "")
	}
}

// FuzzTableETag feeds the ETag reader any file start: it must not panic,
// and it names only what starts as a table of the size it was told.
func FuzzTableETag(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte, extra uint16) {
		size := int64(len(b))
		etag, err := tableETag(bytes.NewReader(b), size)
		if err != nil {
			return
		}
		assert.Regexp(t, `^"[0-9a-f]{16}"$`, etag)
		assert.Equal(t, "LNPDB\r\n\x1a", string(b[:8]), "the table magic")
		// The same bytes give the same ETag; a file said to be longer
		// than its header says gives none.
		again, err := tableETag(bytes.NewReader(b), size)
		require.NoError(t, err)
		assert.Equal(t, etag, again)
		_, err = tableETag(bytes.NewReader(b), size+1+int64(extra))
		assert.Error(t, err)
	})
}
