package nanp

import (
	"errors"
	"fmt"
)

// Number is a NANP number as its 10-digit national number NPA-NXX-XXXX, e.g.
// 2025550123 for +1 202-555-0123. The zero Number is not valid and serves as
// "no number".
//
// The accessors assume a Number below 10^10, as every Number returned by this
// package is; check [Number.Valid] for a Number from elsewhere.
type Number uint64

// ErrInvalid is matched, with errors.Is, by every error this package
// returns. It is lnpdb.ErrInvalidNumber (defined here, so that the root
// package, which parses numbers with this one, can name it), so that the
// lookup packages can hand a parse error to their callers as it is, reason
// included.
var ErrInvalid = errors.New("lnpdb: invalid phone number")

// The errors below are built once so that rejecting an input allocates
// nothing: malformed numbers arrive at the same rate as good ones.
var (
	errEmpty     = fmt.Errorf("%w: empty", ErrInvalid)
	errTooLong   = fmt.Errorf("%w: longer than %d bytes", ErrInvalid, maxInputLen)
	errChar      = fmt.Errorf("%w: only digits, spaces, '-', '.', '(', ')' and a leading '+' are allowed", ErrInvalid)
	errPlus      = fmt.Errorf("%w: '+' must come first and be followed by country code 1 and 10 digits", ErrInvalid)
	errLength    = fmt.Errorf("%w: must be 10 digits, or 11 digits starting with 1", ErrInvalid)
	errCountry   = fmt.Errorf("%w: 11 digits must start with country code 1", ErrInvalid)
	errSeparator = fmt.Errorf("%w: '-' and '.' must follow a digit or ')' and must not end the number", ErrInvalid)
	errParens    = fmt.Errorf("%w: parentheses must enclose exactly the area code", ErrInvalid)
	errDigits    = fmt.Errorf("%w: must be 10 ASCII digits, or 11 starting with 1, without punctuation", ErrInvalid)
	// 10 digits starting with 1 are far more likely country code 1 and a
	// digit short than an area code 1XX: say so rather than blame the NPA.
	errLeadingOne = fmt.Errorf("%w: 10 digits starting with 1: after country code 1 come 10 more digits", ErrInvalid)
)

// maxInputLen bounds the input Parse looks at: the longest sane form,
// "tel:+1 (202) 555-0123" plus parameters, is far shorter.
const maxInputLen = 64

// NPA returns the area code, the first three digits of the national number.
func (n Number) NPA() int { return int(n / 10_000_000) }

// NXX returns the central office (exchange) code, digits 4 to 6.
func (n Number) NXX() int { return int(n / 10_000 % 1000) }

// Line returns the line number, the last four digits (0..9999).
func (n Number) Line() int { return int(n % 10_000) }

// Block returns the thousands digit X of NPA-NXX-XXXX (0..9), which with the
// NPA and NXX names the number's thousands-block.
func (n Number) Block() int { return int(n % 10_000 / 1000) }

// Valid reports whether n is a NANP-valid 10-digit number: NPA [2-9]XX and
// neither N11 nor N9X, NXX [2-9]XX and not N11.
func (n Number) Valid() bool { return n.check() == nil }

func (n Number) check() error {
	switch {
	case n >= 10_000_000_000:
		return errLength
	case npaRules[n.NPA()] != nil:
		return npaRules[n.NPA()]
	case nxxRules[n.NXX()] != nil:
		return nxxRules[n.NXX()]
	}
	return nil
}

// String returns the canonical form: 11 digits, "1" then NPA-NXX-XXXX.
//
// It is not inlined: it allocates anyway, and kept out of its callers it
// leaves them small enough to inline (internal/core/lookup.Answered, on every
// lookup's path).
//
//go:noinline
func (n Number) String() string {
	var buf [11]byte
	return string(n.AppendCanonical(buf[:0]))
}

// AppendCanonical appends the canonical 11 digits of n to dst and returns the
// extended buffer. It allocates nothing when dst has room for 11 more bytes.
// For an n of 10^10 or more it writes the low 10 digits.
func (n Number) AppendCanonical(dst []byte) []byte {
	l := len(dst)
	dst = append(dst, "10000000000"...)
	b := dst[l+1 : l+11]
	v := uint64(n) % 10_000_000_000
	for i := len(b) - 1; i >= 0 && v != 0; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return dst
}

// text lets one parser serve both Parse(string) and ParseBytes([]byte)
// without copying or unsafe conversions.
type text interface{ ~string | ~[]byte }

// Parse parses a phone number in any of the forms in the package doc. It also
// reports whether s was already canonical (exactly 11 ASCII digits starting
// with 1), so that a caller can echo s itself instead of formatting n.
//
// Parse allocates nothing. Every error matches [ErrInvalid].
func Parse(s string) (n Number, canonical bool, err error) {
	if n, ok := ParseCanonical(s); ok {
		return n, true, nil
	}
	return parse(s)
}

// ParseBytes is [Parse] for a byte slice, as CSV readers produce; it does not
// retain b.
func ParseBytes(b []byte) (Number, error) {
	n, _, err := parse(b)
	return n, err
}

