package nanp

import (
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"12025550123", "+12025550123", "2025550123", "+1 (202) 555-0123",
		"1-202-555-0123", "202.555.0123", "tel:+12025550123;npdi;rn=+12025550000",
		"TEL:2025550123", "1202555012", "+22025550123", "++12025550123",
		"１2025550123", "1202555\x000123", "(1) 202 555 0123", "12115550123",
		"12025110123", "", "tel:", "202--555-0123", "19115550123", "12905550123",
		"12029110123", "19995550123", "10205550123",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, canonical, err := Parse(s)
		nb, errb := ParseBytes([]byte(s))
		if n != nb || (err == nil) != (errb == nil) {
			t.Fatalf("Parse(%q) = %v, %v; ParseBytes = %v, %v", s, n, err, nb, errb)
		}
		if d, err := ParseDigits(s); err == nil && d != n {
			t.Fatalf("ParseDigits(%q) = %v, Parse = %v", s, d, n)
		}
		if err != nil {
			if n != 0 || canonical {
				t.Fatalf("Parse(%q) failed with %v but returned %v, %v", s, err, n, canonical)
			}
			// A rule error names a code that breaks the rules.
			if re, ok := err.(*RuleError); ok {
				if re.Part == "NPA" && ValidNPA(re.Code) || re.Part == "NXX" && ValidNXX(re.Code) || re.Part != "NPA" && re.Part != "NXX" {
					t.Fatalf("Parse(%q) = %v for a valid %s", s, err, re.Part)
				}
			}
			return
		}
		if !n.Valid() {
			t.Fatalf("Parse(%q) = %v, which is not valid", s, n)
		}
		c := n.String()
		if canonical != (s == c) {
			t.Fatalf("Parse(%q) canonical = %v, String = %q", s, canonical, c)
		}
		back, canonical, err := Parse(c)
		if err != nil || back != n || !canonical {
			t.Fatalf("Parse(%q) = %v, %v, %v; want %v, true, nil", c, back, canonical, err, n)
		}
	})
}

func FuzzParseTelURI(f *testing.F) {
	for _, s := range []string{
		"tel:+12025550123;npdi;rn=+12025550000", "tel:+12025550123;rn=2025550000;npdi=yes",
		"+12025550123;npdi;rn=+12025550000", "TEL:+1-202-555-0123;RN=12025550000;NPDI",
		"tel:+12025550123;npdi=no", "tel:+12025550123;ext=42;;", "tel:+12025550123;rn=+12025550123",
		"tel:+12025550123;rn=x", "tel:+12025550123;rn=1;rn=2", "tel:;npdi", "tel:+12025550123;f\x00o",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseTelURI(s)
		if err != nil {
			if u != (TelURI{}) {
				t.Fatalf("ParseTelURI(%q) failed with %v but returned %+v", s, err, u)
			}
			return
		}
		if !u.Number.Valid() || u.RN != 0 && !u.RN.Valid() {
			t.Fatalf("ParseTelURI(%q) = %+v, which is not valid", s, u)
		}
		// Parse sees the same number in a tel: URI it accepts.
		if hasTelPrefix(s) && len(s) <= maxInputLen {
			if n, _, err := Parse(s); err != nil || n != u.Number {
				t.Fatalf("ParseTelURI(%q).Number = %v, Parse = %v, %v", s, u.Number, n, err)
			}
		}
		out := u.AppendTelURI(nil)
		back, err := ParseTelURI(string(out))
		want := u
		if want.RN == want.Number {
			want.RN = 0 // not written: RFC 4694 gives rn only for ported numbers
		}
		if err != nil || back != want {
			t.Fatalf("ParseTelURI(%q) = %+v, %v; want %+v (from %q)", out, back, err, want, s)
		}
		if string(out) != u.String() || string(out[4:]) != string(u.AppendSIPUser(nil)) {
			t.Fatalf("AppendTelURI, String and AppendSIPUser disagree for %+v", u)
		}
	})
}

// FuzzTenDigits checks the word-at-a-time digit decoder against a byte at a
// time reading of the same ten bytes.
func FuzzTenDigits(f *testing.F) {
	for _, s := range []string{"2025550123", "0000000000", "9999999999", "202555012/", "20255501:3", "/025550123", "2025550\x00\x00\x00", "99999999:9", "\xb0025550123", "20255\x3a0123"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) < 10 {
			return
		}
		s = s[:10]
		var want uint64
		ok := true
		for i := range 10 {
			if s[i] < '0' || s[i] > '9' {
				ok = false
				break
			}
			want = want*10 + uint64(s[i]-'0')
		}
		got, gotOK := tenDigits(s)
		if gotOK != ok || ok && got != want {
			t.Fatalf("tenDigits(%q) = %d, %v; want %d, %v", s, got, gotOK, want, ok)
		}
		if gb, okb := tenDigits([]byte(s)); gb != got || okb != gotOK {
			t.Fatalf("tenDigits([]byte(%q)) = %d, %v; the string gives %d, %v", s, gb, okb, got, gotOK)
		}
	})
}

// FuzzParseCanonical holds the canonical form's fast path to the general
// parser: it accepts exactly the inputs the general path parses as
// canonical, with the same number, and declines everything else.
func FuzzParseCanonical(f *testing.F) {
	for _, s := range []string{
		"12025550123", "19999999999", "12000000000", "12112000000", "12902000000",
		"12021110000", "12021000000", "10205550123", "22025550123", "1202555012/",
		"1202555012:", "120255501230", "1202555012", "/2025550123", "1\xff025550123",
		"12025550\x80\x80\x80", "12892000000", "12992000000", "18002000000", "1202 550123",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fast, ok := ParseCanonical(s)
		slow, canonical, err := parse(s)
		want := err == nil && canonical
		if ok != want || ok && fast != slow {
			t.Fatalf("ParseCanonical(%q) = %v, %v; the general path: %v, canonical %v, %v", s, fast, ok, slow, canonical, err)
		}
		// A batch of it twice over, as a batch's parse: both or neither.
		var out [2]uint64
		if n := ParseCanonicalPrefix([]string{s, s}, out[:]); n != 2*bits(ok) || ok && (out[0] != uint64(fast) || out[1] != uint64(fast)) {
			t.Fatalf("ParseCanonicalPrefix(%q twice) = %d, %v; ParseCanonical: %v, %v", s, n, out, fast, ok)
		}
	})
}

func bits(b bool) int {
	if b {
		return 1
	}
	return 0
}
