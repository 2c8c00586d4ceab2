package source

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readFunc is the shape every reader has.
type readFunc[T any] func(io.Reader, string, Options, func(*T) error) error

// readAll reads input and returns copies of the records and the skipped row
// errors (with SkipBadRows) or the error.
func readAll[T any](read readFunc[T], input string, opt Options) ([]T, error) {
	var out []T
	err := read(strings.NewReader(input), "f.csv", opt, func(v *T) error {
		out = append(out, *v)
		return nil
	})
	return out, err
}

// readSkipping reads input with SkipBadRows and returns the records and the
// row errors passed to OnSkip.
func readSkipping[T any](t *testing.T, read readFunc[T], input string) ([]T, []*RowError) {
	t.Helper()
	var skipped []*RowError
	out, err := readAll(read, input, Options{SkipBadRows: true, OnSkip: func(e *RowError) {
		skipped = append(skipped, e)
	}})
	require.NoError(t, err)
	return out, skipped
}

// requireRowError checks that err is a RowError at line and column of f.csv
// whose reason contains reason.
func requireRowError(t *testing.T, err error, line int, column, reason string) *RowError {
	t.Helper()
	var re *RowError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "f.csv", re.File)
	assert.Equal(t, line, re.Line, "line: %v", err)
	assert.Equal(t, column, re.Column, "column: %v", err)
	assert.Contains(t, re.Reason, reason)
	return re
}

// csvFile writes rows as CSV, quoting where needed.
func csvFile(crlf bool, rows ...[]string) string {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.UseCRLF = crlf
	_ = w.WriteAll(rows)
	return b.String()
}

// badValue is a value that breaks a rule of a column.
type badValue struct {
	column, value, reason string
}

// fileSpec describes a CSV reader for the tests every reader shares.
type fileSpec[T any] struct {
	read     readFunc[T]
	cols     []string // the header
	good     []string // a good row
	want     T        // what good reads to, at line 2
	setLine  func(*T, int)
	required []string
	bad      []badValue
}

// with returns the good row with column col set to v.
func (s *fileSpec[T]) with(col, v string) []string {
	row := slices.Clone(s.good)
	i := slices.Index(s.cols, col)
	if i < 0 {
		panic("no column " + col)
	}
	row[i] = v
	return row
}

func (s *fileSpec[T]) wantAt(line int) T {
	v := s.want
	s.setLine(&v, line)
	return v
}

