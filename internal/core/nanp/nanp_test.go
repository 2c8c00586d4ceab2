package nanp

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseAccepts(t *testing.T) {
	const want = Number(2025550123)
	tests := []struct {
		in        string
		canonical bool
	}{
		{"12025550123", true},
		{"+12025550123", false},
		{"2025550123", false},
		// punctuation
		{"+1 (202) 555-0123", false},
		{"+1 202 555 0123", false},
		{"+1-202-555-0123", false},
		{"+1.202.555.0123", false},
		{"+1(202)555-0123", false},
		{"1-202-555-0123", false},
		{"1 (202) 555-0123", false},
		{"1(202)5550123", false},
		{"1.202.555.0123", false},
		{"(202) 555-0123", false},
		{"(202)555-0123", false},
		{"(202)-555-0123", false},
		{"( 202 ) 555 0123", false},
		{"202.555.0123", false},
		{"202-555-0123", false},
		{"202 555 0123", false},
		{"202-555.0123", false},
		{"202 - 555 - 0123", false},
		{"20 25 55 01 23", false},
		{"  +1 202 555 0123  ", false},
		{" 12025550123", false},
		{"12025550123 ", false},
		// tel URIs
		{"tel:+12025550123", false},
		{"tel:+12025550123;npdi;rn=+12025550000", false},
		{"TEL:+1-202-555-0123;NPDI", false},
		{"Tel:2025550123", false},
		{"tel:12025550123;rn=2025550000;npdi=yes", false},
		{"tel:+1(202)555-0123;ext=12", false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			n, canonical, err := Parse(tc.in)
			require.NoError(t, err)
			assert.Equal(t, want, n)
			assert.Equal(t, tc.canonical, canonical)

			n, err = ParseBytes([]byte(tc.in))
			require.NoError(t, err)
			assert.Equal(t, want, n)
		})
	}
}

func TestParseValidEdges(t *testing.T) {
	tests := []struct {
		in   string
		want Number
	}{
		{"12002000000", 2002000000}, // lowest NPA and NXX
		{"19899999999", 9899999999}, // highest NPA: 99X is N9X
		{"12122125555", 2122125555}, // 212: ends in 1 and 2, not N11
		{"12212215555", 2212215555}, // 221 as NPA and NXX
		{"13105551234", 3105551234}, // 310: middle 1, not N11
		{"19195551234", 9195551234}, // 919: middle 1
		{"18005550199", 8005550199}, // toll-free
		{"12022995551", 2022995551}, // NXX 299
		{"12029905551", 2029905551}, // NXX 990: N9X is fine for an NXX
		{"12025550000", 2025550000}, // line 0000
		{"12028889999", 2028889999}, // line 9999
		{"+1 800 555 0199", 8005550199},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			n, _, err := Parse(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, n)
			assert.True(t, n.Valid())
		})
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name string
		in   string
		err  error
	}{
		{"empty", "", errEmpty},
		{"spaces only", "   ", errLength},
		{"9 digits", "202555012", errLength},
		{"12 digits", "120255501234", errLength},
		{"12 digits punctuated", "+1 202 555 01234", errLength},
		{"11 digits not 1", "22025550123", errCountry},
		{"leading 1 leaves 9", "1202555012", errLeadingOne},
		{"leading 1 leaves 9 punctuated", "1-202-555-012", errLeadingOne},
		{"plus 2", "+22025550123", errPlus},
		{"plus 44", "+442071838750", errPlus},
		{"plus 10 digits", "+2025550123", errPlus},
		{"plus 1 then 9", "+1202555012", errPlus},
		{"double plus", "++12025550123", errPlus},
		{"plus in middle", "1+2025550123", errPlus},
		{"plus at end", "2025550123+", errPlus},
		{"plus after paren", "(+1) 202 555 0123", errPlus},
		{"plus then space", "+ 12025550123", errPlus},
		{"second plus", "+1 +202 555 0123", errPlus},
		{"NPA 0XX", "10205550123", npaRules[20]},
		{"NPA 1XX", "11205550123", npaRules[120]},
		{"NPA 0XX 10 digits", "0205550123", npaRules[20]},
		{"NPA 1XX 10 digits", "1205550123", errLeadingOne},
		{"NPA 211", "12115550123", npaRules[211]},
		{"NPA 411", "4115550123", npaRules[411]},
		{"NPA 911", "+1 911 555 0123", npaRules[911]},
		{"NPA 290", "12905550123", npaRules[290]},
		{"NPA 999", "19995550123", npaRules[999]},
		{"NPA 890", "8905550123", npaRules[890]},
		{"NXX 0XX", "12020550123", nxxRules[55]},
		{"NXX 1XX", "12021550123", nxxRules[155]},
		{"NXX 110", "12021105555", nxxRules[110]},
		{"NXX 211", "12022110123", nxxRules[211]},
		{"NXX 511", "12025110123", nxxRules[511]},
		{"NXX 911", "2029110123", nxxRules[911]},
		{"letters", "202555CALL", errChar},
		{"letter x", "12025550123x", errChar},
		{"vanity", "1-800-FLOWERS", errChar},
		{"fullwidth digit", "１2025550123", errChar},
		{"all fullwidth", "２０２５５５０１２３", errChar},
		{"arabic-indic digits", "٢٠٢٥٥٥٠١٢٣", errChar},
		{"NUL inside", "1202555\x000123", errChar},
		{"NUL after", "12025550123\x00", errChar},
		{"tab", "202\t555\t0123", errChar},
		{"newline", "2025550123\n", errChar},
		{"nbsp", "202\u00a0555\u00a00123", errChar},
		{"slash", "202/555/0123", errChar},
		{"semicolon without tel", "+12025550123;npdi", errChar},
		{"sip user with tel params", "+12025550123;rn=+12025550000", errChar},
		{"leading dash", "-2025550123", errSeparator},
		{"trailing dash", "202-555-0123-", errSeparator},
		{"trailing dot", "202.555.0123.", errSeparator},
		{"double dash", "202--555-0123", errSeparator},
		{"dot dash", "202.-555-0123", errSeparator},
		{"dash after paren open", "(-202) 555-0123", errSeparator},
		{"dash after plus", "+-12025550123", errPlus},
		{"paren not NPA", "(2025) 55-0123", errParens},
		{"paren around all", "(2025550123)", errParens},
		{"paren around country", "(1) 202 555 0123", errParens},
		{"paren around NXX", "202 (555) 0123", errParens},
		{"unclosed paren", "(202 555-0123", errParens},
		{"unopened paren", "202) 555-0123", errParens},
		{"two pairs", "(202) (555) 0123", errParens},
		{"nested", "((202)) 555-0123", errParens},
		{"empty parens", "() 2025550123", errParens},
		{"dash before close", "(202-) 555-0123", errParens},
		{"reversed", ")202( 555-0123", errParens},
		{"too long", strings.Repeat(" ", 60) + "2025550123", errTooLong},
		{"huge", strings.Repeat("1", 1<<20), errTooLong},
		{"tel empty", "tel:", errEmpty},
		{"tel params only", "tel:;npdi", errEmpty},
		{"tel bad number", "tel:+2025550123;npdi", errPlus},
		{"tel twice", "tel:tel:+12025550123", errChar},
		{"tel without colon", "tel+12025550123", errChar},
		{"sip uri", "sip:+12025550123@example.com", errChar},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, canonical, err := Parse(tc.in)
			require.ErrorIs(t, err, ErrInvalid)
			assert.Same(t, tc.err, err, "want %v, got %v", tc.err, err)
			assert.Zero(t, n)
			assert.False(t, canonical)

			n, err = ParseBytes([]byte(tc.in))
			assert.Same(t, tc.err, err)
			assert.Zero(t, n)
		})
	}
}

