package format

import "strconv"

// Carrier is one row of carriers.csv: a service provider, keyed by its OCN
// (which is also its NPAC SPID).
type Carrier struct {
	OCN  string // 4 characters
	Name string
	// Type is the category code from the source, e.g. WIRELESS, ILEC, CLEC, VOIP.
	Type string
	// MessagingProvider and MessagingEnabled are the carrier's default for
	// its numbers' messaging; MessagingProvider is "" when it has none.
	MessagingProvider string
	MessagingEnabled  bool
}

// RateCenter is one row of ratecenters.csv.
type RateCenter struct {
	State, Name, LATA, City, County, ZIP string
	// TimeZone is the IANA zone name, e.g. America/Chicago.
	TimeZone string
	// UTCOffset is the zone's standard-time offset as sign and four digits,
	// e.g. -0600 (no daylight saving shift).
	UTCOffset string
}

// Block is what the block data says of a number: its NPA-NXX code row and,
// where one exists, its thousands-block (NPA-NXX-X) row, resolved to the most
// specific row.
type Block struct {
	// Assigned is false for a vacant code: every other field is then zero.
	Assigned bool
	// Thousands is true when the fields come from a thousands-block row.
	Thousands bool
	// Carrier is the OCN holder of the most specific row.
	Carrier *Carrier
	// RateCenter is the most specific row's rate center.
	RateCenter *RateCenter
	// LRN is the most specific row's block LRN (11 digits), "" when that
	// row has none; ActivatedAt is its activation, unix seconds, 0 if unknown.
	LRN         string
	ActivatedAt int64
}

// Ported is a ported number's NPAC subscription version.
type Ported struct {
	OK          bool     // false: the number has no ported record
	LRN         string   // 11 digits
	Carrier     *Carrier // the new current SPID
	ActivatedAt int64    // unix seconds, 0 if unknown
	// SVType is the version's SV Type: the kind of service the number
	// itself has, SVTypeNone when the source did not say.
	SVType SVType
}

// SVType is an NPAC subscription version's SV Type, the kind of service a
// ported number has (docs/DATA.md). It is stored as the NPAC's value plus
// one, so that the zero value is SVTypeNone: NPAC value v is SVType(v+1).
// The NPAC defines 0 to 10; 6 to 10 are reserved and kept by number.
type SVType uint8

// SV Types.
const (
	SVTypeNone                     SVType = iota // not given (an older source or LSMS)
	SVTypeWireline                               // NPAC 0
	SVTypeWireless                               // NPAC 1
	SVTypeVoIP                                   // NPAC 2
	SVTypeVoWiFi                                 // NPAC 3
	SVTypePrepaidWireless                        // NPAC 4
	SVTypeClass2InterconnectedVoIP               // NPAC 5

	// MaxSVType is the largest SV Type the NPAC defines (NPAC 10).
	MaxSVType SVType = 11
)

var svTypeNames = [...]string{"none", "wireline", "wireless", "voip", "vowifi", "prepaid-wireless", "class2-interconnected-voip"}

// String names the SV Type: "none", "wireline", "wireless", "voip",
// "vowifi", "prepaid-wireless", "class2-interconnected-voip", or
// "sv-type-N" for NPAC value N otherwise.
func (t SVType) String() string {
	if int(t) < len(svTypeNames) {
		return svTypeNames[t]
	}
	return "sv-type-" + strconv.Itoa(int(t)-1)
}

// Messaging is a per-number messaging record.
type Messaging struct {
	OK                   bool
	Provider             string
	Enabled              bool
	Country, CountryCode string
	ReferenceID          string
}

// CNAM is a per-number caller name record.
type CNAM struct {
	OK   bool
	Name string // at most 15 characters
}

// Trust is a per-number complaint record.
type Trust struct {
	OK bool
	// SpamType is NONE, SPAM, SCAM, ROBOCALL or TELEMARKETER.
	SpamType                    string
	Complaints                  uint32
	FirstReported, LastReported int64 // unix seconds, 0 if none
}

// Fields selects the per-number sections Get reads. Get reports the block
// data too, unless BlockUnlessPorted says to leave it out for a ported
// number. Reading less is faster: each per-number section costs one more
// 64-byte cache line (two for the few keys displaced into the next bucket),
// loaded beside the others.
type Fields uint8

// The per-number sections.
const (
	FieldPorted Fields = 1 << iota
	FieldMessaging
	FieldCNAM
	FieldTrust

	FieldAll = FieldPorted | FieldMessaging | FieldCNAM | FieldTrust
)

// BlockUnlessPorted, added to a Fields that includes FieldPorted, leaves
// Record.Block zero for a number with a ported record: an LRN lookup
// without enhanced data needs nothing more (CONTRACT §2 resolves a ported
// number by its ported record alone). Get and GetRoute still read the
// number's raw block row, while the buckets' cache misses are in flight,
// where it costs less than after them, but resolve it against the
// dictionaries only for a number that is not ported; GetMany and
// GetRoutes skip a ported hit's thousands-block entry. So a block row left
// out is not checked either: a damaged carrier, rate center or LRN index
// in it is reported only where it is read (without BlockUnlessPorted, or
// by Verify).
const BlockUnlessPorted Fields = 1 << 4

// Record is everything a table holds for one number, read from one snapshot:
// a concurrent update or reload never shows a lookup half of one state and
// half of another.
type Record struct {
	// Number is the 10-digit national number, e.g. 2025550123.
	Number    uint64
	Block     Block
	Ported    Ported
	Messaging Messaging
	CNAM      CNAM
	Trust     Trust
}

// CurrentCarrier is the number's current carrier (CONTRACT §2 to §5): the
// ported record's new current SPID, else the OCN holder of the most
// specific block row; nil when neither was read.
func (r *Record) CurrentCarrier() *Carrier {
	if r.Ported.OK {
		return r.Ported.Carrier
	}
	return r.Block.Carrier
}
