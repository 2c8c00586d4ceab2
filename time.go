package lnpdb

import (
	"errors"
	"time"
)

// Time is a point in time as the wire carries it: RFC 3339 with a numeric
// offset, UTC rendered as +00:00 (never Z), whole seconds. The zero Time means
// unknown; with the json option omitzero a zero Time is left out of the body.
type Time struct {
	time.Time
}

// Unix returns the Time for sec seconds since 1970-01-01 UTC; 0 is the zero
// (unknown) Time.
func Unix(sec int64) Time {
	if sec == 0 {
		return Time{}
	}
	return Time{time.Unix(sec, 0).UTC()}
}

// AppendWire appends t in wire form (2019-03-14T15:09:26+00:00) to b.
func (t Time) AppendWire(b []byte) []byte {
	return t.Time.AppendFormat(b, "2006-01-02T15:04:05-07:00")
}

// String returns t in wire form, or "" for the zero Time.
func (t Time) String() string {
	if t.IsZero() {
		return ""
	}
	return string(t.AppendWire(nil))
}

// MarshalJSON renders t as a JSON string in wire form, or null when zero.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	b := make([]byte, 0, 27)
	b = append(b, '"')
	b = t.AppendWire(b)
	return append(b, '"'), nil
}

// UnmarshalJSON accepts RFC 3339 (any offset, Z included) or null.
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = Time{}
		return nil
	}
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return errors.New("lnpdb: time must be a JSON string")
	}
	v, err := time.Parse(time.RFC3339, string(b[1:len(b)-1]))
	if err != nil {
		return err
	}
	t.Time = v
	return nil
}
