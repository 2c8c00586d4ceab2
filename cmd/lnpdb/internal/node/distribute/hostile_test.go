package distribute_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/distribute"
)

// zeros is an endless stream of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// zstdBomb compresses n zero bytes: a few kilobytes that decompress to n.
func zstdBomb(t *testing.T, n int64) []byte {
	t.Helper()
	var b countingBuffer
	e, err := zstd.NewWriter(&b, zstd.WithEncoderLevel(zstd.SpeedFastest))
	require.NoError(t, err)
	_, err = io.Copy(e, io.LimitReader(zeros{}, n))
	require.NoError(t, err)
	require.NoError(t, e.Close())
	return b.b
}

type countingBuffer struct{ b []byte }

func (c *countingBuffer) Write(p []byte) (int, error) { c.b = append(c.b, p...); return len(p), nil }

// diskWatch samples, until stopped, the largest total size of the files in
// dir: what a pull wrote beside the table at most.
func diskWatch(t *testing.T, dir string) (stop func() int64) {
	var most atomic.Int64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			var sum int64
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if fi, err := e.Info(); err == nil {
					sum += fi.Size()
				}
			}
			if sum > most.Load() {
				most.Store(sum)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() int64 {
		close(done)
		<-finished
		return most.Load()
	}
}

// Hostile origins: each pull is refused, quickly, having written at most the
// size of a table beside the installed one, which stays, with no file left.
func TestPullHostileOrigins(t *testing.T) {
	old, table := buildTable(t, t0), buildTable(t, t0.Add(time.Hour))
	const big = 300 << 20
	bomb := zstdBomb(t, 256<<20) // 256 MiB of zeros
	var tableThenZeros []byte
	{
		var b countingBuffer
		e, err := zstd.NewWriter(&b, zstd.WithEncoderLevel(zstd.SpeedFastest))
		require.NoError(t, err)
		_, err = e.Write(table)
		require.NoError(t, err)
		_, err = io.Copy(e, io.LimitReader(zeros{}, 64<<20))
		require.NoError(t, err)
		require.NoError(t, e.Close())
		tableThenZeros = b.b
	}
	serve := func(body func() io.Reader, hdr ...string) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for i := 0; i+1 < len(hdr); i += 2 {
				w.Header().Set(hdr[i], hdr[i+1])
			}
			w.WriteHeader(http.StatusOK)
			// Flushed as it comes, as a trickling origin would.
			io.Copy(flushWriter{w}, body())
		}))
		t.Cleanup(s.Close)
		return s.URL
	}
	trickle := func(every time.Duration) func() io.Reader {
		return func() io.Reader {
			pr, pw := io.Pipe()
			go func() {
				defer pw.Close()
				if _, err := pw.Write(table[:64]); err != nil {
					return
				}
				for i := 64; i < len(table); i++ {
					time.Sleep(every)
					if _, err := pw.Write(table[i : i+1]); err != nil {
						return
					}
				}
			}()
			return pr
		}
	}
	bytesOf := func(b []byte) func() io.Reader { return func() io.Reader { return bytesReader(b) } }
	for _, c := range []struct {
		name    string
		url     string
		opt     distribute.Options
		want    string
		maxDisk int64
	}{
		{"zstd bomb (256 MiB of zeros)", serve(bytesOf(bomb), "Content-Type", "application/zstd"), distribute.Options{}, "bad magic", 0},
		{"table + 300 MB of zeros", serve(func() io.Reader { return io.MultiReader(bytesReader(table), io.LimitReader(zeros{}, big)) }), distribute.Options{}, "goes on past", int64(len(table))},
		{"zstd table + 64 MiB of zeros", serve(bytesOf(tableThenZeros), "Content-Encoding", "zstd"), distribute.Options{}, "goes on past", int64(len(table))},
		{"300 MB, bad magic", serve(func() io.Reader { return io.LimitReader(zeros{}, big) }), distribute.Options{}, "bad magic", 0},
		{"over --db-url-max-bytes", serve(bytesOf(table), "Content-Length", strconv.Itoa(len(table))), distribute.Options{MaxBytes: int64(len(table)) - 1}, "more than the", 0},
		{"over --db-url-max-bytes, no length", serve(bytesOf(table)), distribute.Options{MaxBytes: int64(len(table)) - 1}, "table larger than allowed", 0},
		{"trickle", serve(trickle(50 * time.Millisecond)), distribute.Options{StallTimeout: 300 * time.Millisecond, MinProgress: 64}, "less than the 64 required", int64(len(table))},
		{"slow past the deadline", serve(trickle(time.Millisecond)), distribute.Options{StallTimeout: 200 * time.Millisecond, MinProgress: 1, Timeout: 700 * time.Millisecond}, "the pull took longer than 700ms", int64(len(table))},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "us.lnpdb")
			require.NoError(t, os.WriteFile(path, old, 0o644))
			before := int64(len(old))
			stop := diskWatch(t, dir)
			start := time.Now()
			res, err := distribute.Pull(context.Background(), c.url, path, c.opt)
			took := time.Since(start)
			most := stop() - before
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			t.Logf("refused in %v; received %d bytes; at most %d bytes beside the table: %v", took.Round(time.Millisecond), res.Bytes, most, err)
			assert.LessOrEqual(t, most, c.maxDisk, "bytes written beside the table")
			assert.Less(t, took, 5*time.Second)
			fileIs(t, path, old)
			noTemps(t, dir)
		})
	}
}

func bytesReader(b []byte) io.Reader { return &sliceReader{b: b} }

type sliceReader struct{ b []byte }

func (r *sliceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

type flushWriter struct{ w http.ResponseWriter }

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	f.w.(http.Flusher).Flush()
	return n, err
}
