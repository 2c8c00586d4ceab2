package lrn

import (
	"time"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/core/lookup"
	"github.com/lnpdb/lnpdb/internal/core/nanp"
	"github.com/lnpdb/lnpdb/messaging"
)

// The sentinel errors of a lookup. They are the same values as the root
// package's, so errors.Is matches either name.
var (
	// ErrInvalidNumber: the input is not a valid NANP number (CONTRACT §1).
	ErrInvalidNumber = lnpdb.ErrInvalidNumber
	// ErrNotFound: the number is not ported and its NPA-NXX code is vacant.
	ErrNotFound = lnpdb.ErrNotFound
	// ErrClosed: the table has been closed.
	ErrClosed = lnpdb.ErrClosed
)

// Options selects what a lookup adds to the LRN.
type Options struct {
	// Enhanced adds the carrier and rate center data (enhanced_lrn_data).
	Enhanced bool
	// Messaging adds the messaging provider (messaging).
	Messaging bool
}

// fields returns what the table must read for o: the ported record always
// (resolution step 1), the messaging record when asked for, and the block
// data (steps 2 and 3) for a ported number only when enhanced data, which
// takes its rate center from the block, is asked for. Messaging's carrier
// default comes from the ported record's carrier for a ported number.
func (o Options) fields() format.Fields {
	f := format.FieldPorted
	if o.Messaging {
		f |= format.FieldMessaging
	}
	if !o.Enhanced {
		f |= format.BlockUnlessPorted
	}
	return f
}

// Source says how the LRN was resolved (CONTRACT §2 steps 1–3).
type Source uint8

const (
	// SourcePorted: the number's own ported record (NPAC subscription version).
	SourcePorted Source = iota + 1
	// SourcePooled: the LRN of the number's pooled thousands-block.
	SourcePooled
	// SourceCode: neither; the number routes on itself in its assigned code.
	SourceCode
)

// String returns "ported", "pooled" or "code".
func (s Source) String() string { return lookup.Name("Source", sourceNames[:], s) }

var sourceNames = [...]string{SourcePorted: "ported", SourcePooled: "pooled", SourceCode: "code"}

// Result is the answer to an LRN lookup. It marshals with encoding/json to
// exactly the REST body of POST /api/v1/lrn.
//
// Its strings point into the table's dictionaries; they stay valid after
// the table is closed (they are ordinary Go strings).
type Result struct {
	// LRN is the local routing number, 11 digits with a leading 1.
	LRN string `json:"lrn"`
	// PhoneNumber is the looked-up number, canonical 11 digits.
	PhoneNumber string `json:"phone_number"`
	// ActivatedAt is when the LRN took effect (port or block activation);
	// zero, and left off the wire, when unknown or when the number routes on
	// itself.
	ActivatedAt lnpdb.Time `json:"lrn_activated_at,omitzero"`
	// Enhanced is the carrier and location; zero unless Options.Enhanced.
	Enhanced Enhanced `json:"enhanced_lrn_data,omitzero"`
	// Messaging is the messaging provider; zero unless Options.Messaging.
	Messaging messaging.Info `json:"messaging,omitzero"`

	// Ported reports that the number has a ported record.
	Ported bool `json:"-"`
	// Source says which resolution step produced LRN.
	Source Source `json:"-"`
	// SPID is the current carrier's SPID (= OCN): the ported record's new
	// current SPID, else the OCN of the number's most specific block row.
	SPID string `json:"-"`
}

// Lookup resolves number, in any form CONTRACT §1 accepts, to its LRN
// (CONTRACT §2), in this order:
//
//  1. the number's ported record: its LRN and activation time;
//  2. else the LRN of its pooled thousands-block: the block's LRN and
//     activation time;
//  3. else, when its NPA-NXX code is assigned, the number itself, with no
//     activation time;
//  4. else [ErrNotFound].
//
// An invalid number is an error matching [ErrInvalidNumber] that says what
// is wrong (which NANP rule it breaks, when it has the right shape); a
// closed table is [ErrClosed].
// Any other error reports a damaged table: it wraps a *format.CorruptError,
// so errors.Is(err, format.ErrCorrupt) matches it; treat it as an internal
// error.
//
// Lookup is safe for concurrent use. For an input already in canonical form
// (11 digits starting with 1) it allocates nothing, with or without
// enhanced and messaging data. A caller on a hot path uses [LookupInto],
// which fills the caller's Result rather than returning a copy of one.
func Lookup(db *format.DB, number string, opt Options) (Result, error) {
	var r Result
	err := LookupInto(db, number, opt, &r)
	return r, err
}

