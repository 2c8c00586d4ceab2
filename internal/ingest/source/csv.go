package source

import (
	"bufio"
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
// fatal either way.
type Options struct {
	SkipBadRows bool
	OnSkip      func(*RowError)
}

// column is a column a reader knows.
type column struct {
	name     string
	required bool
}

// csvReader walks the rows of one CSV file with a header row.
type csvReader struct {
	file  string
	opt   Options
	cr    *csv.Reader
	idx   []int // per known column, its position in a record, or -1
	width int   // fields in the header
	rec   []string
	line  int // of the current record
}

// bufSize is the read buffer: large enough that a read is a few rows' worth
// of syscalls less, small enough not to matter.
const bufSize = 64 << 10

// utf8BOM is the byte order mark some tools write at the start of a file.
const utf8BOM = "\ufeff"

// newCSVReader reads the header row and maps cols onto it.
func newCSVReader(r io.Reader, file string, opt Options, cols []column) (*csvReader, error) {
	br := bufio.NewReaderSize(r, bufSize)
	// Drop a BOM before encoding/csv sees it, so that a quoted first header
	// ("\ufeff"tn"") is not a syntax error.
	if b, err := br.Peek(len(utf8BOM)); err == nil && string(b) == utf8BOM {
		_, _ = br.Discard(len(utf8BOM))
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	c := &csvReader{file: file, opt: opt, cr: cr, idx: make([]int, len(cols))}

	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: %w", file, ErrNoHeader)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", file, err)
	}
	line, _ := cr.FieldPos(0)
	c.width = len(header)
	for i, col := range cols {
		c.idx[i] = -1
		for j, h := range header {
			if !strings.EqualFold(strings.TrimSpace(h), col.name) {
				continue
			}
			if c.idx[i] >= 0 {
				return nil, fmt.Errorf("%s:%d: column %q appears twice in the header", file, line, col.name)
			}
			c.idx[i] = j
		}
		if c.idx[i] < 0 && col.required {
			return nil, &ColumnError{File: file, Column: col.name}
		}
	}
	return c, nil
}

// next moves to the next row that is well-formed CSV with as many fields as
// the header. It returns false at the end of the file. Bad rows go to fail.
func (c *csvReader) next() (bool, error) {
	for {
		rec, err := c.cr.Read()
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			var pe *csv.ParseError
			if !errors.As(err, &pe) {
				return false, fmt.Errorf("%s: %w", c.file, err)
			}
			reason := pe.Err.Error()
			if pe.Column > 0 {
				reason += " at byte " + strconv.Itoa(pe.Column)
			}
			if err := c.fail(&RowError{File: c.file, Line: pe.Line, Reason: reason, Err: pe.Err}); err != nil {
				return false, err
			}
			continue
		}
		c.rec = rec
		c.line, _ = c.cr.FieldPos(0)
		if len(rec) != c.width {
			// A line of only spaces is as good as an empty one.
			if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
				continue
			}
			err := &RowError{File: c.file, Line: c.line,
				Reason: fmt.Sprintf("row has %d fields, header has %d", len(rec), c.width)}
			if err := c.fail(err); err != nil {
				return false, err
			}
			continue
		}
		return true, nil
	}
}

// fail handles a row error: it returns it, or with SkipBadRows hands it to
// OnSkip and returns nil.
func (c *csvReader) fail(e *RowError) error {
	if !c.opt.SkipBadRows {
		return e
	}
	if c.opt.OnSkip != nil {
		c.opt.OnSkip(e)
	}
	return nil
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
		if err := fn(&v); err != nil {
			return err
		}
	}
}
