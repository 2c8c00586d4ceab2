package billing

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/redact"
)

// Kind is a billable kind of lookup.
type Kind string

// The billable kinds. An LRN lookup is KindLRN or KindLRNEnhanced, plus
// KindMessagingAddon when it asks for the messaging provider too.
const (
	KindLRN            Kind = "lrn"
	KindLRNEnhanced    Kind = "lrn_enhanced"
	KindMessagingAddon Kind = "messaging_addon"
	KindCNAM           Kind = "cnam"
	KindMessaging      Kind = "messaging"
	KindTrust          Kind = "trust"
)

// Kinds lists the billable kinds in a fixed order.
var Kinds = []Kind{KindLRN, KindLRNEnhanced, KindMessagingAddon, KindCNAM, KindMessaging, KindTrust}

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool { return k.index() >= 0 }

func (k Kind) index() int {
	for i, x := range Kinds {
		if x == k {
			return i
		}
	}
	return -1
}

// Free reports whether lookups of kind k draw on the monthly free tier.
func (k Kind) Free() bool { return k == KindLRN || k == KindLRNEnhanced }

// DefaultPrices is the price list of an account without prices of its own
// and of a store where none were set: micro-dollars per lookup.
var DefaultPrices = Prices{
	KindLRN:            1000, // $0.001
	KindLRNEnhanced:    2000, // $0.002
	KindMessagingAddon: 1000, // $0.001
	KindCNAM:           3000, // $0.003
	KindMessaging:      1000, // $0.001
	KindTrust:          2000, // $0.002
}

// FreeTier is the number of LRN or enhanced-LRN lookups each account gets
// free each calendar month (UTC).
const FreeTier = 10

// Prices is a price list: micro-dollars per lookup of each kind.
type Prices map[Kind]Micros

// Status is an account's status.
type Status string

// Account statuses. A suspended account's keys do not authenticate.
const (
	StatusActive    Status = "active"
	StatusSuspended Status = "suspended"
)

// Account is a customer: the owner of keys, a wallet and a price list.
type Account struct {
	ID      string    `json:"id"`
	Name    string    `json:"name"`
	Status  Status    `json:"status"`
	Created time.Time `json:"created"`
	// Balance is the wallet's credit not held by any lease.
	Balance Micros `json:"balance_micros"`
	// Leased is the credit held by the leases of serving processes: it is
	// spent or returned to Balance when they renew, stop or expire.
	Leased Micros `json:"leased_micros"`
	// Credited is the sum of all top-ups.
	Credited Micros `json:"credited_micros"`
}

// KeyRecord is an API key as the store knows it: its SHA-256, never the key.
type KeyRecord struct {
	ID        string    `json:"id"`
	AccountID string    `json:"account_id"`
	Label     string    `json:"label"`
	Hash      [32]byte  `json:"-"`
	Limit     int       `json:"rate_limit"` // requests per minute; 0: the server's default
	Created   time.Time `json:"created"`
	Revoked   time.Time `json:"revoked,omitzero"` // zero while the key is valid
	// LastUsed is when a lookup last came with the key, to the second, as
	// the serving processes report it (every few seconds); zero if never.
	LastUsed time.Time `json:"last_used,omitzero"`
}

// Credit is one top-up of a wallet.
type Credit struct {
	AccountID string    `json:"account_id"`
	Ref       string    `json:"ref"`
	Amount    Micros    `json:"amount_micros"`
	Created   time.Time `json:"created"`
}

// UsageRow is the usage ledger's line for one account, day (UTC) and kind.
type UsageRow struct {
	AccountID string `json:"account_id"`
	Day       string `json:"day"` // 2006-01-02
	Kind      Kind   `json:"kind"`
	Lookups   int64  `json:"lookups"` // charged lookups, free ones included
	Free      int64  `json:"free"`    // of which the free tier paid
	Amount    Micros `json:"amount_micros"`
}

