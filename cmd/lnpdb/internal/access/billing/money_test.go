package billing

import (
	"errors"
	"strings"
	"testing"
)

func TestParseAmount(t *testing.T) {
	for in, want := range map[string]Micros{
		"25": 25_000_000, "25.00": 25_000_000, "0.000001": 1, "0.0005": 500, "1.5": 1_500_000,
		"007.10": 7_100_000, "9223372036853": 9_223_372_036_853_000_000,
	} {
		got, err := ParseAmount(in)
		if err != nil || got != want {
			t.Errorf("ParseAmount(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "-0.01", "1e3", "1,00", "$5", "0.0000001", ".5", "5.", "NaN", "Inf", " 1", "1 ", "+1", "0x10", "1.2.3", "99999999999999999999"} {
		if got, err := ParseAmount(in); !errors.Is(err, ErrAmount) {
			t.Errorf("ParseAmount(%q) = %d, %v; want an error", in, got, err)
		}
	}
}

func TestMicrosString(t *testing.T) {
	for m, want := range map[Micros]string{0: "0.00", 1: "0.000001", 500: "0.0005", 25_000_000: "25.00", 1_250_000: "1.25", -1_250_000: "-1.25", 1_234_567: "1.234567"} {
		if got := m.String(); got != want {
			t.Errorf("Micros(%d).String() = %q, want %q", m, got, want)
		}
	}
}

// FuzzParseAmount: an accepted amount is non-negative and formats back to
// text that parses to the same amount.
func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"25.00", "0.000001", "-1", "1e3", "", "9223372036853.999999", "1.", ".1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseAmount(s)
		if err != nil {
			if !errors.Is(err, ErrAmount) || m != 0 {
				t.Fatalf("ParseAmount(%q) = %d, %v", s, m, err)
			}
			return
		}
		if m < 0 || strings.HasPrefix(s, "-") {
			t.Fatalf("ParseAmount(%q) = %d", s, m)
		}
		back, err := ParseAmount(m.String())
		if err != nil || back != m {
			t.Fatalf("%q → %d → %q → %d, %v", s, m, m.String(), back, err)
		}
	})
}
