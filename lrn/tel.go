package lrn

import (
	"github.com/lnpdb/lnpdb/internal/core/nanp"
)

// TelURI is a tel URI with the number portability parameters of RFC 4694,
// as call-routing code writes it after an LRN dip and reads it from a
// signalling message, e.g. tel:+12025550123;npdi;rn=+12025550000.
type TelURI struct {
	// Number is the dialled number, canonical 11 digits.
	Number string
	// RN is the routing number (the LRN) from the rn parameter, canonical 11
	// digits, or "" when the URI carries none (the number is not ported or
	// pooled away).
	RN string
	// NPDI reports the npdi parameter: the number portability dip was done.
	NPDI bool
}

// ParseTelURI parses a tel URI or a SIP URI user part with RFC 4694
// parameters, such as tel:+12025550123;npdi;rn=+12025550000 (the "tel:"
// prefix is optional; the number and rn take any form CONTRACT §1 accepts;
// other parameters are ignored). An unparsable input is an error matching
// [ErrInvalidNumber] that says what is wrong with it.
func ParseTelURI(s string) (TelURI, error) {
	u, err := nanp.ParseTelURI(s)
	if err != nil {
		return TelURI{}, err // matches ErrInvalidNumber and says why
	}
	t := TelURI{Number: u.Number.String(), NPDI: u.NPDI}
	if u.RN != 0 {
		t.RN = u.RN.String()
	}
	return t, nil
}

// TelURI returns the tel URI a switch signals after this lookup: the
// number, npdi (the dip was done) and, when the LRN differs from the number,
// rn=LRN.
func (r Result) TelURI() TelURI {
	t := TelURI{Number: r.PhoneNumber, NPDI: true}
	if r.LRN != r.PhoneNumber {
		t.RN = r.LRN
	}
	return t
}

// String returns t as a tel URI, e.g. tel:+12025550123;npdi;rn=+12025550000:
// "tel:" then [TelURI.SIPUser].
func (t TelURI) String() string {
	var buf [64]byte
	return string(t.appendSIPUser(append(buf[:0], "tel:"...)))
}

// SIPUser returns t as the user part of a SIP URI, as in
// sip:+12025550123;npdi;rn=+12025550000@host;user=phone: "+1" and the
// number, ";npdi" when NPDI is set, and ";rn=+1" and RN when RN is set and
// differs from Number (RFC 4694 order).
//
// Number and RN are written canonically when they parse as numbers, and as
// given otherwise.
func (t TelURI) SIPUser() string {
	var buf [64]byte
	return string(t.appendSIPUser(buf[:0]))
}

func (t TelURI) appendSIPUser(dst []byte) []byte {
	n, _, nerr := nanp.Parse(t.Number)
	rn, rerr := parseOrZero(t.RN)
	if nerr == nil && rerr == nil {
		return nanp.TelURI{Number: n, RN: rn, NPDI: t.NPDI}.AppendSIPUser(dst)
	}
	// Not both numbers: write them as given, in the same shape.
	dst = append(append(dst, '+'), t.Number...)
	if t.NPDI {
		dst = append(dst, ";npdi"...)
	}
	if t.RN != "" && t.RN != t.Number {
		dst = append(append(dst, ";rn=+"...), t.RN...)
	}
	return dst
}

// parseOrZero parses s, mapping "" to the zero Number without an error.
func parseOrZero(s string) (nanp.Number, error) {
	if s == "" {
		return 0, nil
	}
	n, _, err := nanp.Parse(s)
	return n, err
}
