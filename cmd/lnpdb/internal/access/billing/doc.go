// Package billing owns the money side of lnpdb serve: accounts, their API
// keys, prepaid wallets, prices, the monthly free tier, the usage ledger,
// and the lease engine that charges lookups without a store round trip per
// lookup.
//
// # Money
//
// Amounts are integers in micro-dollars ([Micros]); text is parsed exactly
// by [ParseAmount], never through a float. Every billable [Kind] has a price
// ([DefaultPrices], overridable for the whole store and per account). Each
// account's first [FreeTier] LRN or enhanced-LRN lookups of each calendar
// month (UTC) are free; then the wallet pays. A wallet only grows by a
// top-up ([Store.Credit], idempotent on its reference); there is no
// auto-refill.
//
// # Stores
//
// [Store] is one interface with two implementations, held to the same
// tests: [BoltStore], one bbolt file created on first use (one process at a
// time), and [PostgresStore], PostgreSQL with embedded migrations applied at
// start, for several processes billing one set of wallets. [Open] picks one
// from a DSN: bolt:///path/accounts.db or postgres://….
//
// # Leases
//
// A serving process does not write to the store per lookup. Its [Engine]
// leases a block of an account's credit (and of its free lookups) in one
// transaction ([Store.Sync]), which moves that credit out of the balance into
// the lease; lookups spend the lease in memory. About once a second, and
// whenever a lease runs low, the engine syncs: in one transaction per batch
// of accounts it records what was spent (the usage ledger) and tops the lease
// up, which also extends its expiry. On shutdown it returns what its leases
// hold. Credit thus only ever moves between a balance, a lease and the
// ledger, under the account's lock, so a balance never goes below zero and
// credits = balance + leased + charged at every commit.
//
// A full lease holds about three seconds of the account's recent spending
// (at least [EngineConfig.LeaseCredit]), so renewals run ahead of it. Near
// the end of a wallet, a process may find it short while another still
// holds the rest in its lease: a refusal makes the refusing process hand
// back what its lease holds at once and recall the other leases (a flag the
// store sets on each, handed back at its holder's next sync) while the
// lookup waits for them a moment; a lease unused for a second goes back by
// itself. So the wallet is spent to the last micro-dollar, and an idle
// process does not sit on it.
//
// # Deadlines and delivery
//
// A lookup that needs the store (its lease is spent) waits for it at most
// [EngineConfig.StoreTimeout], then fails with [ErrStoreUnavailable],
// uncharged; until then lookups are paid from what the lease holds.
// [Engine.Charge] returns a [Hold]: the payment, taken from the lease, is
// charged only when the caller settles it as delivered, and goes back to
// the lease otherwise.
//
// What a crash costs: a killed process's leases stay out until they expire
// (LeaseTTL after its last sync, 30 s by default); then any process's
// expiry sweep returns what they held to the balance, and the customer has
// lost nothing. The lookups it answered after its last sync are never
// charged: the operator loses at most one sync interval (a second) of that
// process's lookups for each account, and never more than its leases held.
// Nothing is charged twice, because a sync carries a sequence number the
// store applies once; a sync whose outcome is unknown is sent again as it
// was, what was spent since in the next, and so a process that stops
// (Close) has charged every lookup it answered. What a sync gives back
// (the lease shrinks when spending slows) is given up when it is sent:
// until its answer comes, however late, the process spends only what it
// leaves the lease, so the next sync never reports more than the lease
// holds. A process stops spending a lease a quarter of LeaseTTL
// before it expires. An expired lease is kept, empty, for a day: a process
// that could not reach the store for longer than LeaseTTL and is back has
// what it spent of the lease charged from the balance its credit went back
// to, and the lease lives on; only a report the balance no longer covers
// (other leases took it since), and a sync for a lease released or kept
// past its day, are refused ([ErrLeaseLost]), so no balance goes below
// zero.
//
// # Lookup jobs
//
// [Jobs], which both stores implement, keeps lookup jobs: lists of up to
// [MaxJobNumbers] numbers cut into chunks that any process claims for a
// lease ([Jobs.ClaimChunk]; PostgreSQL's FOR UPDATE SKIP LOCKED). A
// chunk's answers (zstd), their charge (the free tier first, then the
// balance, outside the lease engine: one transaction per chunk, not per
// lookup), the usage ledger and, when the job stops, its webhook in the
// outbox are written in one transaction ([Jobs.CommitChunk]), accepted
// only from the chunk's current claim: a process killed mid-chunk charges
// nothing, and its chunk is answered again, once, after the lease. The
// rule is commitChunk's, shared by both stores. The outbox is
// [webhook.Outbox] through [WebhookOutbox].
package billing
