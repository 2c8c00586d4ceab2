package source

import "unicode/utf8"

// The public numbering reports are not UTF-8: NANPA's code report writes
// company names in Latin-1 ("TELEF\xd3NICA"), as every public importer of it
// decodes it. A report line that is not valid UTF-8 is decoded as Windows-1252,
// the superset of Latin-1 that such files are written in: 0x80 to 0x9F are
// its 32 entries below, every other byte is the Latin-1 (and Unicode) code
// point of its value. golang.org/x/text has this table, but the library may
// import only the standard library, xxhash, klauspost/compress and x/exp
// (CONTRIBUTING, deps_test.go): 32 entries do not justify a module.

// cp1252 maps the bytes 0x80 to 0x9F to their Windows-1252 code points. The
// five bytes Windows-1252 leaves undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D)
// keep their Latin-1 value, a C1 control character, as the WHATWG encoding
// standard decodes them.
var cp1252 = [32]rune{
	0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, // 80–87
	0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F, // 88–8F
	0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, // 90–97
	0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178, // 98–9F
}

// decodeReport returns b as it is if it is valid UTF-8, else decoded from
// Windows-1252 into UTF-8.
func decodeReport(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	out := make([]byte, 0, len(b)+len(b)/2)
	for _, c := range b {
		switch {
		case c < 0x80:
			out = append(out, c)
		case c < 0xA0:
			out = utf8.AppendRune(out, cp1252[c-0x80])
		default:
			out = utf8.AppendRune(out, rune(c))
		}
	}
	return out
}
