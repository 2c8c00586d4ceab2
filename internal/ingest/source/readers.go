package source

import (
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/lnpdb/lnpdb/internal/core/nanp"
	"github.com/lnpdb/lnpdb/internal/core/spamtype"
)

// Carrier is a row of carriers.csv: a carrier, keyed by its OCN (which is
// also its NPAC SPID).
type Carrier struct {
	OCN               string // 4 letters and digits, upper-case
	Name              string
	Type              string // carrier_type as written, e.g. "WIRELESS"
	MessagingProvider string // "" if none
	MessagingEnabled  bool   // the default for the carrier's numbers; false if empty
	Line              int
}

var carrierCols = []column{
	{"ocn", true}, {"name", true}, {"carrier_type", true},
	{"messaging_provider", false}, {"messaging_enabled", false},
}

// ReadCarriers reads carriers.csv from r, calling fn for each good row.
// file names the file in errors. fn gets a struct that is reused for the
// next row: copy what you keep (the strings in it stay valid). An error
// from fn stops the read and is returned as is.
func ReadCarriers(r io.Reader, file string, opt Options, fn func(*Carrier) error) error {
	return readCSV(r, file, opt, carrierCols, parseCarrier, fn)
}

func parseCarrier(p *rowParser, v *Carrier) (rerr *RowError) {
	v.Line = p.c.line
	if v.OCN, rerr = p.code(0); rerr != nil {
		return rerr
	}
	if v.Name, rerr = p.text(1, true); rerr != nil {
		return rerr
	}
	if v.Type, rerr = p.text(2, true); rerr != nil {
		return rerr
	}
	if v.MessagingProvider, rerr = p.text(3, false); rerr != nil {
		return rerr
	}
	v.MessagingProvider = p.intern(3, v.MessagingProvider, false)
	v.MessagingEnabled, rerr = p.bool(4, true)
	return rerr
}

// RateCenter is a row of ratecenters.csv.
type RateCenter struct {
	State    string // 2 letters, upper-case
	Name     string // the rate_center column
	LATA     string // 1 to 5 digits
	City     string // may be empty
	County   string // may be empty
	ZIP      string // 5 digits
	TimeZone string // an IANA time zone name, e.g. "America/Chicago"
	Line     int
}

var rateCenterCols = []column{
	{"state", true}, {"rate_center", true}, {"lata", true}, {"city", true},
	{"county", true}, {"zip_code", true}, {"timezone", true},
}

// ReadRateCenters reads ratecenters.csv from r, calling fn for each good
// row; see [ReadCarriers] for the rules of the callback. Time zones are
// checked with [time.LoadLocation], so the host needs the time zone
// database (or the binary needs to import time/tzdata).
func ReadRateCenters(r io.Reader, file string, opt Options, fn func(*RateCenter) error) error {
	zones := map[string]bool{} // name → LoadLocation accepted it
	return readCSV(r, file, opt, rateCenterCols, func(p *rowParser, v *RateCenter) *RowError {
		return parseRateCenter(p, v, zones)
	}, fn)
}

func parseRateCenter(p *rowParser, v *RateCenter, zones map[string]bool) (rerr *RowError) {
	v.Line = p.c.line
	if v.State, rerr = p.letters(0, 2); rerr != nil {
		return rerr
	}
	if v.Name, rerr = p.text(1, true); rerr != nil {
		return rerr
	}
	if v.LATA, rerr = p.digits(2, 5, false); rerr != nil {
		return rerr
	}
	if v.City, rerr = p.text(3, false); rerr != nil {
		return rerr
	}
	if v.County, rerr = p.text(4, false); rerr != nil {
		return rerr
	}
	if v.ZIP, rerr = p.digits(5, 5, true); rerr != nil {
		return rerr
	}
	if v.TimeZone, rerr = p.required(6); rerr != nil {
		return rerr
	}
	ok, seen := zones[v.TimeZone]
	if !seen {
		// "Local" is whatever the build machine uses: never what a row means.
		_, err := time.LoadLocation(v.TimeZone)
		ok = err == nil && v.TimeZone != "Local"
		if len(zones) < maxInterned {
			zones[p.intern(6, v.TimeZone, false)] = ok
		}
	}
	if !ok {
		return p.errf(6, nil, "not an IANA time zone name: %s", quote(v.TimeZone))
	}
	v.TimeZone = p.intern(6, v.TimeZone, false)
	return nil
}

