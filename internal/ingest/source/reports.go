package source

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// NumberingRecord is a row of a public numbering report: NANPA's central
// office code assignment records (an NPA-NXX, X = -1) or the Pooling
// Administrator's thousands-block report (an NPA-NXX-X).
type NumberingRecord struct {
	NPA, NXX, X int
	OCN         string // upper-case
	Company     string
	State       string // 2 letters, upper-case
	RateCenter  string
	EffectiveAt int64  // Unix seconds, 0 if empty
	Status      string // the Use or Status column, upper-case; "" if none
	Line        int
}

// StatusAssigned is the Use/Status of an assigned code or block. A record
// with another status has only its code and Status set.
const StatusAssigned = "AS"

// reportColumns are the header names a report's columns go by, lower-case
// with spaces, '_' and '-' removed.
var reportColumns = map[string]string{
	"npanxx": "npanxx", "npanxxx": "npanxxx", "npa": "npa", "nxx": "nxx",
	"x": "x", "block": "x", "blockid": "x", "thousandsblock": "x",
	"ocn": "ocn", "company": "company", "companyname": "company", "ocnname": "company",
	// Assigned To is the PA block report's block holder; its Code Holder is the code's.
	"assignedto": "company", "state": "state", "ratecenter": "ratecenter",
	"effectivedate": "effective", "effdate": "effective", "blockeffectivedate": "effective",
	"use": "status", "status": "status",
}

func reportKey(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '_' || r == '-' || r == '/' {
			return -1
		}
		return r
	}, s)
}

// IsNumberingReport reports whether header, a report's first line, names
// the columns of a numbering report: an OCN, a rate center and a code.
func IsNumberingReport(header []byte) bool {
	sep := byte(',')
	if bytes.IndexByte(header, '\t') >= 0 {
		sep = '\t'
	}
	has := map[string]bool{}
	for _, f := range bytes.Split(header, []byte{sep}) {
		has[reportColumns[reportKey(strings.Trim(string(f), `"`))]] = true
	}
	return has["ocn"] && has["ratecenter"] && (has["npanxx"] || has["npanxxx"] || has["npa"] && has["nxx"])
}

// OCNMultiple is the OCN NANPA's code report lists a code under when it has
// more than one ("MULT", multiple OCN listing): it names no holder.
const OCNMultiple = "MULT"

