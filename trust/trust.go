package trust

import (
	"strings"
	"time"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/core/lookup"
	"github.com/lnpdb/lnpdb/internal/core/spamtype"
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

// The trust levels.
const (
	LevelHigh   = "high"   // score 70 and above
	LevelMedium = "medium" // 40 to 69
	LevelLow    = "low"    // below 40
)

// The spam types a trust record carries; a number without one is
// SpamNone.
const (
	SpamNone         = spamtype.None
	SpamSpam         = spamtype.Spam
	SpamScam         = spamtype.Scam
	SpamRobocall     = spamtype.Robocall
	SpamTelemarketer = spamtype.Telemarketer
)

// SpamTypes lists the spam types in the order a table stores them (as an
// index): the order is part of the file format.
var SpamTypes = spamtype.Types

// The reason codes, one per deduction, in the order they are applied.
const (
	ReasonScam         = "SPAM_TYPE_SCAM"
	ReasonRobocall     = "SPAM_TYPE_ROBOCALL"
	ReasonSpam         = "SPAM_TYPE_SPAM"
	ReasonTelemarketer = "SPAM_TYPE_TELEMARKETER"
	ReasonComplaints   = "COMPLAINTS"
	ReasonPorted7D     = "PORTED_7D"
	ReasonPorted30D    = "PORTED_30D"
	ReasonPooled7D     = "POOLED_7D"
	ReasonPooled30D    = "POOLED_30D"
	ReasonVoIP         = "VOIP_CARRIER"
)

// The score's parameters; the package doc explains them.
const (
	maxScore          = 100
	perComplaint      = 3
	maxComplaintsCost = 30
	recent7DCost      = 20
	recent30DCost     = 10
	voipCost          = 10
	maxReasons        = 4 // spam type, complaints, recent activation, VoIP
	highFrom          = 70
	mediumFrom        = 40
)

// spamCost returns the deduction and reason for a spam type, 0 for NONE or
// a type it does not know.
func spamCost(spamType string) (int, string) {
	switch spamType {
	case SpamScam:
		return 60, ReasonScam
	case SpamRobocall:
		return 50, ReasonRobocall
	case SpamSpam:
		return 40, ReasonSpam
	case SpamTelemarketer:
		return 25, ReasonTelemarketer
	}
	return 0, ""
}

// Options tunes a trust lookup.
type Options struct {
	// Now is the time the recent-activation rules count back from; the zero
	// Time means time.Now().
	Now time.Time
}

// Result is the body of POST /api/v1/trust (CONTRACT §5).
type Result struct {
	// PhoneNumber is the canonical 11-digit number.
	PhoneNumber string `json:"phone_number"`
	// Score is 0 to 100, higher is more trustworthy.
	Score int `json:"trust_score"`
	// Level is LevelHigh, LevelMedium or LevelLow.
	Level string `json:"trust_level"`
	// SpamType is SpamNone or the type a trust record reports.
	SpamType string `json:"spam_type"`
	// Complaints is the number of complaints on record.
	Complaints uint32 `json:"complaint_count"`
	// FirstReported and LastReported bound the complaints; zero, and left
	// off the wire, when unknown.
	FirstReported lnpdb.Time `json:"first_reported,omitzero"`
	LastReported  lnpdb.Time `json:"last_reported,omitzero"`
	// Reasons lists one code per deduction, in the order applied; never nil,
	// so the wire carries [] when there is none.
	Reasons []string `json:"reasons"`
}

// Lookup scores number, in any form CONTRACT §1 accepts, as the package doc
// describes. A number that is not ported and whose NPA-NXX code is vacant is
// [ErrNotFound]; an unparsable one matches [ErrInvalidNumber]. Other errors are
// as for lrn.Lookup: [ErrClosed], or a wrapped corruption error that
// matches format.ErrCorrupt.
//
// Lookup is safe for concurrent use. For a canonical input it allocates
// only the Reasons list, and only when there is a deduction.
func Lookup(db *format.DB, number string, opt Options) (Result, error) {
	var r Result
	err := LookupInto(db, number, opt, &r)
	return r, err
}

// LookupInto is [Lookup] writing its answer into *r, which it overwrites
// whole, and only when it returns nil: on an error *r is as it was.
func LookupInto(db *format.DB, number string, opt Options, r *Result) error {
	var rec format.Record
	number, err := lookup.Get(db, number, format.FieldPorted|format.FieldTrust, "trust", &rec)
	if err != nil {
		return err
	}
	now := opt.Now
	if now.IsZero() {
		now = time.Now()
	}
	score(&rec, number, now, r)
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

// noReasons is the Reasons of a number without deductions: empty, not nil,
// so that it marshals as []. Its capacity is 0, so appending to it never
// writes to it.
var noReasons = []string{}

// score sets every field of r, the trust answer for the number phone whose
// record (read with at least FieldPorted|FieldTrust) is rec, as of now.
// It writes each field once, rather than building a Result and copying
// it: r is the caller's, often reused from lookup to lookup. A Reasons
// list is allocated anew when there is a deduction, never appended to the
// one r held, which the caller may still be reading.
func score(rec *format.Record, phone string, now time.Time, r *Result) {
	spamType, complaints := SpamNone, uint32(0)
	var first, last lnpdb.Time
	if t := &rec.Trust; t.OK {
		if t.SpamType != "" {
			spamType = t.SpamType
		}
		complaints = t.Complaints
		first, last = lnpdb.Unix(t.FirstReported), lnpdb.Unix(t.LastReported)
	}
	points, reasons := maxScore, noReasons
	deduct := func(cost int, reason string) {
		if cap(reasons) == 0 {
			reasons = make([]string, 0, maxReasons)
		}
		points -= cost
		reasons = append(reasons, reason)
	}
	if cost, reason := spamCost(spamType); cost != 0 {
		deduct(cost, reason)
	}
	if complaints > 0 {
		deduct(int(min(uint64(complaints)*perComplaint, maxComplaintsCost)), ReasonComplaints)
	}

	c, activated, week, month := rec.CurrentCarrier(), int64(0), ReasonPooled7D, ReasonPooled30D
	switch {
	case rec.Ported.OK:
		activated, week, month = rec.Ported.ActivatedAt, ReasonPorted7D, ReasonPorted30D
	case rec.Block.LRN != "":
		activated = rec.Block.ActivatedAt
	}
	if activated != 0 {
		age := now.Sub(time.Unix(activated, 0))
		switch {
		case age < 0:
			// Scheduled for the future: not yet a recent activation.
		case age <= 7*24*time.Hour:
			deduct(recent7DCost, week)
		case age <= 30*24*time.Hour:
			deduct(recent30DCost, month)
		}
	}
	if c != nil && strings.EqualFold(c.Type, "VOIP") {
		deduct(voipCost, ReasonVoIP)
	}

	points = max(0, min(maxScore, points))
	level := LevelLow
	switch {
	case points >= highFrom:
		level = LevelHigh
	case points >= mediumFrom:
		level = LevelMedium
	}
	r.PhoneNumber, r.Score, r.Level = phone, points, level
	r.SpamType, r.Complaints, r.FirstReported, r.LastReported = spamType, complaints, first, last
	r.Reasons = reasons
}