// LeaseSync is one account's part of a [Store.Sync]: what a process spent
// of its lease since its last sync, and what it wants the lease to hold.
type LeaseSync struct {
	Account string
	// Lease is the lease to settle and renew; 0 takes a new one.
	Lease  int64
	Holder string // who holds it, for operators: host and pid
	// Seq numbers the syncs of a lease from 1. A sync whose Seq the lease
	// has seen is not applied again (its spending was recorded), so a
	// sync whose outcome was lost can be retried as it was.
	Seq int64
	// SpentCredit and SpentFree are what was spent of the lease since its
	// last sync; Usage says on what (its amounts and free counts sum to
	// them).
	SpentCredit Micros
	SpentFree   int64
	Usage       []UsageRow
	// WantCredit and WantFree are what the lease should hold after the
	// sync; the store grants what the wallet and the month's free tier
	// have.
	WantCredit Micros
	WantFree   int64
	// Release returns what the lease holds and ends it.
	Release bool
	// Recall asks the account's other leases back: the process found the
	// wallet short while other processes hold part of it. Each is handed
	// back by its holder at its next sync (LeaseState.Recalled).
	Recall bool
}

// LeaseState is a lease after a sync, and the account as it stood.
type LeaseState struct {
	Lease   int64
	Credit  Micros // unspent credit the lease holds
	Free    int64  // unspent free lookups the lease holds
	Month   string // the month (2006-01) of the lease's free lookups
	Expires time.Time
	// Balance and FreeLeft are what the store still has for the account,
	// outside the lease.
	Balance  Micros
	FreeLeft int64
	// Leased is the credit the account's other leases hold: the wallet
	// is Balance + Leased + this lease's Credit.
	Leased Micros
	// Recalled says another process asked this lease's credit back
	// since its last sync: hand it back (keep only what is spoken for).
	Recalled bool
	Status   Status
	Prices   Prices
	// Err is why this account's sync failed: ErrNotFound, ErrLeaseLost or
	// ErrInvalid.
	Err error
}

// Store keeps accounts, keys, wallets, prices, leases and the usage ledger.
// Every method is one transaction; implementations are safe for concurrent
// use, and [PostgresStore] for use by several processes.
type Store interface {
	CreateAccount(ctx context.Context, name string, now time.Time) (Account, error)
	Account(ctx context.Context, id string) (Account, error)
	Accounts(ctx context.Context) ([]Account, error)
	SetStatus(ctx context.Context, id string, s Status) (Account, error)

	// AddKey stores k (its ID and Created are set here) for k.AccountID.
	AddKey(ctx context.Context, k KeyRecord, now time.Time) (KeyRecord, error)
	// AddKeyCapped is AddKey refused with ErrKeyCap when k.AccountID
	// already has maxValid keys not revoked: counted and added in one
	// transaction, so that requests made together cannot pass the cap.
	AddKeyCapped(ctx context.Context, k KeyRecord, now time.Time, maxValid int) (KeyRecord, error)
	// Keys returns accountID's keys, or every account's for "".
	Keys(ctx context.Context, accountID string) ([]KeyRecord, error)
	RevokeKey(ctx context.Context, accountID, keyID string, now time.Time) (KeyRecord, error)
	// KeysUsed records when keys were last used: each key's LastUsed
	// becomes the later of its own and used[its id]; ids of no key are
	// skipped. It changes no key's validity, so it is announced to no
	// engine.
	KeysUsed(ctx context.Context, used map[string]time.Time) error

	// Credit tops up an account's wallet once per ref: a second credit with
	// the same ref and amount changes nothing and returns applied false;
	// with another amount it fails with ErrConflict.
	Credit(ctx context.Context, accountID string, amount Micros, ref string, now time.Time) (c Credit, applied bool, err error)
	Credits(ctx context.Context, accountID string) ([]Credit, error)

	// SetPrice sets the price of kind for accountID, or the default price
	// for "".
	SetPrice(ctx context.Context, accountID string, kind Kind, price Micros) error
	// Prices returns the prices accountID pays ("" for the defaults).
	Prices(ctx context.Context, accountID string) (Prices, error)

	// Sync settles and renews leases, one account each, in one
	// transaction; leases expire ttl after now.
	Sync(ctx context.Context, now time.Time, ttl time.Duration, reqs []LeaseSync) ([]LeaseState, error)
	// ExpireLeases returns to their accounts what the leases that expired
	// before now hold, ends them, and says how many.
	ExpireLeases(ctx context.Context, now time.Time) (int, error)
	// FreeLeft returns the free lookups accountID has left in month (2006-01)
	// outside leases.
	FreeLeft(ctx context.Context, accountID, month string) (int64, error)

	// Usage returns the ledger's rows for accountID ("" for all) whose day
	// is in month (2006-01), ordered by account, day and kind.
	Usage(ctx context.Context, accountID, month string) ([]UsageRow, error)

	// Audit returns the audit log, newest first: accountID's entries (""
	// for all) with ids below before (0: from the newest), at most limit
	// of them (0 or above MaxAuditPage: MaxAuditPage).
	Audit(ctx context.Context, accountID string, before int64, limit int) ([]AuditEntry, error)

	Close() error
}

