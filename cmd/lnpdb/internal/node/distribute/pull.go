// Package distribute brings a table from an origin to this node over
// HTTP(S): another lnpdb server's GET /admin/v1/table, an object store's or
// a CDN's URL. It owns the fetch and nothing else: Pull fetches once, only
// when the origin has a table other than the one fetched last (the ETag is
// remembered beside the table, as geoipupdate does for MaxMind files), and
// installs it with format.Install — written beside the path, verified, then
// renamed over it; a Poller repeats Pull and reports in metrics and a
// status. A server mapping the path reloads the new file on its own.
//
// A body is zstd-decompressed while it is written when the origin says so
// (Content-Encoding: zstd, Content-Type: application/zstd) or the URL's
// path ends in ".zst"; gzip is undone by net/http.
//
// An origin is not trusted to be well behaved: the table is judged as it
// arrives (format.InstallFrom: its header first, then exactly the size the
// header declares, nothing past it), the bytes on the wire and the table's
// size are capped by Options.MaxBytes, a zstd window is capped, a pull has
// an overall deadline and must receive a minimum of bytes in every stall
// period. A refused pull leaves no file and the old table in place.
package distribute

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/core/atomicfile"
	"github.com/lnpdb/lnpdb/internal/core/vfs"
	"github.com/lnpdb/lnpdb/internal/ingest/progress"
)

// Options refine Pull.
type Options struct {
	// Client makes the request; nil means DefaultClient.
	Client *http.Client
	// Key, when set, is sent as "Authorization: Bearer Key" (an admin key
	// of an lnpdb origin).
	Key string
	// Progress, when a terminal, shows the download's progress.
	Progress io.Writer
	// StallTimeout and MinProgress give up on a download that receives
	// fewer than MinProgress bytes in any StallTimeout: a trickle holds a
	// pull no longer than an idle origin. Zero means DefaultStallTimeout
	// and DefaultMinProgress.
	StallTimeout time.Duration
	MinProgress  int64
	// Timeout bounds the whole pull, from the request to the installed
	// table; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxBytes, when positive, caps both the bytes received and the
	// table's size (decompressed): a larger table is refused at its
	// header, before anything is written.
	MaxBytes int64
}

// Defaults of Options: a download that receives less than 64 KiB in 30 s
// is given up, and a pull lasts at most an hour.
const (
	DefaultStallTimeout = 30 * time.Second
	DefaultMinProgress  = 64 << 10
	DefaultTimeout      = time.Hour
)

// maxZstdWindow caps the window a zstd stream may ask the decoder for (the
// zstd tool's own default cap, --long=27): a frame asking for more is
// refused rather than allocated.
const maxZstdWindow = 128 << 20

// DefaultClient is the client Pull uses without one: it bounds connecting
// and waiting for the answer's headers, not the download, which may be
// gigabytes (StallTimeout bounds that).
var DefaultClient = &http.Client{Transport: &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	TLSHandshakeTimeout:   30 * time.Second,
	ResponseHeaderTimeout: time.Minute,
	ForceAttemptHTTP2:     true,
	IdleConnTimeout:       90 * time.Second,
}}

// Result is what one Pull did.
type Result struct {
	// NotModified: the origin has the table fetched last (304); nothing
	// changed.
	NotModified bool
	// ETag is the origin's ETag of the table now at the path ("" when it
	// sent none).
	ETag string
	// Bytes is how many body bytes were received, compressed or not.
	Bytes int64
	// Info describes the table installed; zero when NotModified.
	Info format.Info
}

// ETagPath is where Pull remembers the ETag of the table it installed at
// path.
func ETagPath(path string) string { return path + ".etag" }

