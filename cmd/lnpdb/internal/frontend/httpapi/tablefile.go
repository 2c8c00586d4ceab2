package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/lnpdb/lnpdb/format"
)

// GET /admin/v1/table makes any server an origin for the others: it streams
// the table file at the served path, with a strong ETag, so that a node
// running `serve --db-url` (or `lnpdb pull`) fetches it only when it
// changed. The file alone is sent, not its journal: pending updates reach
// the other nodes once a compaction has folded them into the file.
//
// The ETag is the xxhash64 of the file's header and section directory,
// which hold its size, build time and every section's checksum: it names
// the content, costs two small reads, and two origins serving the same file
// give the same one. With ?zstd=1 the body is a zstd frame (Content-Type
// application/zstd, as a us.lnpdb.zst file is); with Accept-Encoding: zstd
// it is the table with Content-Encoding: zstd. Either is compressed on the
// fly, and has an ETag of its own. The identity body honours Range too.

// tableSendRate is the slowest a table download may proceed on average
// before the server gives up on it: the write deadline is set from the
// file's size.
const tableSendRate = 1 << 20 // bytes per second

var errTableUnreadable = &apiError{http.StatusServiceUnavailable, errorBody{
	"Service unavailable", CodeUnavailable,
	"The table file cannot be read as a table right now; retry shortly"}}

// routeTable registers GET /admin/v1/table.
func (a *Admin) routeTable() {
	const path = "/admin/v1/table"
	a.mux.handle("GET "+path, &route{path, a.table})
	a.mux.handle(path, &route{path, notAllowed(hdrGet, errMethodNotAllowedGet)})
}

func (a *Admin) table(w *recorder, r *http.Request) {
	db := a.authorizedTable(w, r)
	if db == nil {
		return
	}
	// The file at the path, not the mapping: it is what a reload would
	// map, and it only ever changes by a rename of a verified file.
	path := db.Path()
	f, err := os.Open(path)
	if err != nil {
		a.log.LogAttrs(r.Context(), slog.LevelError, "table download: cannot open the table file", slog.String("error", err.Error()))
		writeError(w, errTableUnreadable)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	var etag string
	if err == nil {
		etag, err = tableETag(f, fi.Size())
	}
	if err != nil {
		a.log.LogAttrs(r.Context(), slog.LevelError, "table download: the table file is not readable as a table", slog.String("table", path), slog.String("error", err.Error()))
		writeError(w, errTableUnreadable)
		return
	}

	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(time.Minute + time.Duration(fi.Size()/tableSendRate)*time.Second))
	h := w.Header()
	h.Set("Vary", "Accept-Encoding")
	h.Set("Cache-Control", "no-cache") // a cache must revalidate: the table changes under the same URL
	asFile := r.URL.Query().Get("zstd") == "1"
	if !asFile && !acceptsZstd(r.Header.Get("Accept-Encoding")) {
		h.Set("Etag", etag)
		h.Set("Content-Type", "application/octet-stream")
		// ServeContent answers If-None-Match, HEAD and Range, and copies
		// with sendfile through the connection's ReadFrom.
		http.ServeContent(tableWriter{w}, r, "", fi.ModTime(), f)
		return
	}
	etag = strings.TrimSuffix(etag, `"`) + `-zstd"`
	h.Set("Etag", etag)
	if asFile {
		h.Set("Content-Type", "application/zstd")
	} else {
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Encoding", "zstd")
	}
	if noneMatch(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	enc, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err == nil {
		_, err = enc.ReadFrom(f)
		if cerr := enc.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		// The client gets a cut-short stream, which it refuses.
		a.log.LogAttrs(r.Context(), slog.LevelWarn, "table download cut short", slog.String("table", path),
			slog.Int("bytes", w.bytes), slog.String("error", err.Error()))
	}
}

// tableWriter lets http.ServeContent reach the connection's ReadFrom
// (sendfile) while the recorder still counts the bytes.
type tableWriter struct{ *recorder }

func (w tableWriter) ReadFrom(src io.Reader) (int64, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	rf, ok := w.ResponseWriter.(io.ReaderFrom)
	if !ok {
		return io.Copy(struct{ io.Writer }{w.recorder}, src)
	}
	n, err := rf.ReadFrom(src)
	w.bytes += int(n)
	return n, err
}

// tableETag returns the strong ETag of the table file of size bytes read
// from f: its format.FileID, quoted. It reads only the header and section
// directory.
func tableETag(f io.ReaderAt, size int64) (string, error) {
	id, err := format.FileID(f, size)
	if err != nil {
		return "", err
	}
	return `"` + id + `"`, nil
}

// acceptsZstd reports whether an Accept-Encoding header accepts zstd.
func acceptsZstd(h string) bool {
	for part := range strings.SplitSeq(h, ",") {
		name, params, _ := strings.Cut(part, ";")
		if !strings.EqualFold(strings.TrimSpace(name), "zstd") {
			continue
		}
		if k, v, ok := strings.Cut(strings.TrimSpace(params), "="); ok && strings.TrimSpace(k) == "q" {
			if q, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && q == 0 {
				return false
			}
		}
		return true
	}
	return false
}

// noneMatch reports whether an If-None-Match header names etag (weak
// comparison, as RFC 9110 has it for If-None-Match) or is "*".
func noneMatch(h, etag string) bool {
	for part := range strings.SplitSeq(h, ",") {
		t := strings.TrimPrefix(strings.TrimSpace(part), "W/")
		if t == "*" || t == strings.TrimPrefix(etag, "W/") {
			return true
		}
	}
	return false
}
