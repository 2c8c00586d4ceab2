package cnam

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/core/lookup"
)

// The sentinel errors of a lookup. They are the same values as the root
// package's, so errors.Is matches either name.
var (
	// ErrInvalidNumber: the input is not a valid NANP number.
	ErrInvalidNumber = lnpdb.ErrInvalidNumber
	// ErrNotFound: the number is not ported and its NPA-NXX code is vacant.
	ErrNotFound = lnpdb.ErrNotFound
	// ErrClosed: the table has been closed.
	ErrClosed = lnpdb.ErrClosed
)

// MaxLen is the longest caller name CNAM delivers, in characters.
const MaxLen = 15

// Wireless is the name a switch shows for a wireless number without a CNAM
// record.
const Wireless = "WIRELESS CALLER"

// Source says which rule produced a caller name.
type Source uint8

const (
	// SourceRecord: the number's own CNAM record.
	SourceRecord Source = iota + 1
	// SourceWireless: no record, and the current carrier is wireless.
	SourceWireless
	// SourceLocation: no record; the rate center's city and state.
	SourceLocation
)

// String returns "record", "wireless" or "location".
func (s Source) String() string { return lookup.Name("Source", sourceNames[:], s) }

var sourceNames = [...]string{SourceRecord: "record", SourceWireless: "wireless", SourceLocation: "location"}

// Options tunes a CNAM lookup. It has no field yet: it is there so that
// every lookup package's calls have one shape, and so that an option can
// come without changing them.
type Options struct{}

// Result is the body of POST /api/v1/cnam.
type Result struct {
	// PhoneNumber is the canonical 11-digit number.
	PhoneNumber string `json:"phone_number"`
	// CNAM is the caller name, at most MaxLen characters.
	CNAM string `json:"cnam"`
	// Source says which rule produced CNAM; the wire does not carry it.
	Source Source `json:"-"`
}

// Lookup answers the caller name of number, in any form CONTRACT §1
// accepts (CONTRACT §3):
//
//  1. the number's CNAM record;
//  2. else [Wireless] when the current carrier (the ported record's SPID,
//     else the OCN of the most specific block row) has carrier type
//     WIRELESS;
//  3. else the city and state of the number's rate center in capitals, as
//     "WASHINGTON DC", the city cut short so that the whole fits MaxLen
//     characters (the state survives: "SALT LAKE CI UT"); the rate center's
//     name stands in for an empty city.
//
// A number that is not ported and whose NPA-NXX code is vacant is
// [ErrNotFound], whatever records it has; an unparsable one
// matches [ErrInvalidNumber]. Other errors are as for lrn.Lookup: [ErrClosed], or a
// wrapped corruption error that matches format.ErrCorrupt.
//
// Lookup is safe for concurrent use. A record's name is read from the
// table's CNAM section, whose compressed frames of 128 names a table keeps
// decoded, up to 256 of them: a name whose frame is kept allocates nothing,
// one whose frame is not costs its frame's decoding (two allocations). The
// location fallback builds its name (one allocation); the wireless fallback
// allocates nothing for a canonical input.
func Lookup(db *format.DB, number string, opt Options) (Result, error) {
	var r Result
	err := LookupInto(db, number, opt, &r)
	return r, err
}

// LookupInto is [Lookup] writing its answer into *r, which it overwrites
// whole, and only when it returns nil: on an error *r is as it was.
func LookupInto(db *format.DB, number string, _ Options, r *Result) error {
	var rec format.Record
	number, err := lookup.Get(db, number, format.FieldPorted|format.FieldCNAM, "cnam", &rec)
	if err != nil {
		return err
	}
	*r = Result{PhoneNumber: number}
	c := rec.CurrentCarrier()
	switch {
	case rec.CNAM.OK:
		r.CNAM, r.Source = rec.CNAM.Name, SourceRecord
	case c != nil && strings.EqualFold(c.Type, "WIRELESS"):
		r.CNAM, r.Source = Wireless, SourceWireless
	default:
		r.CNAM, r.Source = location(rec.Block.RateCenter), SourceLocation
	}
	return nil
}

// LookupNumber is [Lookup] of a number parsed once with
// [lnpdb.ParseNumber], so that one parse serves several lookups. Its
// canonical form takes the lookup's fast path: nothing is parsed again
// beyond checking its 11 digits, and nothing allocates that Lookup of a
// canonical input would not. The zero Number is [ErrInvalidNumber].
func LookupNumber(db *format.DB, n lnpdb.Number, opt Options) (Result, error) {
	return Lookup(db, n.String(), opt)
}

// LookupNumberInto is [LookupInto] of a parsed number, as [LookupNumber].
func LookupNumberInto(db *format.DB, n lnpdb.Number, opt Options, r *Result) error {
	return LookupInto(db, n.String(), opt, r)
}

// location returns "CITY ST" for rc in capitals, at most MaxLen characters.
func location(rc *format.RateCenter) string {
	if rc == nil {
		return ""
	}
	city := strings.TrimSpace(rc.City)
	if city == "" {
		city = strings.TrimSpace(rc.Name)
	}
	state := strings.TrimSpace(rc.State)
	if state == "" {
		return upper(strings.TrimSpace(truncate(city, MaxLen)), "")
	}
	room := MaxLen - 1 - utf8.RuneCountInString(state)
	if room <= 0 {
		return upper(truncate(state, MaxLen), "")
	}
	city = strings.TrimSpace(truncate(city, room))
	if city == "" {
		return upper(state, "")
	}
	return upper(city, state)
}

// upper returns a, and " " and b when b is not empty, in capitals, with one
// allocation.
func upper(a, b string) string {
	var sb strings.Builder
	sb.Grow(len(a) + 1 + len(b))
	for _, r := range a {
		sb.WriteRune(unicode.ToUpper(r))
	}
	if b != "" {
		sb.WriteByte(' ')
		for _, r := range b {
			sb.WriteRune(unicode.ToUpper(r))
		}
	}
	return sb.String()
}

// truncate returns the first n characters of s.
func truncate(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}