func TestParseDigits(t *testing.T) {
	for _, in := range []string{"2025550123", "12025550123"} {
		n, err := ParseDigits(in)
		require.NoError(t, err, in)
		assert.Equal(t, Number(2025550123), n)
	}
	for _, tc := range []struct {
		in  string
		err error
	}{
		{"", errDigits},
		{"202555012", errDigits},
		{"22025550123", errDigits},
		{"120255501234", errDigits},
		{"+2025550123", errDigits},
		{"+12025550123", errDigits},
		{"202-555-0123", errDigits},
		{"202555012x", errDigits},
		{"1202555012\x00", errDigits},
		{"1202555012", errLeadingOne},
		{"2115550123", npaRules[211]},
		{"2025110123", nxxRules[511]},
		{"12021550123", nxxRules[155]},
	} {
		n, err := ParseDigits(tc.in)
		assert.Same(t, tc.err, err, "%q", tc.in)
		assert.Zero(t, n)
	}
}

func TestNumberParts(t *testing.T) {
	n := Number(2025550123)
	assert.Equal(t, 202, n.NPA())
	assert.Equal(t, 555, n.NXX())
	assert.Equal(t, 123, n.Line())
	assert.Equal(t, 0, n.Block())
	assert.Equal(t, "12025550123", n.String())

	n = Number(9897659876)
	assert.Equal(t, 989, n.NPA())
	assert.Equal(t, 765, n.NXX())
	assert.Equal(t, 9876, n.Line())
	assert.Equal(t, 9, n.Block())
	assert.Equal(t, "19897659876", n.String())
}

func TestAppendCanonical(t *testing.T) {
	assert.Equal(t, "x12025550123", string(Number(2025550123).AppendCanonical([]byte("x"))))
	assert.Equal(t, "12002000000", string(Number(2002000000).AppendCanonical(nil)))
	// Out-of-range values still write 11 bytes; Valid says they are not numbers.
	assert.Equal(t, "10000000000", Number(0).String())
	assert.Equal(t, "10000000042", Number(42).String())
	assert.Equal(t, "12025550123", Number(12025550123).String())
	assert.False(t, Number(12025550123).Valid())
	assert.False(t, Number(0).Valid())
}

