package source

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDecodeReport holds the Windows-1252 table to code points the
// encoding's published mapping gives, and Latin-1 to identity.
func TestDecodeReport(t *testing.T) {
	for in, want := range map[string]string{
		"TELEF\xd3NICA":            "TELEFÓNICA",
		"TELEFÓNICA":               "TELEFÓNICA", // UTF-8 already: kept
		"\x80 \x8a\x8c\x8e\x9f":    "€ ŠŒŽŸ",
		"\x85\x91x\x92\x93y\x94":   "…‘x’“y”",
		"\x96\x97\x99\x9a\x9c\x9e": "–—™šœž",
		"\x81\x8d\x8f\x90\x9d":     "\u0081\u008d\u008f\u0090\u009d",
		"\xa0\xe9\xf1\xfc\xff":     "\u00a0éñüÿ",
		"plain ASCII":              "plain ASCII",
		"":                         "",
	} {
		assert.Equal(t, want, string(decodeReport([]byte(in))), "%q", in)
	}
	// Every byte decodes to one rune, and 0x80–0x9F as the table says.
	for c := 0x80; c <= 0xff; c++ {
		r := []rune(string(decodeReport([]byte{'x', byte(c)})))
		assert.Len(t, r, 2)
		if c >= 0xa0 {
			assert.Equal(t, rune(c), r[1])
		}
	}
	assert.Equal(t, '€', cp1252[0])
	assert.Equal(t, 'Ÿ', cp1252[0x1f])
}