// Block is a row of blocks.csv: an assigned NPA-NXX code (X = -1) or one
// thousands-block of it (X = 0 to 9).
type Block struct {
	NPA, NXX    int // each [2-9]XX
	X           int // -1 for the whole code ("" or "A"), else 0 to 9
	OCN         string
	State       string // 2 letters, upper-case
	RateCenter  string
	LRN         nanp.Number // 0 if none
	ActivatedAt int64       // Unix seconds, 0 if none
	Line        int
}

var blockCols = []column{
	{"npa", true}, {"nxx", true}, {"x", true}, {"ocn", true}, {"state", true},
	{"rate_center", true}, {"lrn", false}, {"activated_at", false},
}

// ReadBlocks reads blocks.csv from r, calling fn for each good row; see
// [ReadCarriers] for the rules of the callback.
func ReadBlocks(r io.Reader, file string, opt Options, fn func(*Block) error) error {
	return readCSV(r, file, opt, blockCols, parseBlock, fn)
}

func parseBlock(p *rowParser, v *Block) (rerr *RowError) {
	v.Line = p.c.line
	for col, check := range [...]func(int) error{nanp.CheckNPA, nanp.CheckNXX} {
		s := p.c.get(col)
		c, ok := parseCode3(s)
		if !ok {
			return p.errf(col, nil, "not 3 digits [2-9]XX: %s", quote(s))
		}
		// The same rules as a lookup's: a code no lookup can reach is a
		// mistake in the file, not data.
		if err := check(c); err != nil {
			rule, _ := nanp.Rule(err)
			return p.errf(col, err, "%s", rule)
		}
		if col == 0 {
			v.NPA = c
		} else {
			v.NXX = c
		}
	}
	switch s := p.c.get(2); {
	case s == "" || s == "A" || s == "a":
		v.X = -1
	case len(s) == 1 && isDigit(s[0]):
		v.X = int(s[0] - '0')
	default:
		return p.errf(2, nil, "not a digit, empty or A: %s", quote(s))
	}
	if v.OCN, rerr = p.code(3); rerr != nil {
		return rerr
	}
	if v.State, rerr = p.letters(4, 2); rerr != nil {
		return rerr
	}
	if v.RateCenter, rerr = p.text(5, true); rerr != nil {
		return rerr
	}
	v.RateCenter = p.intern(5, v.RateCenter, false)
	if v.LRN, rerr = p.number(6, true); rerr != nil {
		return rerr
	}
	v.ActivatedAt, rerr = p.time(7)
	return rerr
}

// Ported is a ported number: a row of ported.csv, or an NPAC subscription
// version read by [ReadPortedNPAC].
type Ported struct {
	TN          nanp.Number
	LRN         nanp.Number
	SPID        string // 4 letters and digits, upper-case
	ActivatedAt int64  // Unix seconds, 0 if none
	SVType      SVType // the optional sv_type column; SVTypeNone if absent or empty
	Line        int
}

var portedCols = []column{{"tn", true}, {"lrn", true}, {"spid", true}, {"activated_at", true}, {"sv_type", false}}

// ReadPorted reads ported.csv from r, calling fn for each good row; see
// [ReadCarriers] for the rules of the callback. The file may hold hundreds
// of millions of rows, so a row costs one allocation (encoding/csv's) and
// SPIDs are shared between rows.
func ReadPorted(r io.Reader, file string, opt Options, fn func(*Ported) error) error {
	return readCSV(r, file, opt, portedCols, parsePorted, fn)
}

