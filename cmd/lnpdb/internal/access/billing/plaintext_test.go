package billing

import "testing"

// TestEscaped: what PlainText refuses is written as its escape, the rest
// as it is, and what comes out is plain text.
func TestEscaped(t *testing.T) {
	for in, want := range map[string]string{
		"":                     "",
		"ci runner é 東京 👍":     "ci runner é 東京 👍",
		`a\b`:                  `a\b`,
		"invoice\u202egpj.exe": `invoice\u202egpj.exe`,
		"a\nb\tc\x00":          `a\nb\tc\x00`,
		"zero\u200bwidth":      `zero\u200bwidth`,
		"soft\u00adhyphen":     `soft\u00adhyphen`,
		"line\u2028sep":        `line\u2028sep`,
		"private\ue000":        `private\ue000`,
		"next\u0085line":       `next\u0085line`,
		"bad\xffbyte\xc3":      `bad\xffbyte\xc3`,
	} {
		got := Escaped(in)
		if got != want {
			t.Errorf("Escaped(%q) = %q, want %q", in, got, want)
		}
		if !PlainText(got) {
			t.Errorf("Escaped(%q) = %q is not plain text", in, got)
		}
	}
}