// Pull fetches the table at rawURL and installs it at path, unless the
// origin answers that the table installed last by Pull is still current. A
// table that does not arrive whole and valid leaves path as it was, and no
// temporary file.
func Pull(ctx context.Context, rawURL, path string, opt Options) (Result, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Result{}, fmt.Errorf("table URL %q: want an http:// or https:// URL", rawURL)
	}
	client := opt.Client
	if client == nil {
		client = DefaultClient
	}
	stall, minProgress, timeout := opt.StallTimeout, opt.MinProgress, opt.Timeout
	if stall <= 0 {
		stall = DefaultStallTimeout
	}
	if minProgress <= 0 {
		minProgress = DefaultMinProgress
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	deadline := time.AfterFunc(timeout, func() { cancel(fmt.Errorf("the pull took longer than %s", timeout)) })
	defer deadline.Stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Result{}, fmt.Errorf("table URL %s: %w", redact(u), err)
	}
	if opt.Key != "" {
		req.Header.Set("Authorization", "Bearer "+opt.Key)
	}
	// The ETag counts only while the table it names is in place.
	var etag string
	if _, err := os.Stat(path); err == nil {
		etag = readETag(path)
	}
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	res, err := client.Do(req)
	if err != nil {
		return Result{}, fmt.Errorf("fetching %s: %w", redact(u), err)
	}
	defer res.Body.Close()
	switch res.StatusCode {
	case http.StatusNotModified:
		return Result{NotModified: true, ETag: etag}, nil
	case http.StatusOK:
	default:
		snippet, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		return Result{}, fmt.Errorf("fetching %s: %s: %s", redact(u), res.Status, strings.TrimSpace(string(snippet)))
	}

	if opt.MaxBytes > 0 && res.ContentLength > opt.MaxBytes {
		return Result{}, fmt.Errorf("fetching %s: the origin announces %d bytes, more than the %d allowed", redact(u), res.ContentLength, opt.MaxBytes)
	}
	body := &watchedReader{r: res.Body, max: opt.MaxBytes}
	body.watch(stall, minProgress, cancel)
	defer body.stop()
	body.bar = progress.New(opt.Progress, "pull "+filepath.Base(path), res.ContentLength)
	var r io.Reader = body
	switch enc := strings.ToLower(strings.TrimSpace(res.Header.Get("Content-Encoding"))); {
	case enc == "zstd", enc == "" && (isZstdType(res.Header.Get("Content-Type")) || strings.HasSuffix(u.Path, ".zst")):
		zr, err := zstd.NewReader(body, zstd.WithDecoderMaxWindow(maxZstdWindow), zstd.WithDecoderMaxMemory(maxZstdWindow))
		if err != nil {
			return Result{}, err
		}
		defer zr.Close()
		r = zr
	case enc == "" || enc == "identity":
	default:
		return Result{}, fmt.Errorf("fetching %s: unsupported Content-Encoding %q (want zstd or none)", redact(u), enc)
	}
	info, err := format.InstallFrom(path, r, format.InstallOptions{MaxBytes: opt.MaxBytes})
	body.bar.Done()
	if err != nil {
		if cause := context.Cause(ctx); ctx.Err() != nil && !errors.Is(err, cause) {
			err = fmt.Errorf("%w (%w)", err, cause)
		}
		return Result{Bytes: body.n.Load()}, fmt.Errorf("fetching %s: %w", redact(u), err)
	}
	newTag := res.Header.Get("Etag")
	if err := writeETag(path, newTag); err != nil {
		// The table is in place; the next Pull fetches it once more.
		return Result{ETag: newTag, Bytes: body.n.Load(), Info: info}, fmt.Errorf("table installed at %s, but remembering its ETag failed: %w", path, err)
	}
	return Result{ETag: newTag, Bytes: body.n.Load(), Info: info}, nil
}

func isZstdType(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "application/zstd" || mt == "application/x-zstd"
}

// redact drops the credentials and the query of u (a signed object-store
// URL carries its signature there) for messages and logs.
func redact(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery = ""
	c.Fragment = ""
	return c.String()
}

// Redact is rawURL without credentials or query, for logs and status.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(unparsable URL)"
	}
	return redact(u)
}

func readETag(path string) string {
	b, err := os.ReadFile(ETagPath(path))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// writeETag remembers etag beside path through atomicfile, so that it is
// whole; an empty etag removes the file.
func writeETag(path, etag string) error {
	p := ETagPath(path)
	if etag == "" {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	err := atomicfile.Write(vfs.Default, p, func(f vfs.File) error {
		_, err := f.Write([]byte(etag + "\n"))
		return err
	}, atomicfile.Options{})
	if errors.Is(err, atomicfile.ErrDirSync) {
		return nil // in place; a crash may bring the older one back: one more fetch
	}
	return err
}

// errTooMuch reports a body larger than Options.MaxBytes.
var errTooMuch = errors.New("the origin sent more than allowed")

// watchedReader counts what it reads, shows progress, refuses to read past
// max, and gives the pull up when a stall period receives too little.
type watchedReader struct {
	r    io.Reader
	n    atomic.Int64
	max  int64
	bar  *progress.Bar
	tick *time.Ticker
	done chan struct{}
}

// watch checks every stall period that at least minProgress bytes came in
// it, and cancels the pull when not.
func (w *watchedReader) watch(stall time.Duration, minProgress int64, cancel context.CancelCauseFunc) {
	w.tick, w.done = time.NewTicker(stall), make(chan struct{})
	go func() {
		last := int64(0)
		for {
			select {
			case <-w.done:
				return
			case <-w.tick.C:
			}
			n := w.n.Load()
			if n-last < minProgress {
				cancel(fmt.Errorf("the origin sent %d bytes in the last %s, less than the %d required", n-last, stall, minProgress))
				return
			}
			last = n
		}
	}()
}

func (w *watchedReader) stop() {
	w.tick.Stop()
	close(w.done)
}

func (w *watchedReader) Read(p []byte) (int, error) {
	if w.max > 0 {
		left := w.max - w.n.Load()
		if left <= 0 {
			return 0, fmt.Errorf("%w: %d bytes", errTooMuch, w.max)
		}
		p = p[:min(int64(len(p)), left)]
	}
	n, err := w.r.Read(p)
	if n > 0 {
		w.n.Add(int64(n))
		w.bar.Add(int64(n))
	}
	return n, err
}