func parsePorted(p *rowParser, v *Ported) (rerr *RowError) {
	v.Line = p.c.line
	if v.TN, rerr = p.number(0, false); rerr != nil {
		return rerr
	}
	if v.LRN, rerr = p.number(1, false); rerr != nil {
		return rerr
	}
	if v.SPID, rerr = p.code(2); rerr != nil {
		return rerr
	}
	if v.ActivatedAt, rerr = p.time(3); rerr != nil {
		return rerr
	}
	v.SVType, rerr = p.svType(4)
	return rerr
}

// Messaging is a row of messaging.csv: a per-number messaging record.
type Messaging struct {
	TN          nanp.Number
	Provider    string // may be empty
	Enabled     bool
	Country     string // 2 letters, upper-case, e.g. "US"
	CountryCode string // 1 to 3 digits, e.g. "1"
	ReferenceID string // may be empty
	Line        int
}

var messagingCols = []column{
	{"tn", true}, {"provider", true}, {"enabled", true}, {"country", true},
	{"country_code", true}, {"reference_id", true},
}

// ReadMessaging reads messaging.csv from r, calling fn for each good row;
// see [ReadCarriers] for the rules of the callback.
func ReadMessaging(r io.Reader, file string, opt Options, fn func(*Messaging) error) error {
	return readCSV(r, file, opt, messagingCols, parseMessaging, fn)
}

func parseMessaging(p *rowParser, v *Messaging) (rerr *RowError) {
	v.Line = p.c.line
	if v.TN, rerr = p.number(0, false); rerr != nil {
		return rerr
	}
	if v.Provider, rerr = p.text(1, false); rerr != nil {
		return rerr
	}
	v.Provider = p.intern(1, v.Provider, false)
	if v.Enabled, rerr = p.bool(2, false); rerr != nil {
		return rerr
	}
	if v.Country, rerr = p.letters(3, 2); rerr != nil {
		return rerr
	}
	if v.CountryCode, rerr = p.digits(4, 3, false); rerr != nil {
		return rerr
	}
	v.ReferenceID, rerr = p.text(5, false)
	return rerr
}

// CNAM is a row of cnam.csv: a caller name.
type CNAM struct {
	TN   nanp.Number
	Name string // 1 to 15 printable ASCII characters, trimmed
	Line int
}

// MaxCNAMLen is the longest caller name: 15 characters, as CNAM carries.
const MaxCNAMLen = 15

var cnamCols = []column{{"tn", true}, {"name", true}}

// ReadCNAM reads cnam.csv from r, calling fn for each good row; see
// [ReadCarriers] for the rules of the callback.
func ReadCNAM(r io.Reader, file string, opt Options, fn func(*CNAM) error) error {
	return readCSV(r, file, opt, cnamCols, parseCNAM, fn)
}

func parseCNAM(p *rowParser, v *CNAM) (rerr *RowError) {
	v.Line = p.c.line
	if v.TN, rerr = p.number(0, false); rerr != nil {
		return rerr
	}
	if v.Name, rerr = p.required(1); rerr != nil {
		return rerr
	}
	if n := utf8.RuneCountInString(v.Name); n > MaxCNAMLen {
		return p.errf(1, nil, "name is %d characters, longer than %d: %s", n, MaxCNAMLen, quote(v.Name))
	}
	for i := 0; i < len(v.Name); i++ {
		if c := v.Name[i]; c < 0x20 || c > 0x7e {
			return p.errf(1, nil, "name is not printable ASCII: %s", quote(v.Name))
		}
	}
	return nil
}

// Trust is a row of trust.csv: complaint data for a number.
type Trust struct {
	TN            nanp.Number
	SpamType      string // one of spamtype.Types (trust.csv may write it in any case; "" is NONE)
	Complaints    uint32
	FirstReported int64 // Unix seconds, 0 if none
	LastReported  int64 // Unix seconds, 0 if none; not before FirstReported
	Line          int
}

