package source

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/lnpdb/lnpdb/internal/core/nanp"
)

// maxNPACLine bounds a line of an NPAC file; a subscription version record
// is a few hundred bytes.
const maxNPACLine = 1 << 20

// ReadPortedNPAC reads ported numbers in NPAC's bulk data download shape for
// subscription versions, calling fn for each good record; see [ReadCarriers]
// for the rules of the callback.
//
// The shape is one record a line (lines end in LF, CR or CRLF), no header
// row, fields separated by '|':
//
//	Version Id | TN | LRN | New Current SPID | Activation Timestamp | …
//
// The Version Id and any fields after the fifth are ignored; the timestamp
// is yyyymmddhhmmss in GMT (RFC 3339 and empty are accepted too, as in
// ported.csv). Fields are trimmed of spaces and empty lines skipped. The
// records are the same as [ReadPorted] gives for the same numbers, and row
// errors name the same columns: tn, lrn, spid, activated_at.
func ReadPortedNPAC(r io.Reader, file string, opt Options, fn func(*Ported) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, bufSize), maxNPACLine)
	sc.Split(scanLines)
	var codes codeTable
	var v Ported
	line := 0
	fail := func(col, reason string, cause error) error {
		e := &RowError{File: file, Line: line, Column: col, Reason: reason, Err: cause}
		if !opt.SkipBadRows {
			return e
		}
		if opt.OnSkip != nil {
			opt.OnSkip(e)
		}
		return nil
	}
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte(utf8BOM))
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		var f [5][]byte
		n := 0
		for rest := b; n < len(f); {
			i := bytes.IndexByte(rest, '|')
			if i < 0 {
				f[n] = rest
				n++
				break
			}
			f[n], rest = rest[:i], rest[i+1:]
			n++
		}
		if n < len(f) {
			if err := fail("", fmt.Sprintf("record has %d fields, want at least %d", n, len(f)), nil); err != nil {
				return err
			}
			continue
		}
		for i := range f {
			f[i] = bytes.TrimSpace(f[i])
		}

		v = Ported{Line: line}
		var err error
		if v.TN, err = numberBytes(f[1]); err != nil {
			if err := fail("tn", numberBytesReason(f[1], err), err); err != nil {
				return err
			}
			continue
		}
		if v.LRN, err = numberBytes(f[2]); err != nil {
			if err := fail("lrn", numberBytesReason(f[2], err), err); err != nil {
				return err
			}
			continue
		}
		if !isCode(f[3]) {
			if err := fail("spid", emptyOr(f[3], "not 4 letters and digits: "+quote(string(f[3]))), nil); err != nil {
				return err
			}
			continue
		}
		spid := codes.getBytes(f[3])
		v.SPID = spid
		if v.ActivatedAt, err = parseTime(f[4]); err != nil {
			if err := fail("activated_at", fmt.Sprintf("%v: %s", err, quote(string(f[4]))), err); err != nil {
				return err
			}
			continue
		}
		if err := fn(&v); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s:%d: line longer than %d bytes: %w", file, line+1, maxNPACLine, err)
		}
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// numberBytes parses a TN or LRN field of an NPAC record. Short fields are
// converted to a string on the stack: nanp.ParseDigits does not keep it.
func numberBytes(b []byte) (nanp.Number, error) {
	if len(b) > 11 {
		return 0, nanp.ErrInvalid
	}
	return nanp.ParseDigits(string(b))
}

func numberBytesReason(b []byte, err error) string {
	if len(b) == 0 {
		return "empty"
	}
	return numberReason(string(b), err)
}

// emptyOr returns "empty" for an empty field, else reason.
func emptyOr(b []byte, reason string) string {
	if len(b) == 0 {
		return "empty"
	}
	return reason
}

// scanLines is a bufio.SplitFunc for lines ending in LF, CR or CRLF.
func scanLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	i := lineEnd(data)
	switch {
	case i < 0:
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	case data[i] == '\n':
		return i + 1, data[:i], nil
	case i+1 < len(data):
		if data[i+1] == '\n' {
			return i + 2, data[:i], nil
		}
		return i + 1, data[:i], nil
	case atEOF:
		return i + 1, data[:i], nil
	default:
		return 0, nil, nil // a CR at the end of the buffer: is an LF next?
	}
}

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
