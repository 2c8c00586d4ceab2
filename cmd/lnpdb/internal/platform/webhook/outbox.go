package webhook

import (
	"context"
	"time"
)

// Delivery is one webhook to deliver: one event to one URL, attempted
// until it is answered with a 2xx or [Window] has passed since it was
// made. The outbox keeps it; the [Deliverer] attempts it.
type Delivery struct {
	// ID is the webhook-id header, the same on every attempt, by which a
	// receiver recognises a retry of what it already has ([NewID]).
	ID string
	// AccountID is the account whose event it is.
	AccountID string
	// URL is where it is POSTed; it was checked with [CheckURL] when it
	// was given, and the address dialed is checked again on every attempt.
	URL string
	// Secret is the account's signing secret, in the whsec_ form
	// ([NewSecret]).
	Secret string
	// Body is the JSON payload ([Event]), sent byte for byte as stored.
	Body []byte
	// Attempts counts the attempts made before this one.
	Attempts int
	// CreatedAt is when the delivery was made: the retry window runs
	// from it.
	CreatedAt time.Time
}

// Outbox is the durable store of deliveries: a delivery written to it
// (in the same transaction as the event it tells of) is attempted until
// it succeeds or its window passes, across restarts and nodes.
//
// Due claims what it returns: a delivery it returns is not returned again
// (by this outbox or another node's sharing its store) before Lease has
// passed since, unless Done, Retry or Fail is called for it first. A node
// that stops mid-attempt leaves the delivery to be claimed again after
// the lease, so a receiver may get an event more than once, always with
// the same webhook-id. Each attempt ends within [AttemptTimeout], and a
// [Deliverer] takes no more than it attempts at once, so Lease is far
// longer than an attempt.
//
// Done, Retry and Fail record the attempt that ended at the given time;
// attempts is the count including it. Done and Fail end the delivery (an
// implementation may keep it for display, but Due never returns it
// again); Retry makes it due again at next. Calling any of them for an
// id that is no longer pending is not an error (another node, after a
// lease had passed, recorded it first).
type Outbox interface {
	Due(ctx context.Context, now time.Time, limit int) ([]Delivery, error)
	Done(ctx context.Context, id string, at time.Time, attempts int) error
	Retry(ctx context.Context, id string, next time.Time, attempts int, lastErr string) error
	Fail(ctx context.Context, id string, at time.Time, attempts int, lastErr string) error
}

// Lease is how long a delivery returned by [Outbox.Due] is held for the
// caller before it may be returned again.
const Lease = 2 * time.Minute

// Window is how long a delivery is retried, from its CreatedAt.
const Window = 24 * time.Hour
