package format

import (
	"encoding/binary"
	"math/bits"
)

// window is up to 128 bits of a record, starting at the record's first bit.
type window struct{ lo, hi uint64 }

// loadWindow returns the 128 bits that start at bit shift (0..7) of b, which
// holds at least 17 bytes.
func loadWindow(b *[17]byte, shift uint) window {
	lo := binary.LittleEndian.Uint64(b[0:8])
	hi := binary.LittleEndian.Uint64(b[8:16])
	if shift == 0 {
		return window{lo, hi}
	}
	return window{
		lo: lo>>shift | hi<<(64-shift),
		hi: hi>>shift | uint64(b[16])<<(64-shift),
	}
}

// field extracts width bits (1..64) at bit pos (0..127) of w. It has no
// branch: a Go shift by 64 or more gives 0, so of the three terms only
// those that hold the field's bits are not 0 (w.hi<<(64-pos) is w.hi's
// part for pos < 64, w.hi>>(pos-64) the whole field for pos >= 64), and
// the mask is all ones shifted right by 64-width, a count in 0..63 (-width
// & 63, which the compiler sees bounded and shifts by without the compare
// and mask that a count it cannot bound costs; 1<<width - 1 did).
func (w window) field(pos, width uint) uint64 {
	return (w.lo>>pos | w.hi<<(64-pos) | w.hi>>(pos-64)) & (^uint64(0) >> (-width & 63))
}

// widthFor is the number of bits needed to store values 0..n-1 (at least 1).
func widthFor(n int) uint {
	if n <= 1 {
		return 1
	}
	return uint(bits.Len64(uint64(n - 1)))
}