// run runs the shared tests: a good file reads back exactly, in any column
// order, with unknown columns, CRLF, a BOM and header spellings; each bad
// value is a row error at its line and column; each required column is
// needed; SkipBadRows skips and goes on; a callback error stops the read.
func (s *fileSpec[T]) run(t *testing.T) {
	t.Run("good", func(t *testing.T) {
		got, err := readAll(s.read, csvFile(false, s.cols, s.good), Options{})
		require.NoError(t, err)
		assert.Equal(t, []T{s.wantAt(2)}, got)
	})

	t.Run("reordered/unknown/CRLF/BOM/blank lines", func(t *testing.T) {
		header := []string{"zz_extra"}
		row := []string{`extra, "quoted" value`}
		for i := len(s.cols) - 1; i >= 0; i-- {
			header = append(header, "  "+strings.ToUpper(s.cols[i])+" ")
			row = append(row, s.good[i])
			if i == 1 {
				header = append(header, "other")
				row = append(row, "x,y")
			}
		}
		input := "\ufeff" + csvFile(true, header, row) + "\r\n   \r\n" + csvFile(true, row)
		got, err := readAll(s.read, input, Options{})
		require.NoError(t, err)
		assert.Equal(t, []T{s.wantAt(2), s.wantAt(5)}, got)
	})

	t.Run("missing column", func(t *testing.T) {
		for _, col := range s.required {
			i := slices.Index(s.cols, col)
			header := slices.Delete(slices.Clone(s.cols), i, i+1)
			row := slices.Delete(slices.Clone(s.good), i, i+1)
			_, err := readAll(s.read, csvFile(false, header, row), Options{SkipBadRows: true})
			var ce *ColumnError
			require.ErrorAs(t, err, &ce, col)
			assert.Equal(t, &ColumnError{File: "f.csv", Column: col}, ce)
			assert.Equal(t, `f.csv: missing required column "`+col+`"`, err.Error())
		}
	})

	t.Run("bad values", func(t *testing.T) {
		for _, bad := range s.bad {
			t.Run(bad.column+"="+bad.value, func(t *testing.T) {
				input := csvFile(false, s.cols, s.good, s.with(bad.column, bad.value), s.good)
				got, err := readAll(s.read, input, Options{})
				requireRowError(t, err, 3, bad.column, bad.reason)
				assert.Equal(t, []T{s.wantAt(2)}, got, "rows before the bad one")

				got, skipped := readSkipping(t, s.read, input)
				assert.Equal(t, []T{s.wantAt(2), s.wantAt(4)}, got)
				require.Len(t, skipped, 1)
				assert.Equal(t, err, error(skipped[0]))
			})
		}
	})

	t.Run("bad rows", func(t *testing.T) {
		short := s.good[:len(s.good)-1]
		long := append(slices.Clone(s.good), "x")
		input := csvFile(false, s.cols, short) + "\n" + csvFile(false, long) + "a,\"b\"c\n" + csvFile(false, s.good) +
			"x\"y\n" + csvFile(false, s.good)
		_, err := readAll(s.read, input, Options{})
		requireRowError(t, err, 2, "", "row has")
		assert.Contains(t, err.Error(), "f.csv:2: row has")

		// OnSkip may be nil.
		got, err := readAll(s.read, input, Options{SkipBadRows: true})
		require.NoError(t, err)
		assert.Equal(t, []T{s.wantAt(6), s.wantAt(8)}, got)

		got, skipped := readSkipping(t, s.read, input)
		assert.Equal(t, []T{s.wantAt(6), s.wantAt(8)}, got)
		require.Len(t, skipped, 4)
		requireRowError(t, skipped[0], 2, "", "row has")
		requireRowError(t, skipped[1], 4, "", "row has")
		requireRowError(t, skipped[2], 5, "", "extraneous or missing \" in quoted-field")
		assert.ErrorIs(t, skipped[2], csv.ErrQuote)
		requireRowError(t, skipped[3], 7, "", `bare " in non-quoted-field at byte 2`)

		// A quoted field does not span lines (no value may hold a line
		// end): a quote left open is its line's error, and the lines after
		// it are rows of their own, not swallowed into it.
		input = csvFile(false, s.cols) + "\"a\nb\"\n" + csvFile(false, s.good) + "\"open,\n" + csvFile(false, s.good, s.good)
		got, skipped = readSkipping(t, s.read, input)
		assert.Equal(t, []T{s.wantAt(4), s.wantAt(6), s.wantAt(7)}, got)
		require.Len(t, skipped, 3)
		requireRowError(t, skipped[0], 2, "", "extraneous or missing \" in quoted-field")
		requireRowError(t, skipped[1], 3, "", `bare " in non-quoted-field`)
		requireRowError(t, skipped[2], 5, "", "extraneous or missing \" in quoted-field")

		_, err = readAll(s.read, csvFile(false, s.cols)+"x\"y,z\n", Options{})
		requireRowError(t, err, 2, "", `bare " in non-quoted-field`)
	})

	t.Run("callback error", func(t *testing.T) {
		stop := errors.New("stop")
		n := 0
		err := s.read(strings.NewReader(csvFile(false, s.cols, s.good, s.good)), "f.csv", Options{}, func(*T) error {
			n++
			return stop
		})
		assert.Same(t, stop, err)
		assert.Equal(t, 1, n)
	})

	t.Run("empty file", func(t *testing.T) {
		_, err := readAll(s.read, "", Options{})
		assert.ErrorIs(t, err, ErrNoHeader)
		got, err := readAll(s.read, csvFile(false, s.cols), Options{})
		require.NoError(t, err)
		assert.Empty(t, got)
	})

	t.Run("duplicate column", func(t *testing.T) {
		header := append(slices.Clone(s.cols), strings.ToUpper(s.cols[0]))
		_, err := readAll(s.read, csvFile(false, header, append(slices.Clone(s.good), s.good[0])), Options{})
		assert.ErrorContains(t, err, "appears twice")
	})
}
