package gen

import (
	"math"
	"time"
)

// now is the instant the generator treats as the present, fixed so that its
// output does not depend on the clock: every time it writes lies before it,
// and "recent" activations are recent relative to it.
var now = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

// Now returns the instant generated data treats as the present,
// 2026-11-22T00:00:00Z. A test that judges recency (trust's "ported in the
// last 7 days") should use it as its clock.
func Now() time.Time { return now }

var (
	nowUnix          = now.Unix()
	portingStart     = time.Date(1998, 1, 1, 0, 0, 0, 0, time.UTC).Unix()   // NPAC ports
	wirelessLNPStart = time.Date(2003, 11, 24, 0, 0, 0, 0, time.UTC).Unix() // wireless number portability
	poolingStart     = time.Date(2002, 3, 15, 0, 0, 0, 0, time.UTC).Unix()  // national thousands-block pooling
	complaintsStart  = time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
)

const day = 86400

// activation draws an activation time in [from, now): with probability
// recent in the last 30 days, else with a density that grows linearly
// towards now (porting has grown every year).
func activation(r *rng, from int64, recent float64) int64 {
	if r.chance(recent) {
		return nowUnix - 1 - int64(r.intn(30*day))
	}
	end := nowUnix - 30*day
	return from + int64(float64(end-from)*math.Sqrt(r.float()))
}

// rfcOffsets are the numeric offsets (minutes east of UTC) an RFC 3339 time
// may carry besides Z.
var rfcOffsets = []int{-300, -360, -420, -480, -240, -600}

// appendTime appends t in one of the forms the sources accept: NPAC's
// yyyymmddhhmmss in GMT, or RFC 3339 in UTC (Z) or with a numeric offset.
func appendTime(b []byte, r *rng, t int64) []byte {
	switch u := r.float(); {
	case u < 0.55:
		return appendNPAC(b, t)
	case u < 0.9:
		return appendRFC3339(b, t, 0, true)
	default:
		return appendRFC3339(b, t, rfcOffsets[r.intn(len(rfcOffsets))], false)
	}
}

// appendNPAC appends t (Unix seconds) as yyyymmddhhmmss, GMT.
func appendNPAC(b []byte, t int64) []byte {
	y, mo, d, h, mi, s := civil(t)
	b = append4(b, y)
	b = append2(b, mo)
	b = append2(b, d)
	b = append2(b, h)
	b = append2(b, mi)
	return append2(b, s)
}

// appendRFC3339 appends t as RFC 3339 at an offset of off minutes east of
// UTC, written Z when zulu is set (off must then be 0).
func appendRFC3339(b []byte, t int64, off int, zulu bool) []byte {
	y, mo, d, h, mi, s := civil(t + int64(off)*60)
	b = append4(b, y)
	b = append(b, '-')
	b = append2(b, mo)
	b = append(b, '-')
	b = append2(b, d)
	b = append(b, 'T')
	b = append2(b, h)
	b = append(b, ':')
	b = append2(b, mi)
	b = append(b, ':')
	b = append2(b, s)
	if zulu {
		return append(b, 'Z')
	}
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	b = append(b, sign)
	b = append2(b, off/60)
	b = append(b, ':')
	return append2(b, off%60)
}

// civil splits Unix seconds (from 1970 on) into a UTC civil date and time
// (Howard Hinnant's days-to-civil algorithm).
func civil(t int64) (year, month, dayOfMonth, hour, minute, sec int) {
	days, rem := t/day, int(t%day)
	z := days + 719468
	era := z / 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	dayOfMonth = int(doy - (153*mp+2)/5 + 1)
	month = int(mp + 3)
	if mp >= 10 {
		month = int(mp - 9)
	}
	year = int(yoe + era*400)
	if month <= 2 {
		year++
	}
	return year, month, dayOfMonth, rem / 3600, rem / 60 % 60, rem % 60
}

func append2(b []byte, v int) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }

func append4(b []byte, v int) []byte {
	return append(b, byte('0'+v/1000), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
}
