// Package lineio is the one reader of text lines for every text input lnpdb
// reads — the source files, NPAC files and update feeds, the numbering
// reports and the keys files — plain or decompressed: lines end in LF, CR
// or CRLF, a UTF-8 byte order mark before the first is dropped, and a line
// longer than [Max] bytes is an error for that line, found in bounded
// memory (the reader never holds more than Max bytes of a line, however
// long it runs) and passed over, so that the caller may refuse it and go
// on with the next line. Standard library only.
package lineio

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
)

// Max is the longest line, in bytes without its end: 1 MiB. The longest
// real record (an NPAC subscription version) is a few hundred bytes.
const Max = 1 << 20

// bufSize is the read buffer: large enough that a read is a few rows' worth
// of syscalls less, small enough not to matter.
const bufSize = 64 << 10

// ErrTooLong is the cause of a [TooLongError].
var ErrTooLong = errors.New("line too long")

// TooLongError is a line longer than the reader's bound. The reader has
// passed over the whole line: the next call of Next reads the line after it.
type TooLongError struct {
	Line int // 1-based
	Max  int
}

func (e *TooLongError) Error() string {
	return "line longer than " + strconv.Itoa(e.Max) + " bytes"
}

// Unwrap returns ErrTooLong.
func (e *TooLongError) Unwrap() error { return ErrTooLong }

// Reader reads lines from an io.Reader.
type Reader struct {
	br     *bufio.Reader
	buf    []byte // a line that crosses the end of br's buffer
	max    int
	line   int
	skipLF bool // the last line ended in CR: an LF next ends it too
	begun  bool // a byte order mark was looked for
	// skipping: a line was refused as too long before its end, which the
	// next call passes over
	skipping bool
	err      error
}

// NewReader returns a Reader of r whose lines may be up to Max bytes.
func NewReader(r io.Reader) *Reader { return NewReaderMax(r, Max) }

// NewReaderMax is NewReader with another bound (tests use small ones).
func NewReaderMax(r io.Reader, max int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, bufSize), max: max}
}

// Line returns the 1-based number of the line Next last returned (or
// refused).
func (r *Reader) Line() int { return r.line }

// Next returns the next line without its end. The slice is valid until the
// next call. At the end of the input it returns io.EOF. A line longer than
// the bound is a *TooLongError as soon as the bound is passed, having read
// no more of the line than that; the next call passes over the rest of it,
// so that a caller may refuse the line and go on. Any other error is the
// input's, and every later call returns it again.
func (r *Reader) Next() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	r.buf = r.buf[:0]
	if !r.begun {
		r.begun = true
		if b, _ := r.br.Peek(len(utf8BOM)); string(b) == utf8BOM {
			_, _ = r.br.Discard(len(utf8BOM))
		}
	}
	started := false
	for {
		if r.br.Buffered() == 0 {
			if _, err := r.br.Peek(1); err != nil {
				if err != io.EOF {
					r.err = err
					return nil, err
				}
				if !started || r.skipping {
					r.skipping = false
					return nil, io.EOF
				}
				r.line++
				return r.buf, nil
			}
		}
		data, _ := r.br.Peek(r.br.Buffered())
		if r.skipLF {
			r.skipLF = false
			if data[0] == '\n' {
				_, _ = r.br.Discard(1)
				continue
			}
		}
		i := lineEnd(data)
		if r.skipping {
			// The rest of a line refused as too long.
			if i < 0 {
				_, _ = r.br.Discard(len(data))
				continue
			}
			r.skipping, r.skipLF = false, data[i] == '\r'
			_, _ = r.br.Discard(i + 1)
			continue
		}
		started = true
		if i < 0 {
			if len(r.buf)+len(data) > r.max {
				// Refused at once: the rest is passed over by the next call.
				r.skipping = true
				return r.tooLong()
			}
			r.buf = append(r.buf, data...)
			_, _ = r.br.Discard(len(data))
			continue
		}
		r.skipLF = data[i] == '\r'
		line := data[:i]
		_, _ = r.br.Discard(i + 1)
		if len(r.buf)+len(line) > r.max {
			return r.tooLong()
		}
		if len(r.buf) > 0 {
			r.buf = append(r.buf, line...)
			line = r.buf
		}
		r.line++
		return line, nil
	}
}

func (r *Reader) tooLong() ([]byte, error) {
	r.line++
	r.buf = r.buf[:0]
	return nil, &TooLongError{Line: r.line, Max: r.max}
}

// utf8BOM is the byte order mark some tools write at the start of a file.
const utf8BOM = "\ufeff"

// lineEnd returns the index of the first CR or LF in b, or -1. It searches
// in windows so that a file with only one kind of line end is not scanned
// to the end of the buffer for the other kind at every line.
func lineEnd(b []byte) int {
	const window = 256
	for off := 0; off < len(b); off += window {
		w := b[off:min(off+window, len(b))]
		lf := bytes.IndexByte(w, '\n')
		if lf >= 0 {
			w = w[:lf]
		}
		if cr := bytes.IndexByte(w, '\r'); cr >= 0 {
			return off + cr
		}
		if lf >= 0 {
			return off + lf
		}
	}
	return -1
}
