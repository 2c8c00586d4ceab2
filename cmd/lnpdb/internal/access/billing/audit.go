package billing

import (
	"context"
	"fmt"
	"time"
)

// # Audit
//
// Every change an operator makes through the accounts admin API or the
// operator console, and every key a customer makes or revokes on the
// account pages, is recorded in the store's audit log by the store
// method that makes it, in the same transaction: the change and its record
// commit together or not at all. A change is recorded when its context
// carries an [Actor] ([WithActor]): the admin API's, the console's, the
// account pages' and the lnpdb account, key, wallet and price commands'
// (run on the store's host, as the OS user there) all do.

// Actor is who asks for a change, and from where.
type Actor struct {
	Key    string    // the admin key's id (auth.Key.ID: 8 hex digits of its hash), via "account" the customer's key's (key_…), via "cli" the OS user's name
	Remote string    // the address the request came from (via "cli": the host's name)
	Via    string    // "api" (the admin API), "console", "account" (the customer's pages) or "cli" (the lnpdb commands)
	At     time.Time // when the change was asked for
}

// AuditEntry is one recorded change.
type AuditEntry struct {
	ID      int64     `json:"id"` // ascending: a later entry has a higher id
	At      time.Time `json:"at"`
	Key     string    `json:"admin_key"`
	Remote  string    `json:"remote"`
	Via     string    `json:"via"`
	Action  string    `json:"action"`  // one of the Audit constants
	Account string    `json:"account"` // "" for the default prices
	Detail  string    `json:"detail"`
}

// The audited actions.
const (
	AuditCreate   = "account.create"
	AuditSuspend  = "account.suspend"
	AuditActivate = "account.activate"
	AuditNewKey   = "key.new"
	AuditRevoke   = "key.revoke"
	AuditCredit   = "credit"
	AuditPrice    = "price.set"
)

type actorKey struct{}

// WithActor returns ctx carrying a: the changes made with it are audited.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// audit returns the entry of a change made with ctx, and whether ctx
// carries an actor (and the change is to be recorded).
func audit(ctx context.Context, action, account, format string, args ...any) (AuditEntry, bool) {
	a, ok := ctx.Value(actorKey{}).(Actor)
	if !ok {
		return AuditEntry{}, false
	}
	at := a.At
	if at.IsZero() {
		at = time.Now()
	}
	return AuditEntry{
		At: at.UTC().Truncate(time.Microsecond), Key: a.Key, Remote: a.Remote, Via: a.Via,
		Action: action, Account: account, Detail: fmt.Sprintf(format, args...),
	}, true
}

// statusAction is the audited action of setting status st.
func statusAction(st Status) string {
	if st == StatusSuspended {
		return AuditSuspend
	}
	return AuditActivate
}

// creditDetail describes a credit for the audit log.
func creditDetail(c Credit, applied bool) string {
	if !applied {
		return fmt.Sprintf("$%s ref %q: credited before, nothing changed", c.Amount, c.Ref)
	}
	return fmt.Sprintf("$%s ref %q", c.Amount, c.Ref)
}

// MaxAuditPage is the most entries one [Store.Audit] call returns.
const MaxAuditPage = 500

func auditLimit(limit int) int {
	if limit <= 0 || limit > MaxAuditPage {
		return MaxAuditPage
	}
	return limit
}