// ParseDigits parses the strict form used in data files: exactly 10 ASCII
// digits, or 11 starting with 1, without punctuation, and NANP-valid.
func ParseDigits(s string) (Number, error) {
	leadingOne := len(s) == 10 && s[0] == '1'
	switch {
	case len(s) == 11 && s[0] == '1':
		s = s[1:]
	case len(s) != 10:
		return 0, errDigits
	}
	v, ok := tenDigits(s)
	switch {
	case !ok:
		return 0, errDigits
	case leadingOne:
		return 0, errLeadingOne
	}
	n := Number(v)
	if err := n.check(); err != nil {
		return 0, err
	}
	return n, nil
}

func parse[T text](s T) (Number, bool, error) {
	// Canonical input is the common case: no punctuation scan, no tel: check.
	if len(s) == 11 && s[0] == '1' {
		if v, ok := tenDigits(s[1:]); ok {
			n := Number(v)
			if err := n.check(); err != nil {
				return 0, false, err
			}
			return n, true, nil
		}
	}
	if len(s) > maxInputLen {
		return 0, false, errTooLong
	}
	if hasTelPrefix(s) {
		s = s[4:]
		for i := 0; i < len(s); i++ {
			if s[i] == ';' {
				s = s[:i]
				break
			}
		}
	}
	n, err := parseNumber(s)
	return n, false, err
}

// hasTelPrefix reports whether s starts with "tel:" in any case.
func hasTelPrefix[T text](s T) bool {
	return len(s) >= 4 && s[0]|0x20 == 't' && s[1]|0x20 == 'e' && s[2]|0x20 == 'l' && s[3] == ':'
}

// parseNumber parses a number with optional punctuation, without a tel:
// prefix or parameters, by the rules in the package doc.
func parseNumber[T text](s T) (Number, error) {
	if len(s) == 0 {
		return 0, errEmpty
	}
	// last is the kind of the last byte that was not a space: 0 (none yet),
	// 'd' (digit), '-' (either '-' or '.'), '(', ')' or '+'. openAt and closeAt
	// are the number of digits before '(' and ')', -1 while not seen.
	var (
		v               uint64
		nd              int
		plus            bool
		last            byte
		openAt, closeAt = -1, -1
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if d := c - '0'; d <= 9 {
			if nd++; nd > 11 {
				return 0, errLength
			}
			v = v*10 + uint64(d)
			last = 'd'
			continue
		}
		switch c {
		case ' ':
		case '-', '.':
			if last != 'd' && last != ')' {
				return 0, errSeparator
			}
			last = '-'
		case '(':
			if openAt >= 0 {
				return 0, errParens
			}
			openAt, last = nd, '('
		case ')':
			if openAt < 0 || closeAt >= 0 || last != 'd' {
				return 0, errParens
			}
			closeAt, last = nd, ')'
		case '+':
			if last != 0 || i+1 == len(s) || s[i+1] != '1' {
				return 0, errPlus
			}
			plus, last = true, '+'
		default:
			return 0, errChar
		}
	}
	if last == '-' {
		return 0, errSeparator
	}
	// p is the length of the country-code prefix, 0 or 1.
	p := 0
	switch nd {
	case 11:
		if v/10_000_000_000 != 1 {
			return 0, errCountry
		}
		v -= 10_000_000_000
		p = 1
	case 10:
		if plus {
			return 0, errPlus
		}
		if v/1_000_000_000 == 1 {
			return 0, errLeadingOne
		}
	default:
		return 0, errLength
	}
	if openAt >= 0 && (openAt != p || closeAt != p+3) {
		return 0, errParens
	}
	n := Number(v)
	if err := n.check(); err != nil {
		return 0, err
	}
	return n, nil
}

// tenDigits returns the value of the ten bytes of s, and false when they
// are not all ASCII digits. It checks and combines the first eight as one
// 64-bit word (SWAR) rather than in a chain of ten multiply-adds: parsing
// is on the critical path of every lookup of a canonical number.
func tenDigits[T text](s T) (uint64, bool) {
	_ = s[9]
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	d8, d9 := s[8]-'0', s[9]-'0'
	// Every byte is '0'..'9' (0x30..0x39): its high nibble is 3, and adding
	// 6 does not carry into it.
	const nib, digit = 0xF0F0F0F0F0F0F0F0, 0x3030303030303030
	if x&nib != digit || (x+0x0606060606060606)&nib != digit || d8 > 9 || d9 > 9 {
		return 0, false
	}
	x &= 0x0F0F0F0F0F0F0F0F
	// Pairs, then quads, then all eight: the first digit is the low byte.
	x = (x * (10<<8 + 1)) >> 8 & 0x00FF00FF00FF00FF
	x = (x * (100<<16 + 1)) >> 16 & 0x0000FFFF0000FFFF
	x = (x * (10000<<32 + 1)) >> 32
	return x*100 + uint64(d8)*10 + uint64(d9), true
}
