package lrn_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/lrn"
)

func TestParseTelURI(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want lrn.TelURI
	}{
		{"tel:+12025550123;npdi;rn=+12025569000", lrn.TelURI{Number: "12025550123", RN: "12025569000", NPDI: true}},
		{"TEL:+1-202-555-0123;rn=2025569000;npdi=yes", lrn.TelURI{Number: "12025550123", RN: "12025569000", NPDI: true}},
		{"+12025550123;npdi", lrn.TelURI{Number: "12025550123", NPDI: true}},
		{"tel:2025550123", lrn.TelURI{Number: "12025550123"}},
	} {
		got, err := lrn.ParseTelURI(tt.in)
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
	for _, in := range []string{"", "tel:", "tel:+12025550123;rn=123", "tel:+11115550123", "tel:+12025550123;npdi=maybe"} {
		_, err := lrn.ParseTelURI(in)
		assert.ErrorIs(t, err, lrn.ErrInvalidNumber, in)
	}
}

func TestTelURIString(t *testing.T) {
	for _, tt := range []struct {
		t            lrn.TelURI
		tel, sipUser string
	}{
		{lrn.TelURI{Number: "12025550123", RN: "12025569000", NPDI: true}, "tel:+12025550123;npdi;rn=+12025569000", "+12025550123;npdi;rn=+12025569000"},
		{lrn.TelURI{Number: "12025550123", RN: "12025550123", NPDI: true}, "tel:+12025550123;npdi", "+12025550123;npdi"},
		{lrn.TelURI{Number: "12025550123"}, "tel:+12025550123", "+12025550123"},
		{lrn.TelURI{Number: "2025550123", RN: "+1 202 556 9000"}, "tel:+12025550123;rn=+12025569000", "+12025550123;rn=+12025569000"},
		// Not numbers: written as given rather than invented.
		{lrn.TelURI{Number: "bogus", RN: "12025569000", NPDI: true}, "tel:+bogus;npdi;rn=+12025569000", "+bogus;npdi;rn=+12025569000"},
	} {
		assert.Equal(t, tt.tel, tt.t.String())
		assert.Equal(t, tt.sipUser, tt.t.SIPUser())
	}
}

func TestResultTelURI(t *testing.T) {
	ported := lrn.Result{PhoneNumber: "12025550123", LRN: "12025569000"}
	assert.Equal(t, lrn.TelURI{Number: "12025550123", RN: "12025569000", NPDI: true}, ported.TelURI())
	assert.Equal(t, "tel:+12025550123;npdi;rn=+12025569000", ported.TelURI().String())
	home := lrn.Result{PhoneNumber: "12025550123", LRN: "12025550123"}
	assert.Equal(t, "tel:+12025550123;npdi", home.TelURI().String())

	// A URI written from a lookup parses back to the same value.
	back, err := lrn.ParseTelURI(ported.TelURI().String())
	require.NoError(t, err)
	assert.Equal(t, ported.TelURI(), back)
}

func TestLineTypeOf(t *testing.T) {
	for in, want := range map[string]lrn.LineType{
		"WIRELESS": lrn.LineMobile, "wireless": lrn.LineMobile, "PCS": lrn.LineMobile,
		"ILEC": lrn.LineLandline, "CLEC": lrn.LineLandline, "rboc": lrn.LineLandline,
		"VOIP": lrn.LineVoIP, "IPES": lrn.LineVoIP,
		"": lrn.LineUnknown, "PAGING": lrn.LineUnknown,
	} {
		assert.Equal(t, want, lrn.LineTypeOf(in), in)
	}
	assert.Equal(t, "mobile", lrn.LineMobile.String())
	assert.Equal(t, "landline", lrn.LineLandline.String())
	assert.Equal(t, "voip", lrn.LineVoIP.String())
	assert.Equal(t, "unknown", lrn.LineUnknown.String())
}

// TestLineTypeOfNumber: the SV Type decides where it names a line type; a
// reserved one, none, or no ported record leave it to the carrier.
func TestLineTypeOfNumber(t *testing.T) {
	wireless := &format.Carrier{OCN: "6529", Type: "WIRELESS"}
	for sv, want := range map[format.SVType]lrn.LineType{
		format.SVTypeWireline: lrn.LineLandline, format.SVTypeWireless: lrn.LineMobile,
		format.SVTypePrepaidWireless: lrn.LineMobile, format.SVTypeVoIP: lrn.LineVoIP,
		format.SVTypeVoWiFi: lrn.LineVoIP, format.SVTypeClass2InterconnectedVoIP: lrn.LineVoIP,
		format.SVTypeNone: lrn.LineMobile, format.SVTypeClass2InterconnectedVoIP + 1: lrn.LineMobile,
		format.MaxSVType: lrn.LineMobile, 255: lrn.LineMobile,
	} {
		assert.Equal(t, want, lrn.LineTypeOfNumber(sv, wireless), sv.String())
	}
	assert.Equal(t, lrn.LineUnknown, lrn.LineTypeOfNumber(format.SVTypeNone, nil))
	assert.Equal(t, lrn.LineVoIP, lrn.LineTypeOfNumber(format.SVTypeVoIP, nil))
	assert.Equal(t, lrn.LineUnknown, lrn.LineTypeOfNumber(255, nil))
}
