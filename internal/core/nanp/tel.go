package nanp

import (
	"fmt"
	"strings"
)

// TelURI is a parsed tel URI with the number portability parameters of
// RFC 4694, as call-routing code reads and writes them after an LRN dip.
type TelURI struct {
	// Number is the dialled number.
	Number Number
	// RN is the routing number (the LRN) from the "rn" parameter, 0 if absent.
	RN Number
	// NPDI reports the "npdi" parameter: a number portability dip was done.
	NPDI bool
}

var (
	errTelTooLong = fmt.Errorf("%w: tel URI longer than %d bytes", ErrInvalid, maxTelURILen)
	errTelParam   = fmt.Errorf("%w: malformed tel URI parameter", ErrInvalid)
	errTelNPDI    = fmt.Errorf("%w: npdi value must be absent, yes/true/1 or no/false/0", ErrInvalid)
	errTelRN      = fmt.Errorf("%w: rn parameter is not a valid NANP number", ErrInvalid)
	errTelDupRN   = fmt.Errorf("%w: more than one rn parameter", ErrInvalid)
)

// maxTelURILen bounds ParseTelURI's input; the longest form it writes is 37
// bytes, and field forms with a few more parameters stay well under this.
const maxTelURILen = 256

// ParseTelURI parses the forms of tel URI seen in the field, such as
//
//	tel:+12025550123;npdi;rn=+12025550000
//	tel:+12025550123;rn=2025550000;npdi=yes
//	+12025550123;npdi;rn=+12025550000   (a SIP URI user part)
//
// The "tel:" prefix is optional and matched in any case. The number takes any
// form [Parse] accepts. Parameters may come in any order, their names in any
// case; "rn" takes a number in any form Parse accepts (with or without +1 or
// 1) and must be NANP-valid; "npdi" may carry a value yes/true/1 or
// no/false/0. Other parameters are checked for syntax (a name of letters,
// digits and '-', a value of printable ASCII) and ignored; empty ones, as
// from a trailing ';', are skipped.
//
// ParseTelURI allocates nothing. Every error matches [ErrInvalid].
func ParseTelURI(s string) (TelURI, error) {
	if len(s) > maxTelURILen {
		return TelURI{}, errTelTooLong
	}
	if hasTelPrefix(s) {
		s = s[4:]
	}
	num, params, _ := strings.Cut(s, ";")
	n, err := parseNumber(num)
	if err != nil {
		return TelURI{}, err
	}
	t := TelURI{Number: n}
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		if p == "" {
			continue
		}
		name, value, hasValue := strings.Cut(p, "=")
		if !validParamName(name) || hasValue && !validParamValue(value) {
			return TelURI{}, errTelParam
		}
		switch {
		case strings.EqualFold(name, "npdi"):
			switch {
			case !hasValue, strings.EqualFold(value, "yes"), strings.EqualFold(value, "true"), value == "1":
				t.NPDI = true
			case strings.EqualFold(value, "no"), strings.EqualFold(value, "false"), value == "0":
				t.NPDI = false
			default:
				return TelURI{}, errTelNPDI
			}
		case strings.EqualFold(name, "rn"):
			if !hasValue {
				return TelURI{}, errTelRN
			}
			if t.RN != 0 {
				return TelURI{}, errTelDupRN
			}
			if t.RN, err = parseNumber(value); err != nil {
				return TelURI{}, errTelRN
			}
		}
	}
	return t, nil
}

// validParamName reports whether s is an RFC 3966 pname: 1*(alphanum / "-").
func validParamName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// validParamValue reports whether s is a non-empty run of printable ASCII
// other than space; it is looser than RFC 3966 pvalue, which is enough to
// keep control bytes and non-ASCII out of what gets ignored.
func validParamValue(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

// AppendTelURI appends t as a tel URI, "tel:" followed by
// [TelURI.AppendSIPUser], e.g. "tel:+12025550123;npdi;rn=+12025550000".
func (t TelURI) AppendTelURI(dst []byte) []byte {
	return t.AppendSIPUser(append(dst, "tel:"...))
}

// String returns t in tel URI form, as [TelURI.AppendTelURI] writes it.
func (t TelURI) String() string {
	var buf [40]byte
	return string(t.AppendTelURI(buf[:0]))
}

// AppendSIPUser appends t as a SIP URI user part: "+1" and the number, then
// ";npdi" when NPDI is set (the dip was done), then ";rn=+1" and the routing
// number when RN is set and differs from Number (RFC 4694 carries rn only for
// a number ported or pooled elsewhere), e.g. "+12025550123;npdi;rn=+12025550000".
// Parameters come in the lexicographic order RFC 3966 asks for.
func (t TelURI) AppendSIPUser(dst []byte) []byte {
	dst = t.Number.AppendCanonical(append(dst, '+'))
	if t.NPDI {
		dst = append(dst, ";npdi"...)
	}
	if t.RN != 0 && t.RN != t.Number {
		dst = t.RN.AppendCanonical(append(dst, ";rn=+"...))
	}
	return dst
}
