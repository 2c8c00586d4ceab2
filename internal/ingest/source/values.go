package source

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lnpdb/lnpdb/internal/core/nanp"
)

// text is what the value parsers read: CSV fields are strings, NPAC fields
// are slices of the line buffer.
type text interface{ ~string | ~[]byte }

// maxTime is 2106-01-01T00:00:00Z, the first second a table cannot store.
const maxTime = 4291747200

// ParseTime parses a time as the source files write it: RFC 3339 with any
// offset (fractional seconds are dropped), or NPAC's yyyymmddhhmmss in GMT.
// It returns Unix seconds; "" gives 0, which means "no time" (so does the
// epoch itself). A time before 1970 or from 2106 on is [ErrTimeRange]; a
// malformed one is [ErrTimeSyntax].
func ParseTime(s string) (int64, error) { return parseTime(s) }

func parseTime[T text](s T) (int64, error) {
	switch {
	case len(s) == 0:
		return 0, nil
	case len(s) == 14:
		return parseNPACTime(s)
	default:
		return parseRFC3339(s)
	}
}

// parseNPACTime parses yyyymmddhhmmss, GMT.
func parseNPACTime[T text](s T) (int64, error) {
	var v [6]int
	w := [6]int{4, 2, 2, 2, 2, 2}
	p := 0
	for i, n := range w {
		d, ok := atoi(s[p : p+n])
		if !ok {
			return 0, ErrTimeSyntax
		}
		v[i], p = d, p+n
	}
	return unixTime(v[0], v[1], v[2], v[3], v[4], v[5], 0)
}

// parseRFC3339 parses YYYY-MM-DDTHH:MM:SS[.frac](Z|±hh:mm), case-insensitive
// in T and Z as RFC 3339 allows.
func parseRFC3339[T text](s T) (int64, error) {
	if len(s) < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':' {
		return 0, ErrTimeSyntax
	}
	year, ok1 := atoi(s[0:4])
	month, ok2 := atoi(s[5:7])
	day, ok3 := atoi(s[8:10])
	hour, ok4 := atoi(s[11:13])
	minute, ok5 := atoi(s[14:16])
	sec, ok6 := atoi(s[17:19])
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 {
		return 0, ErrTimeSyntax
	}
	rest := s[19:]
	if rest[0] == '.' {
		n := 1
		for n < len(rest) && isDigit(rest[n]) {
			n++
		}
		if n == 1 {
			return 0, ErrTimeSyntax
		}
		rest = rest[n:]
	}
	offset := 0
	switch {
	case len(rest) == 1 && (rest[0] == 'Z' || rest[0] == 'z'):
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, ok1 := atoi(rest[1:3])
		om, ok2 := atoi(rest[4:6])
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return 0, ErrTimeSyntax
		}
		offset = (oh*60 + om) * 60
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return 0, ErrTimeSyntax
	}
	return unixTime(year, month, day, hour, minute, sec, offset)
}

// unixTime checks the fields of a civil time and returns its Unix seconds,
// offset seconds east of UTC.
func unixTime(year, month, day, hour, minute, sec, offset int) (int64, error) {
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || sec > 59 {
		return 0, ErrTimeSyntax
	}
	t := daysFromCivil(year, month, day)*86400 + int64(hour*3600+minute*60+sec-offset)
	if t < 0 || t >= maxTime {
		return 0, ErrTimeRange
	}
	return t, nil
}

// daysFromCivil returns the days from 1970-01-01 to a date of the proleptic
// Gregorian calendar (H. Hinnant's algorithm): time.Date is several times
// slower, and this runs for most rows of a ported file.
func daysFromCivil(year, month, day int) int64 {
	y := int64(year)
	if month <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := int64(month+9) % 12 // March is 0
	doy := (153*mp+2)/5 + int64(day) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// ParseBool parses a flag: true/false, 1/0 or Y/N, in any case. Anything else
// is [ErrBool].
func ParseBool(s string) (bool, error) { return parseBool(s) }

func parseBool[T text](s T) (bool, error) {
	switch len(s) {
	case 1:
		switch s[0] {
		case '1', 'Y', 'y':
			return true, nil
		case '0', 'N', 'n':
			return false, nil
		}
	case 4:
		if equalFold(s, "true") {
			return true, nil
		}
	case 5:
		if equalFold(s, "false") {
			return false, nil
		}
	}
	return false, ErrBool
}

// equalFold reports whether s equals the ASCII word w, both in any case.
func equalFold[T text](s T, w string) bool {
	if len(s) != len(w) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if lower(s[i]) != lower(w[i]) {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' }

// atoi parses a short run of ASCII digits (none is not a number).
func atoi[T text](s T) (int, bool) {
	if len(s) == 0 || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// allDigits reports whether s is 1 to max ASCII digits.
func allDigits(s string, max int) bool {
	if len(s) == 0 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// allLetters reports whether s is exactly n ASCII letters.
func allLetters(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isLetter(s[i]) {
			return false
		}
	}
	return true
}

// isCode reports whether s is an OCN or SPID: 4 ASCII letters and digits.
func isCode[T text](s T) bool {
	if len(s) != 4 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) && !isLetter(s[i]) {
			return false
		}
	}
	return true
}

// parseCode3 parses an NPA or NXX: three digits. The NANP rules on the
// value are nanp.CheckNPA's and nanp.CheckNXX's.
func parseCode3(s string) (int, bool) {
	if len(s) != 3 {
		return 0, false
	}
	return atoi(s)
}

// badText returns why s is unfit for a free-text field, or "" if it is fit:
// it must be valid UTF-8 without control characters.
func badText(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return "control character in " + quote(s)
		}
	}
	if !utf8.ValidString(s) {
		return "not valid UTF-8: " + quote(s)
	}
	return ""
}

// quote quotes a value for an error message, cut short if it is long.
func quote(s string) string {
	const max = 40
	if len(s) > max {
		return strconv.Quote(s[:max]) + "..."
	}
	return strconv.Quote(s)
}

// numberReason explains why nanp.ParseDigits rejected s: the NANP rule it
// breaks when it has a number's shape (an N11 or N9X code, say), else that
// it is not one.
func numberReason(s string, err error) string {
	if rule, ok := nanp.Rule(err); ok {
		return rule + ": " + quote(s)
	}
	reason := "not a 10-digit NANP number: " + quote(s)
	if (len(s) == 10 || len(s) == 11) && allDigits(s, 11) {
		reason += " (" + strings.TrimPrefix(err.Error(), nanp.ErrInvalid.Error()+": ") + ")"
	}
	return reason
}
