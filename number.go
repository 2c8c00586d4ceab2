package lnpdb

import "github.com/lnpdb/lnpdb/internal/core/nanp"

// Number is a NANP phone number, parsed and checked once by ParseNumber,
// so that one parse serves several lookups: each lookup package has a form
// that takes one (lrn.LookupNumber, cnam.LookupNumber, …). The zero Number
// is no number; the lookups refuse it with ErrInvalidNumber.
//
// A Number holds its canonical form, so that String and the lookups that
// take a Number allocate nothing. Numbers compare equal with == when they
// are the same number.
type Number struct {
	national  uint64 // NPA-NXX-XXXX, 2025550123
	canonical string // 12025550123
}

// ParseNumber parses a phone number in any form CONTRACT §1 accepts
// (12025550123, +1 (202) 555-0123, 202.555.0123, tel:+1-202-555-0123, …)
// and checks it against the NANP rules (an NPA and NXX of the form
// NXX, no N11 area code, …). Every error matches ErrInvalidNumber and
// says what is wrong. It allocates only for input that is not already in
// canonical form.
func ParseNumber(s string) (Number, error) {
	n, canonical, err := nanp.Parse(s)
	if err != nil {
		return Number{}, err
	}
	if !canonical {
		s = n.String()
	}
	return Number{national: uint64(n), canonical: s}, nil
}

// String is the number's canonical form, 11 digits starting with 1
// (12025550123), as every answer's phone_number field gives it; "" for
// the zero Number.
func (n Number) String() string { return n.canonical }

// National is the 10-digit national number NPA-NXX-XXXX (2025550123), what
// format.DB's Get and GetInto take; 0 for the zero Number.
func (n Number) National() uint64 { return n.national }

// IsZero reports whether n is the zero Number, no number.
func (n Number) IsZero() bool { return n.national == 0 }
