package source

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Options control error handling. With SkipBadRows, a row error is passed to
// OnSkip (which may be nil) and reading goes on with the next row; without
// it, the first row error is returned. Missing columns and read errors are
// fatal either way. Count, when not nil, is added to as lines are read (a
// build passes one per file).
type Options struct {
	SkipBadRows bool
	OnSkip      func(*RowError)
	Count       *Count
}

// column is a column a reader knows.
type column struct {
	name     string
	required bool
}

// csvReader walks the rows of one CSV file with a header row. Each line is
// parsed as one record on its own: no value may hold a line end (control
// characters are refused), so a quoted field that does not close on its
// line is a row error for that line, and the lines after it are read as
// they are.
type csvReader struct {
	*lineSource
	*lineCSV
	idx   []int // per known column, its position in a record, or -1
	width int   // fields in the header
	rec   []string
}

// lineCSV parses one line at a time as a CSV record, with encoding/csv.
type lineCSV struct {
	feed lineFeed
	cr   *csv.Reader
}

func newLineCSV(comma rune, lazyQuotes bool) *lineCSV {
	l := &lineCSV{}
	l.cr = csv.NewReader(&l.feed)
	l.cr.Comma = comma
	l.cr.LazyQuotes = lazyQuotes
	l.cr.FieldsPerRecord = -1
	l.cr.ReuseRecord = true
	return l
}

// parse parses one line, not blank, as a CSV record. The record is reused
// by the next call.
func (l *lineCSV) parse(b []byte) ([]string, error) {
	l.feed.b = b
	rec, err := l.cr.Read()
	l.feed.b = nil
	if err == io.EOF { // cannot be: the line is not blank
		err = csv.ErrFieldCount
	}
	return rec, err
}

// lineFeed serves encoding/csv one line, then io.EOF until the next.
type lineFeed struct{ b []byte }

func (f *lineFeed) Read(p []byte) (int, error) {
	if len(f.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, f.b)
	f.b = f.b[n:]
	return n, nil
}

// newCSVReader reads the header row and maps cols onto it.
func newCSVReader(r io.Reader, file string, opt Options, cols []column) (*csvReader, error) {
	c := &csvReader{lineSource: newLineSource(r, file, opt), lineCSV: newLineCSV(',', false), idx: make([]int, len(cols))}

	var header []string
	for header == nil {
		b, ok, err := c.lineSource.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%s: %w", file, ErrNoHeader)
		}
		if isBlank(b) {
			c.count.Blank++
			continue
		}
		c.count.Header++
		if header, err = c.parse(b); err != nil {
			return nil, fmt.Errorf("%s:%d: header: %w", file, c.line, err)
		}
	}
	c.width = len(header)
	for i, col := range cols {
		c.idx[i] = -1
		for j, h := range header {
			if !strings.EqualFold(strings.TrimSpace(h), col.name) {
				continue
			}
			if c.idx[i] >= 0 {
				return nil, fmt.Errorf("%s:%d: column %q appears twice in the header", file, c.line, col.name)
			}
			c.idx[i] = j
		}
		if c.idx[i] < 0 && col.required {
			return nil, &ColumnError{File: file, Column: col.name}
		}
	}
	return c, nil
}

// isBlank reports whether a line is empty or of spaces only.
func isBlank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

// next moves to the next row that is well-formed CSV with as many fields as
// the header. It returns false at the end of the file. Bad rows go to fail;
// blank lines are counted and passed over.
func (c *csvReader) next() (bool, error) {
	for {
		b, ok, err := c.lineSource.next()
		if err != nil || !ok {
			return false, err
		}
		if isBlank(b) {
			c.count.Blank++
			continue
		}
		rec, err := c.parse(b)
		if err != nil {
			var pe *csv.ParseError
			if !errors.As(err, &pe) {
				return false, fmt.Errorf("%s: %w", c.file, err)
			}
			reason := pe.Err.Error()
			if pe.Column > 0 {
				reason += " at byte " + strconv.Itoa(pe.Column)
			}
			if err := c.failf("", reason, pe.Err); err != nil {
				return false, err
			}
			continue
		}
		c.rec = rec
		if len(rec) != c.width {
			if err := c.failf("", fmt.Sprintf("row has %d fields, header has %d", len(rec), c.width), nil); err != nil {
				return false, err
			}
			continue
		}
		return true, nil
	}
}

// get returns the trimmed value of known column i in the current row, or ""
// if the file lacks that (optional) column.
func (c *csvReader) get(i int) string {
	j := c.idx[i]
	if j < 0 {
		return ""
	}
	return strings.TrimSpace(c.rec[j])
}

// readCSV is the loop every CSV reader shares: parse each row into one
// reused T with parse, hand it to fn.
func readCSV[T any](r io.Reader, file string, opt Options, cols []column,
	parse func(*rowParser, *T) *RowError, fn func(*T) error) error {
	c, err := newCSVReader(r, file, opt, cols)
	if err != nil {
		return err
	}
	p := &rowParser{c: c, cols: cols}
	var v T
	for {
		ok, err := c.next()
		if err != nil || !ok {
			return err
		}
		var zero T
		v = zero
		if rerr := parse(p, &v); rerr != nil {
			if err := c.fail(rerr); err != nil {
				return err
			}
			continue
		}
		c.count.Rows++
		if err := fn(&v); err != nil {
			return err
		}
	}
}
