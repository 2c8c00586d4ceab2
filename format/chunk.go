package format

import "io"

// chunkSize is the unit in which a table file reaches the page cache: a
// huge page, 2 MiB.
const chunkSize = hugePageSize

// chunkWriter is a buffered writer for a file written from its start that
// hands the file whole chunkSize-aligned chunks: every write it makes but
// the one a Flush forces ends on a chunk boundary. A kernel whose page
// cache holds files in large folios (Linux 6.18 on ext4 does) then caches
// each chunk as one 2 MiB folio, which a mapping of the file uses with one
// huge-page TLB entry; smaller writes (a 1 MiB bufio.Writer's) leave
// smaller folios, mapped in 4 KiB pages. A table
// read back from disk gets the same from readahead (Open advises
// MADV_HUGEPAGE); chunkWriter gives it to a table straight from build or
// install, still in the page cache.
type chunkWriter struct {
	w   io.Writer
	off int64  // file offset of buf[0]
	buf []byte // at most up to the next chunk boundary
}

func newChunkWriter(w io.Writer) *chunkWriter {
	return &chunkWriter{w: w, buf: make([]byte, 0, chunkSize)}
}

// Write buffers p, writing out each chunk it completes.
func (c *chunkWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		room := chunkSize - int((c.off+int64(len(c.buf)))%chunkSize)
		k := min(room, len(p))
		c.buf = append(c.buf, p[:k]...)
		p, n = p[k:], n+k
		if k == room {
			if err := c.Flush(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// Flush writes out what is buffered. The writes after it still end on
// chunk boundaries: only the chunk it cut is cached in smaller folios.
func (c *chunkWriter) Flush() error {
	if len(c.buf) == 0 {
		return nil
	}
	m, err := c.w.Write(c.buf)
	c.off += int64(m)
	c.buf = c.buf[:copy(c.buf, c.buf[m:])]
	if err == nil && len(c.buf) > 0 {
		err = io.ErrShortWrite
	}
	return err
}