var trustCols = []column{
	{"tn", true}, {"spam_type", true}, {"complaint_count", true},
	{"first_reported", true}, {"last_reported", true},
}

// ReadTrust reads trust.csv from r, calling fn for each good row; see
// [ReadCarriers] for the rules of the callback.
func ReadTrust(r io.Reader, file string, opt Options, fn func(*Trust) error) error {
	return readCSV(r, file, opt, trustCols, parseTrust, fn)
}

func parseTrust(p *rowParser, v *Trust) (rerr *RowError) {
	v.Line = p.c.line
	if v.TN, rerr = p.number(0, false); rerr != nil {
		return rerr
	}
	var ok bool
	if v.SpamType, ok = spamType(p.c.get(1)); !ok {
		return p.errf(1, nil, "not NONE, SPAM, SCAM, ROBOCALL or TELEMARKETER: %s", quote(p.c.get(1)))
	}
	s := p.c.get(2)
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return p.errf(2, nil, "not a whole number below 2^32: %s", quote(s))
	}
	v.Complaints = uint32(n)
	if v.FirstReported, rerr = p.time(3); rerr != nil {
		return rerr
	}
	if v.LastReported, rerr = p.time(4); rerr != nil {
		return rerr
	}
	if v.FirstReported != 0 && v.LastReported != 0 && v.LastReported < v.FirstReported {
		return p.errf(4, nil, "before first_reported")
	}
	return nil
}

func spamType(s string) (string, bool) {
	for _, name := range spamtype.Types {
		if equalFold(s, name) {
			return name, true
		}
	}
	return spamtype.None, s == ""
}

// Update actions.
const (
	ActionAdd    = 'A'
	ActionUpdate = 'U'
	ActionDelete = 'D' // delete or disconnect: the number is no longer ported
)

// Update is a row of an update feed: a change to one ported number.
type Update struct {
	Action      byte // ActionAdd, ActionUpdate or ActionDelete
	TN          nanp.Number
	LRN         nanp.Number // set for A and U; for D, 0 unless given
	SPID        string      // set for A and U; for D, "" unless given
	ActivatedAt int64       // Unix seconds, 0 if none
	SVType      SVType      // the optional sv_type column; SVTypeNone if absent or empty
	Line        int
}

var updateCols = []column{
	{"action", true}, {"tn", true}, {"lrn", true}, {"spid", true}, {"activated_at", true}, {"sv_type", false},
}

// ReadUpdates reads an update feed from r, calling fn for each good row; see
// [ReadCarriers] for the rules of the callback. Action is A, U or D in any
// case; A and U need lrn and spid, D needs only tn (an lrn or spid it has
// must still be valid).
func ReadUpdates(r io.Reader, file string, opt Options, fn func(*Update) error) error {
	return readCSV(r, file, opt, updateCols, parseUpdate, fn)
}

func parseUpdate(p *rowParser, v *Update) (rerr *RowError) {
	v.Line = p.c.line
	switch s := p.c.get(0); {
	case len(s) == 1 && (lower(s[0]) == 'a' || lower(s[0]) == 'u' || lower(s[0]) == 'd'):
		v.Action = s[0] &^ 0x20 // upper-case
	default:
		return p.errf(0, nil, "not A, U or D: %s", quote(s))
	}
	if v.TN, rerr = p.number(1, false); rerr != nil {
		return rerr
	}
	del := v.Action == ActionDelete
	if v.LRN, rerr = p.number(2, del); rerr != nil {
		return rerr
	}
	if !del || p.c.get(3) != "" {
		if v.SPID, rerr = p.code(3); rerr != nil {
			return rerr
		}
	}
	if v.ActivatedAt, rerr = p.time(4); rerr != nil {
		return rerr
	}
	v.SVType, rerr = p.svType(5)
	return rerr
}
