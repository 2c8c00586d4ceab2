package jobsapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/internal/core/lineio"
)

// MaxUploadBytes bounds a job's request body (after gzip decoding): a
// million numbers written long, with room to spare.
const MaxUploadBytes = 64 << 20

// maxNumberLen is the longest input kept as it is: no number written any
// way is longer. A longer cell (or a line past lineio.Max) is kept as ""
// and answered as an invalid number, so that a hostile row costs its row
// and no memory.
const maxNumberLen = 64

// Upload is a parsed job request.
type Upload struct {
	Kind       string
	Enhanced   bool
	Messaging  bool
	WebhookURL string
	Numbers    []string
}

// errTooMany is a list longer than billing.MaxJobNumbers: 413.
var errTooMany = fmt.Errorf("a job holds at most %d numbers", billing.MaxJobNumbers)

// uploadError is a request the parser refuses: 400 with its words.
type uploadError struct{ msg string }

func (e *uploadError) Error() string { return e.msg }

func badUpload(format string, args ...any) error {
	return &uploadError{fmt.Sprintf(format, args...)}
}

// cell returns an input cell as a job keeps it.
func cell(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		b = bytes.TrimSpace(b[1 : len(b)-1])
	}
	if len(b) > maxNumberLen {
		return ""
	}
	return string(b)
}

// ParseCSV reads a text/csv list with a [ListReader]: one number a line,
// or a header row naming a phone_number column and a number in that
// column of each row. More than billing.MaxJobNumbers rows is
// errTooMany; none at all, a refusal.
func ParseCSV(r io.Reader) ([]string, error) {
	lr := NewListReader(r)
	var out []string
	for {
		n, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(out) == billing.MaxJobNumbers {
			return nil, errTooMany
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, badUpload("the list holds no numbers")
	}
	return out, nil
}

// ListReader reads a list of numbers, a job's CSV upload or lnpdb
// lookup's --in: one number a line, or a header row naming a
// phone_number column and a number in that column of each row. Blank
// lines are skipped. Every line goes through lineio: a line past its
// bound, or a cell past maxNumberLen, is a row of its own answered as an
// invalid number (the number ""), so that a hostile row costs its row and
// no memory. The counts say what became of the lines read so far.
type ListReader struct {
	lr  *lineio.Reader
	col int // -1 until the first row is read; then the number's column
	// Blank lines and the Header row (0 or 1) were skipped; TooLong
	// rows, a line past lineio's bound or a cell past maxNumberLen, were
	// read as the number "".
	Blank, Header, TooLong int
}

// NewListReader returns a ListReader of r.
func NewListReader(r io.Reader) *ListReader { return &ListReader{lr: lineio.NewReader(r), col: -1} }

// Next returns the next row's number; io.EOF after the last.
func (l *ListReader) Next() (string, error) {
	for {
		line, err := l.lr.Next()
		var tooLong *lineio.TooLongError
		switch {
		case errors.As(err, &tooLong):
			line = nil
		case err != nil:
			return "", err
		case len(bytes.TrimSpace(line)) == 0:
			l.Blank++
			continue
		}
		if l.col < 0 {
			l.col = 0
			if h := headerColumn(line); h >= 0 {
				l.col = h
				l.Header++
				continue
			}
		}
		n := ""
		if line != nil {
			n = cell(field(line, l.col))
		}
		if n == "" && (line == nil || len(bytes.TrimSpace(field(line, l.col))) > maxNumberLen) {
			l.TooLong++
		}
		return n, nil
	}
}

// headerColumn returns the column a header row names phone_number, or -1
// when line is not a header.
func headerColumn(line []byte) int {
	for i := 0; line != nil; i++ {
		f, rest, _ := bytes.Cut(line, []byte{','})
		if strings.EqualFold(cell(f), "phone_number") {
			return i
		}
		line = rest
	}
	return -1
}

// field returns the col-th comma-separated field of line (nil past the
// last), allocating nothing however many fields the line has.
func field(line []byte, col int) []byte {
	for ; col > 0; col-- {
		i := bytes.IndexByte(line, ',')
		if i < 0 {
			return nil
		}
		line = line[i+1:]
	}
	f, _, _ := bytes.Cut(line, []byte{','})
	return f
}

// ParseJSON reads a JSON job request: {"phone_numbers": [...],
// "include_enhanced_lrn", "messaging_lookup", "kind", "webhook_url"}. A
// list past billing.MaxJobNumbers is errTooMany (the body is bounded by
// MaxUploadBytes). A null option counts as absent; unknown fields are
// ignored.
func ParseJSON(r io.Reader) (*Upload, error) {
	dec := json.NewDecoder(r)
	u := &Upload{}
	if err := expectDelim(dec, '{', "the request body must be a JSON object"); err != nil {
		return nil, err
	}
	seen := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, badUpload("the request body is not valid JSON")
		}
		name, _ := t.(string)
		var dst any
		switch name {
		case "phone_numbers":
			if seen {
				return nil, badUpload("phone_numbers is given twice")
			}
			seen = true
			if err := readNumbers(dec, u); err != nil {
				return nil, err
			}
			continue
		case "include_enhanced_lrn":
			dst = &u.Enhanced
		case "messaging_lookup":
			dst = &u.Messaging
		case "kind":
			dst = &u.Kind
		case "webhook_url":
			dst = &u.WebhookURL
		default:
			var skip json.RawMessage
			dst = &skip
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, badUpload("the request body is not valid JSON")
		}
		if string(raw) == "null" {
			continue
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			return nil, badUpload("%s has the wrong type", name)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, badUpload("the request body is not valid JSON")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, badUpload("the request body holds more than one JSON value")
	}
	if !seen || len(u.Numbers) == 0 {
		return nil, badUpload("phone_numbers must hold 1 to %d numbers", billing.MaxJobNumbers)
	}
	return u, nil
}

func expectDelim(dec *json.Decoder, d json.Delim, msg string) error {
	t, err := dec.Token()
	if err != nil || t != d {
		return badUpload("%s", msg)
	}
	return nil
}

// readNumbers decodes phone_numbers whole (bounded by MaxUploadBytes),
// which is several times quicker than a token at a time.
func readNumbers(dec *json.Decoder, u *Upload) error {
	var arr []*string
	if err := dec.Decode(&arr); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return badUpload("phone_numbers must be an array of strings")
		}
		return badUpload("the request body is not valid JSON")
	}
	if len(arr) > billing.MaxJobNumbers {
		return errTooMany
	}
	u.Numbers = make([]string, len(arr))
	for i, p := range arr {
		if p == nil {
			return badUpload("phone_numbers must be an array of strings")
		}
		if s := *p; len(s) <= maxNumberLen && !strings.ContainsAny(s, "\r\n") {
			u.Numbers[i] = s
		} // else no number: answered as an invalid one
	}
	return nil
}
