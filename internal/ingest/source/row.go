package source

import (
	"fmt"
	"strings"

	"github.com/lnpdb/lnpdb/internal/core/nanp"
)

// rowParser turns the fields of the current row into values, or into a
// RowError naming the column.
type rowParser struct {
	c    *csvReader
	cols []column
	// interned holds, per column, the strings already handed out, so that
	// values that repeat (providers, rate centers) cost no allocation per
	// row. OCNs and SPIDs have a faster table of their own.
	interned []map[string]string
	codes    codeTable
}

// maxInterned bounds each column's intern table; past it strings are
// allocated per row, which is correct, only slower.
const maxInterned = 1 << 14

func (p *rowParser) errf(col int, cause error, format string, args ...any) *RowError {
	return &RowError{File: p.c.file, Line: p.c.line, Column: p.cols[col].name,
		Reason: fmt.Sprintf(format, args...), Err: cause}
}

// intern returns s, upper-cased if up, as a string of its own that repeats
// of the same value share.
func (p *rowParser) intern(col int, s string, up bool) string {
	if p.interned == nil {
		p.interned = make([]map[string]string, len(p.cols))
	}
	m := p.interned[col]
	if v, ok := m[s]; ok {
		return v
	}
	v := strings.Clone(s)
	if up {
		v = strings.ToUpper(v)
	}
	if m == nil {
		m = make(map[string]string)
		p.interned[col] = m
	}
	if len(m) < maxInterned {
		m[strings.Clone(s)] = v
	}
	return v
}

// required returns the value of col, or an error if it is empty.
func (p *rowParser) required(col int) (string, *RowError) {
	s := p.c.get(col)
	if s == "" {
		return "", p.errf(col, nil, "empty")
	}
	return s, nil
}

// number parses col as a TN or LRN; an empty optional one is 0.
func (p *rowParser) number(col int, optional bool) (nanp.Number, *RowError) {
	s := p.c.get(col)
	if s == "" {
		if optional {
			return 0, nil
		}
		return 0, p.errf(col, nil, "empty")
	}
	n, err := nanp.ParseDigits(s)
	if err != nil {
		return 0, p.errf(col, err, "%s", numberReason(s, err))
	}
	return n, nil
}

// code parses col as an OCN or SPID: 4 letters and digits, upper-cased.
func (p *rowParser) code(col int) (string, *RowError) {
	s, rerr := p.required(col)
	if rerr != nil {
		return "", rerr
	}
	if !isCode(s) {
		return "", p.errf(col, nil, "not 4 letters and digits: %s", quote(s))
	}
	return p.codes.get(s), nil
}

// time parses col with ParseTime; empty is 0.
func (p *rowParser) time(col int) (int64, *RowError) {
	s := p.c.get(col)
	t, err := parseTime(s)
	if err != nil {
		return 0, p.errf(col, err, "%v: %s", err, quote(s))
	}
	return t, nil
}

// svType parses col as an NPAC SV Type, 0 to 10, as a subscription
// version's field 21 is read; empty is SVTypeNone.
func (p *rowParser) svType(col int) (SVType, *RowError) {
	s := p.c.get(col)
	t, bad := parseSVType([]byte(s), p.cols[col].name)
	if bad != nil {
		return SVTypeNone, p.errf(col, bad.err, "%s", bad.reason)
	}
	return t, nil
}

// bool parses col with ParseBool; empty is false if emptyOK.
func (p *rowParser) bool(col int, emptyOK bool) (bool, *RowError) {
	s := p.c.get(col)
	if s == "" && emptyOK {
		return false, nil
	}
	b, err := parseBool(s)
	if err != nil {
		return false, p.errf(col, err, "%v: %s", err, quote(s))
	}
	return b, nil
}

// text returns col as free text: valid UTF-8 without control characters,
// not empty if required.
func (p *rowParser) text(col int, required bool) (string, *RowError) {
	s := p.c.get(col)
	if s == "" && required {
		return "", p.errf(col, nil, "empty")
	}
	if why := badText(s); why != "" {
		return "", p.errf(col, nil, "%s", why)
	}
	return s, nil
}

// letters returns col as exactly n ASCII letters, upper-cased.
func (p *rowParser) letters(col, n int) (string, *RowError) {
	s, rerr := p.required(col)
	if rerr != nil {
		return "", rerr
	}
	if !allLetters(s, n) {
		return "", p.errf(col, nil, "not %d letters: %s", n, quote(s))
	}
	return p.intern(col, s, true), nil
}

// digits returns col as 1 to max ASCII digits (exactly max if exact).
func (p *rowParser) digits(col, max int, exact bool) (string, *RowError) {
	s, rerr := p.required(col)
	if rerr != nil {
		return "", rerr
	}
	if !allDigits(s, max) || exact && len(s) != max {
		if exact {
			return "", p.errf(col, nil, "not %d digits: %s", max, quote(s))
		}
		return "", p.errf(col, nil, "not 1 to %d digits: %s", max, quote(s))
	}
	return p.intern(col, s, false), nil
}
