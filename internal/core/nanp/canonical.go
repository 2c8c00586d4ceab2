package nanp

import (
	"encoding/binary"
	"unsafe"
)

// ParseCanonical parses the canonical form, 1NXXNXXXXXX, and reports false
// for anything else, including a canonical-looking number that breaks a
// NANP rule: Parse then takes the general path, which says why. A lookup's
// hot path calls it first and Parse only when it reports false: it is a
// leaf, with no frame, where Parse adds a call. It is the form softswitches
// and REST bodies send, so it is parsed without a loop or a branch per
// digit (SWAR): the ten digits after the 1 are read as two
// overlapping little-endian words, bytes 1–8 and 3–10, checked for digits
// and against the NANP rules a whole word at a time, and the second word's
// eight digits are combined by multiply-shift.
func ParseCanonical(s string) (Number, bool) {
	if len(s) != 11 || s[0] != '1' {
		return 0, false
	}
	p := (*[11]byte)(unsafe.Pointer(unsafe.StringData(s)))
	// Each byte minus '0': a digit gives 0–9; a byte below '0' borrows and
	// sets its high bit, one above '9' gives 10 or more, which adding 0x76
	// carries into the high bit. The lowest bad byte of a word is always
	// caught (the bytes below it neither borrow nor carry), and one bad
	// byte is all it takes.
	const zeros, sixes, highs = 0x3030303030303030, 0x7676767676767676, 0x8080808080808080
	w := binary.LittleEndian.Uint64(p[1:9]) - zeros  // N P A N X X X L: NPA, NXX, the line's first digit
	c := binary.LittleEndian.Uint64(p[3:11]) - zeros // A N X X L L L L: the last eight digits
	if (w|(w+sixes)|c|(c+sixes))&highs != 0 {
		return 0, false
	}
	// The NANP rules (rules.go), on w's digits: adding 0x7E sets a byte's
	// high bit when its digit is 2 or more (the NPA's and the NXX's first
	// digits must be), adding 0x77 when it is 9 (the NPA's second digit
	// must not be: N9X); and neither code may be N11.
	const rules = 0x7E<<24 | 0x77<<8 | 0x7E
	const ruleBits, want = 0x80<<24 | 0x80<<8 | 0x80, 0x80<<24 | 0x80
	if (w+rules)&ruleBits != want || uint16(w>>8) == 0x0101 || uint16(w>>32) == 0x0101 {
		return 0, false
	}
	// c's digits in pairs, quads, then all eight: the first digit is the
	// low byte.
	c = (c * (10<<8 + 1)) >> 8 & 0x00FF00FF00FF00FF
	c = (c * (100<<16 + 1)) >> 16 & 0x0000FFFF0000FFFF
	c = (c * (10000<<32 + 1)) >> 32
	// The NPA's first two digits, then the eight.
	return Number((uint64(uint8(w))*10+uint64(uint8(w>>8)))*100_000_000 + c), true
}
