package source

import (
	"fmt"
	"io"

	"github.com/lnpdb/lnpdb/internal/core/nanp"
)

// ReadPortedNPAC reads ported numbers in NPAC's bulk data download shape for
// subscription versions, calling fn for each good record; see [ReadCarriers]
// for the rules of the callback.
//
// The shape is one record a line (lines end in LF, CR or CRLF), no header
// row, fields separated by '|':
//
//	Version Id | TN | LRN | New Current SPID | Activation Timestamp | …
//
// The Version Id and any fields after the fifth are ignored; the timestamp
// is yyyymmddhhmmss in GMT (RFC 3339 and empty are accepted too, as in
// ported.csv). Fields are trimmed of spaces and empty lines skipped. The
// records are the same as [ReadPorted] gives for the same numbers, and row
// errors name the same columns: tn, lrn, spid, activated_at.
func ReadPortedNPAC(r io.Reader, file string, opt Options, fn func(*Ported) error) error {
	return readBDD(r, file, opt, 5, parsePortedNPAC, fn)
}

func parsePortedNPAC(b *bddReader, codes *codeTable, v *Ported) *badField {
	*v = Ported{Line: b.line}
	var err error
	if v.TN, err = numberBytes(b.field(1)); err != nil {
		return &badField{col: "tn", reason: numberBytesReason(b.field(1), err), err: err}
	}
	if v.LRN, err = numberBytes(b.field(2)); err != nil {
		return &badField{col: "lrn", reason: numberBytesReason(b.field(2), err), err: err}
	}
	spid := b.field(3)
	if !isCode(spid) {
		return &badField{col: "spid", reason: emptyOr(spid, "not 4 letters and digits: "+quote(string(spid)))}
	}
	v.SPID = codes.getBytes(spid)
	if v.ActivatedAt, err = parseTime(b.field(4)); err != nil {
		return &badField{col: "activated_at", reason: fmt.Sprintf("%v: %s", err, quote(string(b.field(4)))), err: err}
	}
	return nil
}

// numberBytes parses a TN or LRN field of an NPAC record. Short fields are
// converted to a string on the stack: nanp.ParseDigits does not keep it.
func numberBytes(b []byte) (nanp.Number, error) {
	if len(b) > 11 {
		return 0, nanp.ErrInvalid
	}
	return nanp.ParseDigits(string(b))
}

func numberBytesReason(b []byte, err error) string {
	if len(b) == 0 {
		return "empty"
	}
	return numberReason(string(b), err)
}

// emptyOr returns "empty" for an empty field, else reason.
func emptyOr(b []byte, reason string) string {
	if len(b) == 0 {
		return "empty"
	}
	return reason
}
