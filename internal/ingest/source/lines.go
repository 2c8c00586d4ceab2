package source

import (
	"errors"
	"fmt"
	"io"

	"github.com/lnpdb/lnpdb/internal/core/lineio"
)

// Count tallies the lines of a file as a reader reads it (see
// [Options.Count]). Every line read is exactly one of a header line, a
// blank line, a row handed to the callback, or a skipped row (a row
// error, passed to OnSkip or returned): when a read ends, Lines = Header +
// Blank + Rows + Skipped, so that no line goes unaccounted.
type Count struct {
	Lines   int // every line read, including a refused one
	Header  int // header lines (0 or 1)
	Blank   int // empty lines, or of spaces only
	Rows    int // rows handed to the callback
	Skipped int // row errors: lines refused
}

// lineSource is what every reader of this package reads a file through: its
// lines (internal/core/lineio: bounded at lineio.Max, ended by LF, CR or
// CRLF, a byte order mark dropped), the options and the count of its lines.
type lineSource struct {
	lr    *lineio.Reader
	file  string
	opt   Options
	line  int    // of the current line
	count *Count // Options.Count, or one of its own
}

func newLineSource(r io.Reader, file string, opt Options) *lineSource {
	c := opt.Count
	if c == nil {
		c = &Count{}
	}
	return &lineSource{lr: lineio.NewReader(r), file: file, opt: opt, count: c}
}

// next returns the next line, or false at the end of the file. A line
// longer than lineio.Max is a row error (refused without being read
// whole); an error reading the file is returned.
func (s *lineSource) next() ([]byte, bool, error) {
	for {
		b, err := s.lr.Next()
		switch {
		case err == io.EOF:
			return nil, false, nil
		case errors.Is(err, lineio.ErrTooLong):
			s.count.Lines++
			s.line = s.lr.Line()
			if err := s.fail(&RowError{File: s.file, Line: s.line, Reason: err.Error(), Err: lineio.ErrTooLong}); err != nil {
				return nil, false, err
			}
			continue
		case err != nil:
			return nil, false, fmt.Errorf("%s: %w", s.file, err)
		}
		s.count.Lines++
		s.line = s.lr.Line()
		return b, true, nil
	}
}

// fail handles a row error: it counts it and returns it, or with
// SkipBadRows hands it to OnSkip and returns nil.
func (s *lineSource) fail(e *RowError) error {
	s.count.Skipped++
	if !s.opt.SkipBadRows {
		return e
	}
	if s.opt.OnSkip != nil {
		s.opt.OnSkip(e)
	}
	return nil
}

// failf is fail for the current line.
func (s *lineSource) failf(col, reason string, cause error) error {
	return s.fail(&RowError{File: s.file, Line: s.line, Column: col, Reason: reason, Err: cause})
}