func TestValid(t *testing.T) {
	valid := 0
	for npa := 0; npa < 1000; npa++ {
		if Number(npa*10_000_000 + 5550123).Valid() {
			valid++
		}
	}
	// 800 NPAs of [2-9]XX, less 8 N11 and 80 N9X.
	assert.Equal(t, 712, valid)

	valid = 0
	for nxx := 0; nxx < 1000; nxx++ {
		if Number(2020000123 + nxx*10_000).Valid() {
			valid++
		}
	}
	// 800 NXXs of [2-9]XX, less 8 N11.
	assert.Equal(t, 792, valid)
}

func TestErrors(t *testing.T) {
	for _, err := range []error{errEmpty, errTooLong, errChar, errPlus, errLength, errCountry,
		errSeparator, errParens, errDigits, errLeadingOne, npaRules[911], nxxRules[911],
		errTelTooLong, errTelParam, errTelNPDI, errTelRN, errTelDupRN} {
		assert.True(t, errors.Is(err, ErrInvalid), err.Error())
		assert.True(t, strings.HasPrefix(err.Error(), "lnpdb: invalid phone number: "), err.Error())
	}
}

func TestAllocs(t *testing.T) {
	buf := make([]byte, 0, 64)
	tests := map[string]func(){
		"Parse canonical":   func() { _, _, _ = Parse("12025550123") },
		"Parse punctuated":  func() { _, _, _ = Parse("+1 (202) 555-0123") },
		"Parse tel":         func() { _, _, _ = Parse("tel:+12025550123;npdi;rn=+12025550000") },
		"Parse invalid":     func() { _, _, _ = Parse("1202555012x") },
		"Parse bad NPA":     func() { _, _, _ = Parse("12115550123") },
		"ParseBytes":        func() { _, _ = ParseBytes(buf[:0]) },
		"ParseDigits":       func() { _, _ = ParseDigits("2025550123") },
		"AppendCanonical":   func() { buf = Number(2025550123).AppendCanonical(buf[:0]) },
		"ParseTelURI":       func() { _, _ = ParseTelURI("tel:+12025550123;rn=2025550000;npdi=yes;foo=bar") },
		"ParseTelURI bad":   func() { _, _ = ParseTelURI("tel:+12025550123;rn=x") },
		"AppendTelURI":      func() { buf = TelURI{2025550123, 2025550000, true}.AppendTelURI(buf[:0]) },
		"AppendSIPUser":     func() { buf = TelURI{2025550123, 2025550000, true}.AppendSIPUser(buf[:0]) },
		"Valid":             func() { _ = Number(2025550123).Valid() },
		"ParseBytes filled": func() { _, _ = ParseBytes(append(buf[:0], "202.555.0123"...)) },
	}
	for name, f := range tests {
		assert.Zero(t, testing.AllocsPerRun(100, f), name)
	}
}

// TestParseCanonicalEveryCode runs the canonical fast path over every NPA
// and NXX, each with a line whose digits vary, against the general path.
func TestParseCanonicalEveryCode(t *testing.T) {
	buf := []byte("10000000000")
	for code := range 1_000_000 {
		npa, nxx, line := code/1000, code%1000, (code*7919)%10000
		for i, v := range []int{npa / 100, npa / 10 % 10, npa % 10, nxx / 100, nxx / 10 % 10, nxx % 10,
			line / 1000, line / 100 % 10, line / 10 % 10, line % 10} {
			buf[1+i] = byte('0' + v)
		}
		s := string(buf)
		fast, ok := ParseCanonical(s)
		slow, canonical, err := parse(s)
		if ok != (err == nil && canonical) || ok && fast != slow {
			t.Fatalf("ParseCanonical(%q) = %v, %v; the general path: %v, %v, %v", s, fast, ok, slow, canonical, err)
		}
	}
}

// TestParseCanonicalPrefix holds a batch's parse to ParseCanonical: it
// parses up to the first input ParseCanonical refuses (a rule broken, a
// form not canonical), and stops there.
func TestParseCanonicalPrefix(t *testing.T) {
	ok := []string{"12025550123", "13125550199", "19725550100", "12125551234"}
	for _, bad := range []string{"2025550123", "+12025550123", "12115550123", "12025110123", "19995550123", "1202555012x", ""} {
		for k := 0; k <= len(ok); k++ {
			ss := append(append(append([]string{}, ok[:k]...), bad), ok[k:]...)
			out := make([]uint64, len(ss))
			if got := ParseCanonicalPrefix(ss, out); got != k {
				t.Fatalf("ParseCanonicalPrefix(%q) = %d, want %d", ss, got, k)
			}
			for i, s := range ss[:k] {
				if n, _ := ParseCanonical(s); out[i] != uint64(n) {
					t.Fatalf("ParseCanonicalPrefix(%q): out[%d] = %d, ParseCanonical(%q) = %d", ss, i, out[i], s, n)
				}
			}
		}
	}
	out := make([]uint64, len(ok))
	if got := ParseCanonicalPrefix(ok, out); got != len(ok) {
		t.Fatalf("ParseCanonicalPrefix(%q) = %d, want %d", ok, got, len(ok))
	}
	if got := ParseCanonicalPrefix(nil, nil); got != 0 {
		t.Fatalf("ParseCanonicalPrefix(nil) = %d", got)
	}
}
