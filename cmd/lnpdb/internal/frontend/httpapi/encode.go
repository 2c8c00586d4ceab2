package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/jsonbody"

	"github.com/lnpdb/lnpdb/lrn"
)

// writeLRN writes r as the body of a 200 answer to POST /api/v1/lrn: the
// bytes json.Encoder would write (TestAppendLRNIsEncodingJSON holds it to
// that), without reflection and without allocating. It is the hot path of
// the API, so it gets its own encoder.
func writeLRN(w http.ResponseWriter, r *lrn.Result) {
	j := jsonBufs.Get().(*jsonBuf)
	j.b.Reset()
	b := appendLRN(j.b.AvailableBuffer(), r)
	j.b.Write(append(b, '\n'))
	writeBuffered(w, http.StatusOK, j)
}

// appendLRN appends the JSON object of r to b, fields in struct order, each
// omitzero field left out when zero, as encoding/json does.
func appendLRN(b []byte, r *lrn.Result) []byte {
	b = append(b, `{"lrn":`...)
	b = appendString(b, r.LRN)
	b = append(b, `,"phone_number":`...)
	b = appendString(b, r.PhoneNumber)
	if !r.ActivatedAt.IsZero() {
		b = append(b, `,"lrn_activated_at":"`...)
		b = appendWireTime(b, r.ActivatedAt)
		b = append(b, '"')
	}
	if e := &r.Enhanced; !e.IsZero() {
		b = append(b, `,"enhanced_lrn_data":{"carrier":`...)
		b = appendString(b, e.Carrier)
		b = append(b, `,"carrier_type":`...)
		b = appendString(b, e.CarrierType)
		b = append(b, `,"ocn":`...)
		b = appendString(b, e.OCN)
		b = append(b, `,"city":`...)
		b = appendString(b, e.City)
		b = append(b, `,"state":`...)
		b = appendString(b, e.State)
		b = append(b, `,"county":`...)
		b = appendString(b, e.County)
		b = append(b, `,"zip_code":`...)
		b = appendString(b, e.ZIPCode)
		b = append(b, `,"lata":`...)
		b = appendString(b, e.LATA)
		b = append(b, `,"rate_center":`...)
		b = appendString(b, e.RateCenter)
		b = append(b, `,"timezone":`...)
		b = appendString(b, e.Timezone)
		b = append(b, '}')
	}
	if m := &r.Messaging; !m.IsZero() {
		b = append(b, `,"messaging":{"provider":`...)
		b = appendString(b, m.Provider)
		if m.Enabled {
			b = append(b, `,"enabled":true`...)
		} else {
			b = append(b, `,"enabled":false`...)
		}
		b = append(b, `,"country":`...)
		b = appendString(b, m.Country)
		b = append(b, `,"country_code":`...)
		b = appendString(b, m.CountryCode)
		b = append(b, `,"reference_id":`...)
		b = appendString(b, m.ReferenceID)
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendWireTime appends t as lnpdb.Time.AppendWire does. A table's times
// are UTC, which it formats from the date and clock directly: the layout
// interpretation of time.AppendFormat was a third of a bulk answer's cost.
func appendWireTime(b []byte, t lnpdb.Time) []byte {
	if t.Location() != time.UTC {
		return t.AppendWire(b)
	}
	year, month, day := t.Date()
	hour, minute, sec := t.Clock()
	if year < 0 || year > 9999 {
		return t.AppendWire(b)
	}
	b = append(b, byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-')
	b = append(b, byte('0'+int(month)/10), byte('0'+int(month)%10), '-', byte('0'+day/10), byte('0'+day%10), 'T')
	b = append(b, byte('0'+hour/10), byte('0'+hour%10), ':', byte('0'+minute/10), byte('0'+minute%10), ':')
	b = append(b, byte('0'+sec/10), byte('0'+sec%10))
	return append(b, "+00:00"...)
}

// newJSONEncoder returns the encoder of every JSON body the API writes:
// encoding/json's, compact, one value per line, without HTML escaping —
// the bodies are application/json, never HTML, and "<API_KEY>" or "AT&T"
// read as they are. The hand-written encoders (appendLRN, appendErrorBody,
// writeGraphQL's usual answer) write its bytes.
func newJSONEncoder(w io.Writer) *json.Encoder { return jsonbody.NewEncoder(w) }

// appendString appends s as a JSON string, as newJSONEncoder writes it. The
// strings of a table are plain printable ASCII almost always and are copied
// as they are; any other string goes through encoding/json, so that
// escaping (control characters, invalid UTF-8, U+2028) is exactly its own.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			var q bytes.Buffer
			_ = newJSONEncoder(&q).Encode(s) // a string always encodes
			return append(b, bytes.TrimSuffix(q.Bytes(), []byte("\n"))...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
