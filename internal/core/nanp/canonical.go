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
	if len(s) != 11 {
		return 0, false
	}
	p := (*[11]byte)(unsafe.Pointer(unsafe.StringData(s)))
	// Each byte minus '0': a digit gives 0–9; a byte below '0' borrows and
	// sets its high bit, one above '9' gives 10 or more, which adding 0x76
	// carries into the high bit. The lowest bad byte of a word is always
	// caught (the bytes below it neither borrow nor carry), and one bad
	// byte is all it takes.
	const zeros, sixes, highs = 0x3030303030303030, 0x7676767676767676, 0x8080808080808080
	w := binary.LittleEndian.Uint64(p[0:8]) - zeros  // 1 N P A N X X X: the 1, NPA, NXX
	c := binary.LittleEndian.Uint64(p[3:11]) - zeros // A N X X L L L L: the last eight digits
	if (w|(w+sixes)|c|(c+sixes))&highs != 0 {
		return 0, false
	}
	// The leading 1 and the NANP rules (rules.go), on w's digits, in one
	// compare: the first byte whole (adding 0, it takes no carry), and the
	// high bits that adding 0x7E sets in a byte whose digit is 2 or more
	// (the NPA's and the NXX's first digits must be) and adding 0x77 in
	// one whose digit is 9 (the NPA's second digit must not be: N9X).
	const rules = 0x7E<<32 | 0x77<<16 | 0x7E<<8
	const ruleBits, want = 0x80<<32 | 0x80<<16 | 0x80<<8 | 0xFF, 0x80<<32 | 0x80<<8 | 1
	if (w+rules)&ruleBits != want {
		return 0, false
	}
	// Each byte of pw is a digit of w times ten plus the next one, the
	// value of the pair (at most 99: no byte carries into the next): the
	// NPA's first two digits, and the last two of each code, which must
	// not be 11 (N11).
	pw := w * (10<<8 + 1)
	if uint8(pw>>24) == 11 || uint8(pw>>48) == 11 {
		return 0, false
	}
	// c's digits in pairs, quads, then all eight: the first digit is the
	// low byte.
	c = (c * (10<<8 + 1)) >> 8 & 0x00FF00FF00FF00FF
	c = (c * (100<<16 + 1)) >> 16 & 0x0000FFFF0000FFFF
	c = (c * (10000<<32 + 1)) >> 32
	// The NPA's first two digits, then the eight.
	return Number(uint64(uint8(pw>>16))*100_000_000 + c), true
}

// ParseCanonicalPrefix parses ss in order into out, as ParseCanonical
// each one, up to the first that ParseCanonical refuses, and returns how
// many it parsed: a batch's parse, in a loop that keeps no more across
// the calls than it must. out must be at least as long as ss.
func ParseCanonicalPrefix(ss []string, out []uint64) int {
	out = out[:len(ss)]
	for i, s := range ss {
		n, ok := ParseCanonical(s)
		if !ok {
			return i
		}
		out[i] = uint64(n)
	}
	return len(ss)
}
