package source

import (
	"errors"
	"strconv"
)

// Errors a value parser returns; a [RowError] wraps them (errors.Is matches
// through it). Errors about phone numbers wrap [nanp.ErrInvalid] instead.
var (
	// ErrTimeSyntax: a time is neither RFC 3339 nor NPAC's yyyymmddhhmmss.
	ErrTimeSyntax = errors.New("not an RFC 3339 or yyyymmddhhmmss time")
	// ErrTimeRange: a time is before 1970-01-01 or after 2105, so it does not
	// fit the unsigned 32-bit seconds a table stores.
	ErrTimeRange = errors.New("time before 1970 or after 2105")
	// ErrBool: a flag is not one of true/false/1/0/Y/N.
	ErrBool = errors.New("not one of true/false/1/0/Y/N")
	// ErrNoHeader: a CSV file has no header row (it is empty).
	ErrNoHeader = errors.New("no header row")
)

// RowError is a bad row: the file, its 1-based line, the column at fault
// ("" when the fault is the row as a whole, such as a CSV syntax error or a
// wrong number of fields) and the reason. Err, when not nil, is the
// underlying cause, such as [ErrTimeSyntax], [nanp.ErrInvalid] or
// [encoding/csv.ErrQuote]; Unwrap returns it.
//
// Error reads like
//
//	ported.csv:17: column lrn: not a 10-digit NANP number: "20255"
type RowError struct {
	File   string
	Line   int
	Column string
	Reason string
	Err    error
}

func (e *RowError) Error() string {
	s := e.File + ":" + strconv.Itoa(e.Line) + ": "
	if e.Column != "" {
		s += "column " + e.Column + ": "
	}
	return s + e.Reason
}

// Unwrap returns the underlying cause, if any.
func (e *RowError) Unwrap() error { return e.Err }

// ColumnError is a required column missing from a file's header. It is
// always fatal, even with [Options.SkipBadRows].
type ColumnError struct {
	File   string
	Column string
}

func (e *ColumnError) Error() string {
	return e.File + ": missing required column " + strconv.Quote(e.Column)
}
