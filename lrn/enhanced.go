package lrn

import (
	"strings"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/core/lookup"
)

// Enhanced is the carrier and location data of an LRN lookup
// (enhanced_lrn_data, CONTRACT §2). Its zero value means "not requested":
// [Enhanced.IsZero] reports it, so that a field tagged omitzero leaves it off
// the wire.
type Enhanced struct {
	// Carrier is the current carrier's name: the ported record's SPID,
	// else the OCN holder of the number's most specific block row.
	Carrier string `json:"carrier"`
	// CarrierType is that carrier's category code, e.g. WIRELESS, ILEC,
	// CLEC, VOIP.
	CarrierType string `json:"carrier_type"`
	// OCN is that carrier's operating company number (4 characters).
	OCN string `json:"ocn"`

	// The rate center of the number's most specific block row: a port
	// never moves a number out of its rate center.
	City       string `json:"city"`
	State      string `json:"state"`
	County     string `json:"county"`
	ZIPCode    string `json:"zip_code"`
	LATA       string `json:"lata"`
	RateCenter string `json:"rate_center"`
	// Timezone is the rate center's standard-time UTC offset, e.g. -0500
	// (no daylight saving shift).
	Timezone string `json:"timezone"`

	// IANAZone is the rate center's IANA time zone, e.g. America/New_York;
	// the wire does not carry it.
	IANAZone string `json:"-"`
	// LineType is the number's kind of line: its ported record's SV Type
	// where that names one, else CarrierType normalized (see
	// LineTypeOfNumber); the wire does not carry it.
	LineType LineType `json:"-"`

	present bool
}

// IsZero reports whether e was not filled in by a lookup.
func (e Enhanced) IsZero() bool { return !e.present }

// setEnhanced sets every field of e for carrier c, SV Type sv (SVTypeNone
// for a number without a ported record) and rate center rc; c and rc may
// be nil.
func setEnhanced(e *Enhanced, c *format.Carrier, sv format.SVType, rc *format.RateCenter) {
	e.present = true
	if c != nil {
		e.Carrier, e.CarrierType, e.OCN = c.Name, c.Type, c.OCN
	} else {
		e.Carrier, e.CarrierType, e.OCN = "", "", ""
	}
	e.LineType = LineTypeOfNumber(sv, c)
	if rc == nil {
		rc = &noRateCenter
	}
	e.City, e.State, e.County, e.ZIPCode = rc.City, rc.State, rc.County, rc.ZIP
	e.LATA, e.RateCenter = rc.LATA, rc.Name
	e.Timezone, e.IANAZone = rc.UTCOffset, rc.TimeZone
}

var noRateCenter format.RateCenter

// LineType is the kind of line a number has.
type LineType uint8

// The line types; the zero value is LineUnknown.
const (
	LineUnknown LineType = iota
	LineMobile
	LineLandline
	LineVoIP
)

// String returns "unknown", "mobile", "landline" or "voip".
func (t LineType) String() string { return lookup.Name("LineType", lineTypeNames[:], t) }

var lineTypeNames = [...]string{LineUnknown: "unknown", LineMobile: "mobile", LineLandline: "landline", LineVoIP: "voip"}

// LineTypeOfNumber is a number's line type (docs/DATA.md): the line type
// its ported record's SV Type names — the provider's word for this number,
// more exact than its carrier's category (a wireless carrier's VoIP number)
// — and where there is none (no ported record, an SV Type not given or
// reserved) its current carrier c's (LineTypeOf; unknown for nil):
//
//	wireline                                      → landline
//	wireless, prepaid wireless                    → mobile
//	VoIP, VoWiFi, class 2 interconnected VoIP     → voip
func LineTypeOfNumber(sv format.SVType, c *format.Carrier) LineType {
	// A table indexed by any uint8 rather than a switch: small enough to
	// inline into setEnhanced, on every enhanced lookup's path.
	if t := svLineTypes[sv]; t != LineUnknown || c == nil {
		return t
	}
	return LineTypeOf(c.Type)
}

// svLineTypes maps the SV Types that name a line type to it; the others
// (none, reserved, any other value) are LineUnknown.
var svLineTypes = [256]LineType{
	format.SVTypeWireline:                 LineLandline,
	format.SVTypeWireless:                 LineMobile,
	format.SVTypePrepaidWireless:          LineMobile,
	format.SVTypeVoIP:                     LineVoIP,
	format.SVTypeVoWiFi:                   LineVoIP,
	format.SVTypeClass2InterconnectedVoIP: LineVoIP,
}

// LineTypeOf maps a carrier category code, in any case, to a line type:
//
//	WIRELESS, PCS, CELLULAR                → mobile
//	ILEC, RBOC, CLEC, ULEC, CAP, LEC, ICO  → landline
//	VOIP, IPES                             → voip
//	anything else                          → unknown
//
// IPES (Internet Protocol Enabled Service) and CAP (competitive access
// provider) are the LERG's own names for those categories.
func LineTypeOf(carrierType string) LineType {
	// Sources write the codes in capitals: match those exactly first, which
	// compiles to a few length and word compares.
	switch carrierType {
	case "WIRELESS", "PCS", "CELLULAR":
		return LineMobile
	case "ILEC", "RBOC", "CLEC", "ULEC", "CAP", "LEC", "ICO":
		return LineLandline
	case "VOIP", "IPES":
		return LineVoIP
	}
	for _, c := range lineTypes {
		if strings.EqualFold(carrierType, c.code) {
			return c.t
		}
	}
	return LineUnknown
}

// lineTypes is the table for codes in other cases; it is searched with
// EqualFold rather than a switch on ToUpper, which would allocate.
var lineTypes = [...]struct {
	code string
	t    LineType
}{
	{"WIRELESS", LineMobile}, {"PCS", LineMobile}, {"CELLULAR", LineMobile},
	{"ILEC", LineLandline}, {"RBOC", LineLandline}, {"CLEC", LineLandline},
	{"ULEC", LineLandline}, {"CAP", LineLandline}, {"LEC", LineLandline}, {"ICO", LineLandline},
	{"VOIP", LineVoIP}, {"IPES", LineVoIP},
}
