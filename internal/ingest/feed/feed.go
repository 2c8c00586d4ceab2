// Package feed reads the NPAC update feeds that port-data vendors deliver —
// CSV with the columns action, tn, lrn, spid, activated_at and optionally
// sv_type, or the same
// as a JSON array — into format.Update values, holding every value to the
// source-data rules of internal/ingest/source. The admin API and lnpdb apply both
// read feeds through it. (It sits beside internal/ingest/source rather than in it
// because format itself reads sources through internal/ingest/source.)
package feed

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/ingest/source"
)

// feedHeader is the header of an update feed (DATA.md, Live updates).
const feedHeader = "action,tn,lrn,spid,activated_at,sv_type"

// Read reads an update feed — CSV with the columns action, tn, lrn,
// spid, activated_at and optionally sv_type (the NPAC SV Type, 0 to 10), as
// port-data vendors deliver it — calling fn with
// each update in order. name is used in error messages. The first bad row
// stops the read with an error naming its line and column.
func Read(r io.Reader, name string, fn func(format.Update) error) error {
	return source.ReadUpdates(r, name, source.Options{}, func(u *source.Update) error {
		return fn(format.Update{
			Action:      format.Action(u.Action),
			TN:          uint64(u.TN),
			LRN:         uint64(u.LRN),
			SPID:        u.SPID,
			ActivatedAt: u.ActivatedAt,
			SVType:      u.SVType,
		})
	})
}

// ParseCSV parses a whole update feed (see Read).
func ParseCSV(body []byte) ([]format.Update, error) {
	var ups []format.Update
	err := Read(bytes.NewReader(body), "feed", func(u format.Update) error {
		ups = append(ups, u)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ups, nil
}

// feedJSON is one update of a JSON update feed: the CSV feed's columns as
// the fields of an object.
type feedJSON struct {
	Action      string   `json:"action"`
	TN          string   `json:"tn"`
	LRN         string   `json:"lrn"`
	SPID        string   `json:"spid"`
	ActivatedAt feedTime `json:"activated_at"`
	SVType      feedInt  `json:"sv_type"`
}

// feedInt is sv_type in JSON: a string as the CSV feed writes it, or an
// integer.
type feedInt string

func (t *feedInt) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, (*string)(t))
	}
	if string(b) == "null" {
		*t = ""
		return nil
	}
	n, err := strconv.ParseUint(string(b), 10, 8)
	if err != nil {
		return fmt.Errorf("sv_type must be a number from 0 to 10, not %.30s", b)
	}
	*t = feedInt(strconv.FormatUint(n, 10))
	return nil
}

// feedTime is activated_at in JSON: a string as the CSV feed writes it
// (RFC 3339 or yyyymmddhhmmss), or Unix seconds as an integer.
type feedTime string

func (t *feedTime) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = feedTime(s)
		return nil
	}
	if string(b) == "null" {
		*t = ""
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || n < 0 || n > 1<<32-1 {
		return fmt.Errorf("activated_at must be a time string or Unix seconds, not %.30s", b)
	}
	*t = feedTime(time.Unix(n, 0).UTC().Format(time.RFC3339))
	return nil
}

// ParseJSON parses a JSON update feed: an array of objects with the
// CSV feed's columns as string fields (activated_at may also be Unix
// seconds). Every element is checked exactly as a CSV row is.
func ParseJSON(body []byte) ([]format.Update, error) {
	var rows []feedJSON
	if err := json.Unmarshal(body, &rows); err != nil {
		te, ok := errors.AsType[*json.UnmarshalTypeError](err)
		switch {
		case ok && te.Field != "":
			return nil, fmt.Errorf("%s must be %s, not %s", te.Field, KindName(te.Type.Kind()), te.Value)
		case ok:
			return nil, errors.New("the body must be a JSON array of update objects")
		}
		if _, ok := errors.AsType[*json.SyntaxError](err); ok {
			return nil, errors.New("the body is not valid JSON")
		}
		return nil, err // feedTime's
	}
	// Through the CSV parser, so that both forms accept exactly the same
	// values. Control characters cannot be valid values; refusing them here
	// keeps one element on one CSV line, so that line numbers map back.
	var buf bytes.Buffer
	buf.WriteString(feedHeader + "\n")
	cw := csv.NewWriter(&buf)
	for i, u := range rows {
		rec := []string{u.Action, u.TN, u.LRN, u.SPID, string(u.ActivatedAt), string(u.SVType)}
		for _, f := range rec {
			if strings.ContainsFunc(f, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				return nil, fmt.Errorf("update %d: a field holds a control character", i+1)
			}
		}
		_ = cw.Write(rec) // a bytes.Buffer does not fail
	}
	cw.Flush()
	ups, err := ParseCSV(buf.Bytes())
	if err != nil {
		if re, ok := errors.AsType[*source.RowError](err); ok && re.Line >= 2 {
			s := "update " + strconv.Itoa(re.Line-1) + ": "
			if re.Column != "" {
				s += re.Column + ": "
			}
			return nil, errors.New(s + re.Reason)
		}
		return nil, err
	}
	return ups, nil
}

// KindName names the kind of JSON value a Go kind expects, for an error
// message that must not name Go types ("a string", "an object").
func KindName(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "a " + k.String()
}
