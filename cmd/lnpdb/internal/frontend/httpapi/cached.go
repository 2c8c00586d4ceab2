package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"time"
)

// The documents served without a key are cacheable: the OpenAPI document
// changes only with the binary, the status with the table.
var (
	hdrCacheOpenAPI = []string{"public, max-age=300"}
	hdrCacheStatus  = []string{"no-cache"} // revalidate: a reload changes it
	openAPIETag     = []string{etagOf(openAPI)}
)

// etagOf returns a weak entity tag of body: weak, because a compressed
// representation carries the same tag.
func etagOf(body []byte) string {
	sum := sha256.Sum256(body)
	return `W/"` + hex.EncodeToString(sum[:12]) + `"`
}

// serveCacheable answers GET or HEAD with body, its ETag and Cache-Control,
// and 304 Not Modified to a matching If-None-Match (http.ServeContent).
func serveCacheable(w http.ResponseWriter, r *http.Request, body []byte, etag, cacheControl []string) {
	h := w.Header()
	h["Content-Type"] = hdrJSON
	h["X-Content-Type-Options"] = hdrNoSniff
	h["Etag"] = etag
	h["Cache-Control"] = cacheControl
	if r.Method == http.MethodHead && r.Header.Get("If-None-Match") == "" {
		// The body as for GET: net/http sends none for HEAD but counts it
		// for Content-Length, and a recorder sees what GET would.
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
		return
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

func serveOpenAPI(w *recorder, r *http.Request) {
	serveCacheable(w, r, openAPI, openAPIETag, hdrCacheOpenAPI)
}

// serveStatus answers the status body v with an ETag of its bytes.
func serveStatus(w *recorder, r *http.Request, v any) {
	var buf bytes.Buffer
	if err := newJSONEncoder(&buf).Encode(v); err != nil {
		writeError(w, errInternal) // only a bug gets here
		return
	}
	b := buf.Bytes()
	serveCacheable(w, r, b, []string{etagOf(b)}, hdrCacheStatus)
}
