package nanp

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTelURI(t *testing.T) {
	const (
		num = Number(2025550123)
		rn  = Number(2025550000)
	)
	tests := []struct {
		in   string
		want TelURI
	}{
		{"tel:+12025550123;npdi;rn=+12025550000", TelURI{num, rn, true}},
		{"tel:+12025550123;rn=2025550000;npdi=yes", TelURI{num, rn, true}},
		{"tel:+12025550123;rn=12025550000;npdi", TelURI{num, rn, true}},
		{"tel:+12025550123;rn=+1-202-555-0000;npdi", TelURI{num, rn, true}},
		{"TEL:+12025550123;NPDI;RN=+12025550000", TelURI{num, rn, true}},
		{"Tel:+12025550123;Rn=+12025550000;Npdi=YES", TelURI{num, rn, true}},
		{"tel:+12025550123;npdi=true", TelURI{num, 0, true}},
		{"tel:+12025550123;npdi=1", TelURI{num, 0, true}},
		{"tel:+12025550123;npdi=no", TelURI{num, 0, false}},
		{"tel:+12025550123;npdi=False", TelURI{num, 0, false}},
		{"tel:+12025550123;npdi=0", TelURI{num, 0, false}},
		{"tel:+12025550123;npdi", TelURI{num, 0, true}},
		{"tel:+12025550123", TelURI{num, 0, false}},
		{"tel:+1-202-555-0123;npdi", TelURI{num, 0, true}},
		{"tel:2025550123;rn=2025550000", TelURI{num, rn, false}},
		{"tel:+12025550123;npdi;rn=+12025550123", TelURI{num, num, true}},
		// unknown parameters are ignored, wherever they are
		{"tel:+12025550123;ext=42;npdi;rn=+12025550000;cic=+10333", TelURI{num, rn, true}},
		{"tel:+12025550123;rn=+12025550000;rn-context=+1;npdi", TelURI{num, rn, true}},
		{"tel:+12025550123;isub=abc;phone-context=example.com", TelURI{num, 0, false}},
		{"tel:+12025550123;npdi;", TelURI{num, 0, true}},
		{"tel:+12025550123;;npdi", TelURI{num, 0, true}},
		{"tel:+12025550123;npdi;npdi", TelURI{num, 0, true}},
		// SIP user parts
		{"+12025550123;npdi;rn=+12025550000", TelURI{num, rn, true}},
		{"+12025550123;rn=+12025550000", TelURI{num, rn, false}},
		{"+12025550123", TelURI{num, 0, false}},
		{"12025550123", TelURI{num, 0, false}},
		{"2025550123;npdi", TelURI{num, 0, true}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseTelURI(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseTelURIRejects(t *testing.T) {
	tests := []struct {
		in  string
		err error
	}{
		{"", errEmpty},
		{"tel:", errEmpty},
		{"tel:;npdi", errEmpty},
		{"tel:+22025550123;npdi", errPlus},
		{"tel:+12115550123;npdi", npaRules[211]},
		{"tel:+12025110123;npdi", nxxRules[511]},
		{"tel:tel:+12025550123", errChar},
		{"sip:+12025550123;npdi", errChar},
		{"tel:+12025550123@host;npdi", errChar},
		{"tel:+12025550123;rn=", errTelParam},
		{"tel:+12025550123;=x", errTelParam},
		{"tel:+12025550123;n pdi", errTelParam},
		{"tel:+12025550123;npdi\x00", errTelParam},
		{"tel:+12025550123;foo=b\x00r", errTelParam},
		{"tel:+12025550123;foo=bär", errTelParam},
		{"tel:+12025550123;föo=bar", errTelParam},
		{"tel:+12025550123;foo=a b", errTelParam},
		{"tel:+12025550123;rn", errTelRN},
		{"tel:+12025550123;rn=+22025550000", errTelRN},
		{"tel:+12025550123;rn=1202555000", errTelRN},
		{"tel:+12025550123;rn=2115550000", errTelRN},
		{"tel:+12025550123;rn=x", errTelRN},
		{"tel:+12025550123;rn=tel:+12025550000", errTelRN},
		{"tel:+12025550123;rn=+12025550000;rn=+12025550001", errTelDupRN},
		{"tel:+12025550123;rn=+12025550000;rn=+12025550000", errTelDupRN},
		{"tel:+12025550123;npdi=maybe", errTelNPDI},
		{"tel:+12025550123;npdi=yes;" + strings.Repeat("x", 256), errTelTooLong},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseTelURI(tc.in)
			require.ErrorIs(t, err, ErrInvalid)
			assert.Same(t, tc.err, err, "want %v, got %v", tc.err, err)
			assert.Zero(t, got)
		})
	}
}

func TestAppendTelURI(t *testing.T) {
	tests := []struct {
		in      TelURI
		tel     string
		sipUser string
	}{
		{TelURI{2025550123, 2025550000, true}, "tel:+12025550123;npdi;rn=+12025550000", "+12025550123;npdi;rn=+12025550000"},
		{TelURI{2025550123, 0, true}, "tel:+12025550123;npdi", "+12025550123;npdi"},
		// rn equal to the number: not ported, so RFC 4694 leaves rn out
		{TelURI{2025550123, 2025550123, true}, "tel:+12025550123;npdi", "+12025550123;npdi"},
		{TelURI{2025550123, 0, false}, "tel:+12025550123", "+12025550123"},
		{TelURI{2025550123, 3105551234, false}, "tel:+12025550123;rn=+13105551234", "+12025550123;rn=+13105551234"},
	}
	for _, tc := range tests {
		t.Run(tc.tel, func(t *testing.T) {
			assert.Equal(t, tc.tel, string(tc.in.AppendTelURI(nil)))
			assert.Equal(t, tc.tel, tc.in.String())
			assert.Equal(t, "x"+tc.sipUser, string(tc.in.AppendSIPUser([]byte("x"))))

			back, err := ParseTelURI(tc.tel)
			require.NoError(t, err)
			want := tc.in
			if want.RN == want.Number {
				want.RN = 0
			}
			assert.Equal(t, want, back)
		})
	}
}
