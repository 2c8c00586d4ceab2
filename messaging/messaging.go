package messaging

import (
	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/core/lookup"
	"github.com/lnpdb/lnpdb/internal/core/nanp"
)

// The sentinel errors of a lookup. They are the same values as the root
// package's, so errors.Is matches either name.
var (
	// ErrInvalidNumber: the input is not a valid NANP number.
	ErrInvalidNumber = lnpdb.ErrInvalidNumber
	// ErrNotFound: the number's NPA-NXX code is vacant and it is not ported.
	ErrNotFound = lnpdb.ErrNotFound
	// ErrClosed: the table has been closed.
	ErrClosed = lnpdb.ErrClosed
)

// The country the table serves; the data carries it per record, and these
// are what a number without a record answers.
const (
	DefaultCountry     = "US"
	DefaultCountryCode = "1"
)

// Source says where an [Info] came from.
type Source uint8

const (
	// SourceNone: neither a per-number record nor a carrier default exists;
	// the number answers no provider, not enabled.
	SourceNone Source = iota
	// SourceRecord: the number's own messaging record.
	SourceRecord
	// SourceCarrierDefault: the current carrier's default messaging provider.
	SourceCarrierDefault
)

// String returns "none", "record" or "carrier_default".
func (s Source) String() string { return lookup.Name("Source", sourceNames[:], s) }

var sourceNames = [...]string{SourceNone: "none", SourceRecord: "record", SourceCarrierDefault: "carrier_default"}

// Info is the messaging object nested in an LRN response (CONTRACT §4). Its
// zero value means "not requested": [Info.IsZero] reports it, so that a
// struct field tagged omitzero leaves it out of the wire body.
type Info struct {
	// Provider is the messaging provider's name, "" when there is none.
	Provider string `json:"provider"`
	// Enabled reports whether the number can receive messages.
	Enabled bool `json:"enabled"`
	// Country is the ISO 3166 alpha-2 country: the messaging record's,
	// else "US".
	Country string `json:"country"`
	// CountryCode is the E.164 country calling code: the record's, else
	// "1".
	CountryCode string `json:"country_code"`
	// ReferenceID is the messaging record's reference id, "" without one.
	ReferenceID string `json:"reference_id"`
	// Source says which rule produced the answer; the wire does not carry it.
	Source Source `json:"-"`

	present bool
}

// IsZero reports whether i was not filled in by a lookup (an answer with no
// provider is not zero).
func (i Info) IsZero() bool { return !i.present }

// Reset makes *i zero when a lookup filled it (IsZero is false), and
// leaves it alone otherwise: a plain lookup into a reused Result clears
// it only after an answer with messaging, without IsZero's copy of the
// struct.
func (i *Info) Reset() {
	if i.present {
		*i = Info{}
	}
}

// Result is the body of POST /api/v1/messaging: the flat form of [Info]
// with the number it answers for.
type Result struct {
	// PhoneNumber is the canonical 11-digit number, e.g. 12025550123.
	PhoneNumber string `json:"phone_number"`
	// Provider, Enabled, Country, CountryCode and ReferenceID are the
	// fields of [Info] of the same names.
	Provider    string `json:"messaging_provider"`
	Enabled     bool   `json:"messaging_enabled"`
	Country     string `json:"messaging_country"`
	CountryCode string `json:"messaging_country_code"`
	ReferenceID string `json:"reference_id"`
	// Source says which rule produced the answer; the wire does not carry it.
	Source Source `json:"-"`
}

// FromRecord resolves the messaging answer for a record that was read with
// at least [format.FieldPorted]|[format.FieldMessaging], as [Info.Set] does
// for the record's messaging record and current carrier.
func FromRecord(rec *format.Record) Info {
	var i Info
	var m *format.Messaging
	if rec.Messaging.OK {
		m = &rec.Messaging
	}
	i.Set(m, rec.CurrentCarrier())
	return i
}

// Set makes *i, which it overwrites whole, the messaging answer for a
// number whose messaging record is m (nil, or not OK, when it has none)
// and whose current carrier is c (CONTRACT §4): c is the ported record's
// SPID, else the OCN holder of the most specific block row, nil when
// neither exists.
//
//  1. the number's own messaging record;
//  2. else the current carrier's default provider;
//  3. else no provider, not enabled.
//
// Country and country code come from the record, and are US and 1 when the
// record leaves them empty or there is none. Set does not check whether
// the number is vacant; the caller does. Each field is written once, so
// that a Result reused from lookup to lookup is not cleared first.
func (i *Info) Set(m *format.Messaging, c *format.Carrier) {
	i.present = true
	if m != nil && m.OK {
		i.Provider, i.Enabled, i.ReferenceID, i.Source = m.Provider, m.Enabled, m.ReferenceID, SourceRecord
		country, code := m.Country, m.CountryCode
		if country == "" {
			country = DefaultCountry
		}
		if code == "" {
			code = DefaultCountryCode
		}
		i.Country, i.CountryCode = country, code
		return
	}
	i.Country, i.CountryCode, i.ReferenceID = DefaultCountry, DefaultCountryCode, ""
	if c != nil && c.MessagingProvider != "" {
		i.Provider, i.Enabled, i.Source = c.MessagingProvider, c.MessagingEnabled, SourceCarrierDefault
		return
	}
	i.Provider, i.Enabled, i.Source = "", false, SourceNone
}

// Options tunes a messaging lookup. It has no field yet: it is there so
// that every lookup package's calls have one shape, and so that an option
// can come without changing them.
type Options struct{}

// Lookup answers the messaging lookup for number, in any form CONTRACT §1
// accepts. A vacant number (no ported record, NPA-NXX code not assigned) is
// [ErrNotFound]; an unparsable one matches [ErrInvalidNumber].
//
// Lookup is safe for concurrent use. It allocates only to format the echoed
// number when the input is not already canonical.
func Lookup(db *format.DB, number string, opt Options) (Result, error) {
	var r Result
	err := LookupInto(db, number, opt, &r)
	return r, err
}

// LookupInto is [Lookup] writing its answer into *r, which it overwrites
// whole, and only when it returns nil: on an error *r is as it was.
func LookupInto(db *format.DB, number string, _ Options, r *Result) error {
	n, canonical := nanp.ParseCanonical(number)
	if !canonical {
		var err error
		if n, _, err = nanp.Parse(number); err != nil {
			return err
		}
	}
	// The ported record, the block row and the messaging record, read
	// without a Record to clear and copy out of.
	var mr format.MessagingRoute
	if err := db.GetMessagingRoute(uint64(n), false, &mr); err != nil {
		return lookup.Error("messaging", err)
	}
	if !mr.Ported.OK && !mr.Block.Assigned {
		return ErrNotFound // before number's canonical form, which allocates
	}
	if !canonical {
		number = n.String()
	}
	var i Info
	i.Set(mr.Messaging, mr.CurrentCarrier())
	// Field by field: a composite literal would clear r and copy it.
	r.PhoneNumber = number
	r.Provider, r.Enabled, r.Source = i.Provider, i.Enabled, i.Source
	r.Country, r.CountryCode, r.ReferenceID = i.Country, i.CountryCode, i.ReferenceID
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