// LookupInto is [Lookup] writing its answer into *r, which it overwrites
// whole, and only when it returns nil: on an error *r is as it was. A
// Result is about 300 bytes, and returning one costs its clearing and a
// copy, a fifth of a lookup's own work; a caller that keeps one (on its
// stack, in its connection) saves both.
func LookupInto(db *format.DB, number string, opt Options, r *Result) error {
	if opt.Messaging {
		return lookupMessaging(db, number, opt, r)
	}
	// Without messaging only the ported record and the block row are
	// read, into a Route: a third of a Record to clear and fill.
	n, canonical := nanp.ParseCanonical(number)
	if !canonical {
		var err error
		if n, _, err = nanp.Parse(number); err != nil {
			return err
		}
	}
	var rt format.Route
	if err := db.GetRoute(uint64(n), !opt.Enhanced, &rt); err != nil {
		return lookup.Error("lrn", err)
	}
	if !rt.Ported.OK && !rt.Block.Assigned {
		return ErrNotFound // before number's canonical form, which allocates
	}
	if !canonical {
		number = n.String()
	}
	if opt.Enhanced || r.Enhanced.present {
		resolve(r, &rt.Ported, &rt.Block, nil, number, opt)
		return nil
	}
	// The plain answer, as resolve writes it, in this frame: resolve's
	// call and its frame were a fifth of what a lookup spends here.
	lrn, at, source, c, _ := route(&rt.Ported, &rt.Block, number)
	var t lnpdb.Time // lnpdb.Unix(at), inlined (see set)
	if at != 0 {
		t.Time = time.Unix(at, 0).UTC()
	}
	r.set(lrn, t, source, c, number)
	r.Messaging.Reset()
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

// resolve sets every field of r from the ported record p and the block row
// b (and, with opt.Messaging, from rec, which holds them) of the number
// whose canonical form is phone, and reports false when the number is
// vacant, having written nothing to r. It overwrites r whole, so that LookupMany
// can reuse a caller's slice without clearing it first.
func resolve(r *Result, p *format.Ported, b *format.Block, rec *format.Record, phone string, opt Options) bool {
	lrn, at, source, c, ok := route(p, b, phone)
	if !ok {
		return false
	}
	var t lnpdb.Time // lnpdb.Unix(at), inlined (see set)
	if at != 0 {
		t.Time = time.Unix(at, 0).UTC()
	}
	r.set(lrn, t, source, c, phone)
	switch {
	case opt.Enhanced:
		sv := format.SVTypeNone
		if p.OK {
			sv = p.SVType
		}
		setEnhanced(&r.Enhanced, c, sv, b.RateCenter)
	case r.Enhanced.present: // not IsZero, which copies the whole struct
		r.Enhanced = Enhanced{}
	}
	switch {
	case rec != nil:
		r.Messaging = messaging.FromRecord(rec)
	case opt.Messaging:
		// Set by the caller, which read the messaging record without a
		// Record.
	default:
		// Cleared only when a lookup filled it, as Enhanced: a plain
		// lookup into a reused Result does not clear an empty Info again.
		r.Messaging.Reset()
	}
	return true
}

// route resolves the LRN of the number whose canonical form is phone from
// its ported record p and block row b (CONTRACT §2 steps 1–3): the LRN,
// its activation, which step gave it, and the number's current carrier;
// ok is false when the number is vacant.
func route(p *format.Ported, b *format.Block, phone string) (lrn string, at int64, source Source, c *format.Carrier, ok bool) {
	switch {
	case p.OK:
		return p.LRN, p.ActivatedAt, SourcePorted, p.Carrier, true
	case b.LRN != "":
		return b.LRN, b.ActivatedAt, SourcePooled, b.Carrier, true
	case b.Assigned:
		return phone, 0, SourceCode, b.Carrier, true
	}
	return "", 0, 0, nil, false
}

// set writes every field of r but Enhanced and Messaging, the plain
// answer: the LRN lrn, active since t, from step source, for the number
// phone, whose current carrier is c. It is small enough to be inlined, and
// so takes t made: lnpdb.Unix is not (time.Unix and UTC inline, but not
// both within the budget of one function), and its call would cost a
// lookup a frame's spills, so its callers write it out.
func (r *Result) set(lrn string, t lnpdb.Time, source Source, c *format.Carrier, phone string) {
	spid := "" // one store into r, not a clear and then the OCN
	if c != nil {
		spid = c.OCN
	}
	// Field by field rather than *r = Result{...}: the composite literal
	// zeroes and copies the whole struct, a third of the cost of a cached
	// lookup.
	r.LRN = lrn
	r.PhoneNumber = phone
	r.ActivatedAt = t
	r.SPID = spid
	r.Ported = source == SourcePorted
	r.Source = source
}