// ReadNumberingReport reads a NANPA central office code report or a Pooling
// Administrator thousands-block report as published: CSV or tab-separated
// text with a header row, whose columns are found by name (docs/DATA.md,
// "Numbering reports"). A row gives an NPA-NXX (an NPA-NXX column, or NPA
// and NXX) and, for a block, X (an NPA-NXX-X column, or X/Block); OCN,
// State and Rate Center are required; Company, Effective Date (MM/DD/YYYY,
// yyyy-mm-dd or as activated_at) and Use/Status are read if present. See
// [ReadCarriers] for the rules of the callback.
//
// Each line is one row: a tab-separated line is split at its tabs (a field
// wrapped in double quotes loses them; a quote elsewhere is text), a
// comma-separated one is read as CSV that tolerates stray quotes, so that
// a quote that does not close is that row's problem only. A line that is
// not valid UTF-8 is Windows-1252 (Latin-1), as NANPA writes company names.
// An assigned row whose OCN is [OCNMultiple] has an empty OCN: its holder
// is unknown.
func ReadNumberingReport(r io.Reader, file string, opt Options, fn func(*NumberingRecord) error) error {
	s := newLineSource(r, file, opt)
	var hdr []string
	var split func([]byte) ([]string, error)
	for hdr == nil {
		b, ok, err := s.next()
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%s: empty file: no header row", file)
		}
		if isBlank(b) {
			s.count.Blank++
			continue
		}
		s.count.Header++
		split = reportSplitter(bytes.IndexByte(b, '\t') >= 0)
		if hdr, err = split(decodeReport(b)); err != nil {
			return fmt.Errorf("%s:%d: header: %w", file, s.line, err)
		}
		hdr = slices.Clone(hdr)
	}
	col := map[string]int{}
	for i, h := range hdr {
		if c, ok := reportColumns[reportKey(h)]; ok {
			if _, dup := col[c]; !dup {
				col[c] = i
			}
		}
	}
	for _, need := range []string{"ocn", "state", "ratecenter"} {
		if _, ok := col[need]; !ok {
			return &ColumnError{File: file, Column: need}
		}
	}
	_, hasNPANXX := col["npanxx"]
	_, hasNPANXXX := col["npanxxx"]
	_, hasNPA := col["npa"]
	_, hasNXX := col["nxx"]
	if !hasNPANXX && !hasNPANXXX && !(hasNPA && hasNXX) {
		return &ColumnError{File: file, Column: "npa-nxx"}
	}
	var codes codeTable
	for {
		b, ok, err := s.next()
		if err != nil || !ok {
			return err
		}
		if isBlank(b) {
			s.count.Blank++
			continue
		}
		rec, err := split(decodeReport(b))
		if err != nil {
			if err := s.failf("", err.Error(), err); err != nil {
				return err
			}
			continue
		}
		get := func(c string) string {
			if i, ok := col[c]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		var v NumberingRecord
		v.Line = s.line
		var bad *badField
		switch {
		case hasNPANXXX && get("npanxxx") != "":
			v.NPA, v.NXX, v.X, bad = parseNPANXX([]byte(get("npanxxx")), true, "npa-nxx-x")
		case hasNPANXX:
			v.NPA, v.NXX, v.X, bad = parseNPANXX([]byte(get("npanxx")), false, "npa-nxx")
		default:
			v.NPA, v.NXX, v.X, bad = parseNPANXX([]byte(get("npa")+get("nxx")), false, "npa-nxx")
		}
		if bad == nil && v.X < 0 {
			switch x := get("x"); {
			case x == "" || x == "A" || x == "a":
			case len(x) == 1 && isDigit(x[0]):
				v.X = int(x[0] - '0')
			default:
				bad = &badField{col: "x", reason: "not a digit, empty or A: " + quote(x)}
			}
		}
		if v.Status = strings.ToUpper(get("status")); bad == nil && v.Status != "" && v.Status != StatusAssigned {
			// Not assigned (available, reserved, …): the row names no
			// holder; the caller leaves it out.
			s.count.Rows++
			if err := fn(&v); err != nil {
				return err
			}
			continue
		}
		if bad == nil {
			if ocn := get("ocn"); strings.EqualFold(ocn, OCNMultiple) {
				v.OCN = "" // more than one: none known
			} else if !isCode(ocn) {
				bad = &badField{col: "ocn", reason: emptyOr([]byte(ocn), "not 4 letters and digits: "+quote(ocn))}
			} else {
				v.OCN = codes.get(ocn)
			}
		}
		if bad == nil {
			if st := get("state"); len(st) != 2 || !isLetter(st[0]) || !isLetter(st[1]) {
				bad = &badField{col: "state", reason: emptyOr([]byte(st), "not 2 letters: "+quote(st))}
			} else {
				v.State = strings.ToUpper(st)
			}
		}
		if bad == nil {
			if v.RateCenter = get("ratecenter"); v.RateCenter == "" {
				bad = &badField{col: "ratecenter", reason: "empty"}
			}
		}
		if bad == nil {
			v.Company = get("company")
			v.EffectiveAt, bad = parseReportDate(get("effective"))
		}
		if bad != nil {
			if err := s.failf(bad.col, bad.reason, bad.err); err != nil {
				return err
			}
			continue
		}
		s.count.Rows++
		if err := fn(&v); err != nil {
			return err
		}
	}
}

// reportSplitter returns how a report's lines split into fields: at tabs,
// or as CSV. The fields are reused by the next call.
func reportSplitter(tabs bool) func([]byte) ([]string, error) {
	if !tabs {
		l := newLineCSV(',', true)
		return l.parse
	}
	var rec []string
	return func(b []byte) ([]string, error) {
		rec = rec[:0]
		for f := range bytes.SplitSeq(b, []byte{'\t'}) {
			if len(f) >= 2 && f[0] == '"' && f[len(f)-1] == '"' {
				f = bytes.ReplaceAll(f[1:len(f)-1], []byte(`""`), []byte(`"`))
			}
			rec = append(rec, string(f))
		}
		return rec, nil
	}
}

// parseReportDate parses a report's date: MM/DD/YYYY (as the reports write
// it), yyyy-mm-dd, or what activated_at takes; empty is 0.
func parseReportDate(s string) (int64, *badField) {
	if s == "" {
		return 0, nil
	}
	for _, layout := range []string{"01/02/2006", "1/2/2006", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			u, err := unixTime(t.Year(), int(t.Month()), t.Day(), 0, 0, 0, 0)
			if err != nil {
				return 0, &badField{col: "effective_date", reason: err.Error() + ": " + quote(s), err: err}
			}
			return u, nil
		}
	}
	if t, err := parseTime(s); err == nil {
		return t, nil
	}
	return 0, &badField{col: "effective_date", reason: "not MM/DD/YYYY, yyyy-mm-dd or an activated_at time: " + quote(s)}
}