// The store's errors.
var (
	ErrNotFound  = errors.New("not found")
	ErrConflict  = errors.New("conflict")
	ErrInvalid   = errors.New("invalid")
	ErrLeaseLost = errors.New("lease expired and returned: its unsynced lookups go unbilled")
	// ErrKeyCap is AddKeyCapped's refusal: the account has as many valid
	// keys as the cap.
	ErrKeyCap = errors.New("the account has the most valid keys allowed")
)

// Open opens the store a DSN names: bolt:///path/to/accounts.db (created on
// first use) or postgres://… (migrated to the current schema).
func Open(ctx context.Context, dsn string) (Store, error) {
	return OpenIn(ctx, dsn, "")
}

// OpenIn is Open with the PostgreSQL store's tables in schema (created when
// absent; "" is the connection's search_path). A bolt store has no schema.
func OpenIn(ctx context.Context, dsn, schema string) (Store, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, redact.Err(fmt.Errorf("accounts DSN %q: %w", redact.DSN(dsn), err), dsn)
	}
	switch u.Scheme {
	case "bolt":
		path := u.Path
		if u.Host != "" || path == "" {
			return nil, fmt.Errorf("accounts DSN %q: want bolt:///absolute/path/accounts.db", redact.DSN(dsn))
		}
		if schema != "" {
			return nil, fmt.Errorf("accounts DSN %q: a bolt store has no schema (schema %q given)", redact.DSN(dsn), schema)
		}
		return OpenBolt(path)
	case "postgres", "postgresql":
		return OpenPostgres(ctx, dsn, schema)
	default:
		return nil, fmt.Errorf("accounts DSN %q: the scheme must be bolt or postgres", redact.DSN(dsn))
	}
}

// newID returns a random id with prefix.
func newID(prefix string) string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	return prefix + strings.ToLower(base32.StdEncoding.EncodeToString(b[:]))
}

// Month returns t's month in UTC as 2006-01.
func Month(t time.Time) string { return t.UTC().Format("2006-01") }

// Day returns t's day in UTC as 2006-01-02.
func Day(t time.Time) string { return t.UTC().Format("2006-01-02") }

// ParseMonth checks a month written 2006-01.
func ParseMonth(s string) (string, error) {
	t, err := time.Parse("2006-01", s)
	if err != nil {
		return "", fmt.Errorf("%w: month %q: want YYYY-MM", ErrInvalid, s)
	}
	return t.Format("2006-01"), nil
}

// validate checks what every store checks of a sync before touching data.
func (r *LeaseSync) validate() error {
	var amount Micros
	var free int64
	for _, u := range r.Usage {
		if !u.Kind.Valid() || u.Lookups < 0 || u.Free < 0 || u.Amount < 0 || u.Free > u.Lookups {
			return fmt.Errorf("%w: usage row %+v", ErrInvalid, u)
		}
		if _, err := time.Parse("2006-01-02", u.Day); err != nil {
			return fmt.Errorf("%w: usage day %q", ErrInvalid, u.Day)
		}
		amount += u.Amount
		free += u.Free
	}
	switch {
	case r.SpentCredit < 0 || r.SpentFree < 0 || r.WantCredit < 0 || r.WantFree < 0:
		return fmt.Errorf("%w: negative amounts in a lease sync", ErrInvalid)
	case amount != r.SpentCredit || free != r.SpentFree:
		return fmt.Errorf("%w: usage rows sum to %d micros and %d free, the sync spends %d and %d", ErrInvalid, amount, free, r.SpentCredit, r.SpentFree)
	case r.Lease == 0 && (r.SpentCredit != 0 || r.SpentFree != 0):
		return fmt.Errorf("%w: spending without a lease", ErrInvalid)
	}
	return nil
}

// effective merges price lists: DefaultPrices, then each of lists.
func effective(lists ...Prices) Prices {
	p := make(Prices, len(Kinds))
	for k, v := range DefaultPrices {
		p[k] = v
	}
	for _, l := range lists {
		for k, v := range l {
			p[k] = v
		}
	}
	return p
}
