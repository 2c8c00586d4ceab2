package billing

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// EngineConfig configures an Engine. Store is required.
type EngineConfig struct {
	Store Store
	// Holder names this process in the leases it holds; "" means host:pid.
	Holder string
	// LeaseTTL is how long a lease outlives its last sync: what a killed
	// process's leases stay out before they return. 0 means 30 s.
	LeaseTTL time.Duration
	// SyncEvery is how often usage is flushed and leases renewed; 0 means
	// 1 s. It must be well under LeaseTTL.
	SyncEvery time.Duration
	// LeaseCredit is the credit a lease holds when full: a process sees a
	// store round trip about once per LeaseCredit of lookups. 0 means
	// $0.50.
	LeaseCredit Micros
	// KeysEvery is how often keys and account statuses are reloaded from
	// the store (others may change them); 0 means 5 s.
	KeysEvery time.Duration
	// StoreTimeout bounds the store calls a request waits on: a lookup
	// that needs the store (its lease is spent) and a usage report. A
	// lookup the store does not answer in time fails with
	// ErrStoreUnavailable, uncharged. 0 means DefaultStoreTimeout.
	StoreTimeout time.Duration
	// Now is the clock; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Engine charges lookups to accounts from leases held in memory (see the
// package doc). It is safe for concurrent use.
type Engine struct {
	store                   Store
	holder                  string
	ttl, margin, every      time.Duration
	keysEvery               time.Duration
	storeTimeout            time.Duration
	leaseCredit             Micros
	now                     func() time.Time
	log                     *slog.Logger
	keys                    atomic.Pointer[map[[32]byte]keyEntry]
	suspended               atomic.Pointer[map[[32]byte]struct{}] // valid keys of suspended accounts
	mu                      sync.Mutex                            // guards accounts
	accounts                map[string]*acctState
	kick                    chan struct{}
	stop                    chan struct{}
	done                    chan struct{}
	closeOnce               sync.Once
	reloadMu                sync.Mutex         // one ReloadKeys at a time
	unwatch                 context.CancelFunc // stops the store's KeysWatcher; nil without one
	watching                sync.WaitGroup
	unbilled                atomic.Int64 // lookups answered on leases lost to expiry
	syncs, syncErrs, lookup atomic.Int64
	undelivered             atomic.Int64 // lookups paid for, not delivered, refunded
	storeTimeouts           atomic.Int64 // store calls of requests past StoreTimeout
	recallsAsked            atomic.Int64 // syncs recalling other processes' leases
	recallsAnswered         atomic.Int64 // leases of this process handed back when recalled
	usesMu                  sync.Mutex   // guards uses
	uses                    map[[32]byte]*keyUse
}

type keyEntry struct {
	rec  KeyRecord
	acct *acctState
	use  *keyUse
}

// keyUse is when this process last charged a lookup to a key, and what of
// it the store has ([Store.KeysUsed]).
type keyUse struct {
	id   string
	at   atomic.Int64 // Unix seconds of the last lookup
	sent atomic.Int64 // the last at the store took
}

// mark notes a lookup at now: a load, and a store once a second at most.
func (u *keyUse) mark(now time.Time) {
	if sec := now.Unix(); u.at.Load() < sec {
		u.at.Store(sec)
	}
}

// usesEvery is how often the engine reports its keys' last use to the
// store: last use is shown to the minute, not worth a write a second.
const usesEvery = 10 * time.Second

// acctState is one account as this process bills it.
type acctState struct {
	id string
	// syncing holds a token while the account syncs: one sync at a time,
	// and a lookup waits for it no longer than its deadline.
	syncing chan struct{}

	mu       sync.Mutex // guards what follows
	gen      uint64     // counts syncs: a charge that waited for one need not sync again
	status   Status
	prices   [6]Micros // by Kind index
	lease    int64
	seq      int64
	credit   Micros // of the lease, unspent, after pending
	free     int64  // free lookups of the lease, unspent, after pending
	month    string // of the lease's free lookups
	deadline time.Time
	balance  Micros // the store's balance outside leases, at the last sync
	others   Micros // what other processes' leases held, at the last sync
	// recalled: another process asked this lease back; recall: this one
	// asks the others back at its next sync
	recalled, recall bool
	freeLeft         int64  // the month's free lookups left in the store, at the last sync
	pendC            Micros // spent since the last sync
	pendF            int64
	// reserved and reservedF are held by lookups paid for whose answers
	// are being written: spent if delivered, back to credit and free if
	// not ([Hold.Settle]). They belong to the lease of epoch.
	reserved  Micros
	reservedF int64
	// epoch counts the leases this process held of the account: a hold
	// of an earlier one settles nothing into the current one.
	epoch    uint64
	pend     map[usageKey]*UsageRow
	inflight *LeaseSync // a sync whose outcome is unknown, to resend as it was
	lastUsed time.Time
	// the lease's size, and the spending rate (micros per second) it
	// follows
	want   Micros
	spent  Micros
	rate   float64
	rateAt time.Time
	// short: the price of a lookup refused since the last sync
	short Micros
	// freeDemand: a free-tier lookup waits for a free lookup to be leased;
	// freeKeep: one was, by the last sync
	freeDemand, freeKeep bool
	// today's day, cached
	day              string
	dayStart, dayEnd time.Time
}

type usageKey struct {
	day  string
	kind Kind
}

// ErrInsufficientBalance is what Charge returns (wrapped in an
// *InsufficientBalanceError) when the free tier is used up and the wallet
// cannot pay.
var ErrInsufficientBalance = errors.New("insufficient balance")

// InsufficientBalanceError says what a refused lookup would have cost and
// what the wallet holds.
type InsufficientBalanceError struct {
	// Balance is the whole wallet: Leased, what other processes' leases
	// hold of it, included.
	Price, Balance, Leased Micros
}

func (e *InsufficientBalanceError) Error() string {
	return fmt.Sprintf("the lookup costs $%s and the wallet holds $%s; the free tier of %d lookups is used up this month", e.Price, e.Balance, FreeTier)
}

func (e *InsufficientBalanceError) Unwrap() error { return ErrInsufficientBalance }

// ErrStoreUnavailable is what Charge and Usage return (wrapped) when the
// store does not answer within the engine's StoreTimeout, or fails: the
// lookup is refused and not charged.
var ErrStoreUnavailable = errors.New("billing: the accounts store is unavailable")

// DefaultStoreTimeout is EngineConfig.StoreTimeout's default: well under
// the server's write timeout, and a hundred times a store round trip.
const DefaultStoreTimeout = 2 * time.Second

// maxTries bounds the syncs one lookup may wait for; past it the lookup is
// refused as the wallet stood.
const maxTries = 20

// ErrClosed is what Charge returns after Close.
var ErrClosed = errors.New("billing: engine closed")

// ErrUnknownKey is what Charge returns for a key the engine does not know.
var ErrUnknownKey = errors.New("unknown API key")

// NewEngine loads the store's keys and starts the engine's background sync.
// Close it to return its leases.
func NewEngine(ctx context.Context, cfg EngineConfig) (*Engine, error) {
	if cfg.Store == nil {
		return nil, errors.New("billing: EngineConfig.Store is required")
	}
	e := &Engine{
		store: cfg.Store, holder: cfg.Holder, ttl: cfg.LeaseTTL, every: cfg.SyncEvery,
		keysEvery: cfg.KeysEvery, leaseCredit: cfg.LeaseCredit, now: cfg.Now, log: cfg.Logger,
		accounts: map[string]*acctState{}, kick: make(chan struct{}, 1), uses: map[[32]byte]*keyUse{},
		stop: make(chan struct{}), done: make(chan struct{}),
	}
	if e.holder == "" {
		host, _ := os.Hostname()
		e.holder = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	if e.ttl <= 0 {
		e.ttl = 30 * time.Second
	}
	if e.every <= 0 {
		e.every = time.Second
	}
	if e.every > e.ttl/4 {
		return nil, fmt.Errorf("billing: SyncEvery %v must be at most a quarter of LeaseTTL %v", e.every, e.ttl)
	}
	e.margin = e.ttl / 4
	if e.keysEvery <= 0 {
		e.keysEvery = 5 * time.Second
	}
	e.storeTimeout = cfg.StoreTimeout
	if e.storeTimeout <= 0 {
		e.storeTimeout = DefaultStoreTimeout
	}
	if e.leaseCredit <= 0 {
		e.leaseCredit = MicrosPerDollar / 2
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if err := e.ReloadKeys(ctx); err != nil {
		return nil, err
	}
	go e.loop()
	if w, ok := e.store.(KeysWatcher); ok {
		wctx, cancel := context.WithCancel(context.Background())
		e.unwatch = cancel
		e.watching.Go(func() { e.watchKeys(w.WatchKeys(wctx)) })
	}
	return e, nil
}

// KeysWatcher is a Store that signals when keys or account statuses may
// have changed in it, by any process sharing it, until ctx ends: the
// engine reloads them at once then, so that a key revoked on one node is
// refused by the others within a round trip rather than at their next
// KeysEvery (CONTRACT: key revocation).
type KeysWatcher interface {
	WatchKeys(ctx context.Context) <-chan struct{}
}

// watchKeys reloads the keys at each signal of changes.
func (e *Engine) watchKeys(changed <-chan struct{}) {
	for {
		select {
		case <-e.stop:
			return
		case <-changed:
		}
		ctx, cancel := context.WithTimeout(context.Background(), e.ttl/4)
		if err := e.ReloadKeys(ctx); err != nil {
			e.log.Error("reloading keys after a change announced by the store", "error", err)
		}
		cancel()
	}
}

// ReloadKeys reloads keys and account statuses from the store now.
func (e *Engine) ReloadKeys(ctx context.Context) error {
	// One reload at a time, so that an older read is never stored over
	// a newer one (which would bring a revoked key back until the next).
	e.reloadMu.Lock()
	defer e.reloadMu.Unlock()
	accts, err := e.store.Accounts(ctx)
	if err != nil {
		return fmt.Errorf("loading accounts: %w", err)
	}
	keys, err := e.store.Keys(ctx, "")
	if err != nil {
		return fmt.Errorf("loading keys: %w", err)
	}
	status := make(map[string]Status, len(accts))
	for _, a := range accts {
		status[a.ID] = a.Status
	}
	m := make(map[[32]byte]keyEntry, len(keys))
	sus := map[[32]byte]struct{}{}
	for _, k := range keys {
		if !k.Revoked.IsZero() {
			continue
		}
		if status[k.AccountID] != StatusActive {
			if status[k.AccountID] == StatusSuspended {
				sus[k.Hash] = struct{}{}
			}
			continue
		}
		m[k.Hash] = keyEntry{rec: k, acct: e.account(k.AccountID), use: e.keyUse(k)}
	}
	e.keys.Store(&m)
	e.suspended.Store(&sus)
	return nil
}

// keyUse returns k's use, kept across reloads.
func (e *Engine) keyUse(k KeyRecord) *keyUse {
	e.usesMu.Lock()
	defer e.usesMu.Unlock()
	u := e.uses[k.Hash]
	if u == nil {
		u = &keyUse{id: k.ID}
		e.uses[k.Hash] = u
	}
	return u
}

// flushUses reports to the store the keys used since their last report.
func (e *Engine) flushUses(ctx context.Context) error {
	used := map[string]time.Time{}
	var sent []*keyUse
	e.usesMu.Lock()
	for _, u := range e.uses {
		if at := u.at.Load(); at > u.sent.Load() {
			used[u.id] = time.Unix(at, 0).UTC()
			sent = append(sent, u)
		}
	}
	e.usesMu.Unlock()
	if len(used) == 0 {
		return nil
	}
	if err := e.store.KeysUsed(ctx, used); err != nil {
		return err
	}
	for _, u := range sent {
		u.sent.Store(used[u.id].Unix())
	}
	return nil
}

func (e *Engine) account(id string) *acctState {
	e.mu.Lock()
	defer e.mu.Unlock()
	a := e.accounts[id]
	if a == nil {
		a = &acctState{id: id, gen: 1, status: StatusActive, freeLeft: FreeTier, pend: map[usageKey]*UsageRow{}, syncing: make(chan struct{}, 1)}
		e.accounts[id] = a
	}
	return a
}

// Authenticate returns the key whose hash is the SHA-256 of token, if it is
// valid and its account active. The lookup is by hash: what its timing
// could reveal is about SHA-256 digests, from which no key can be made.
func (e *Engine) Authenticate(token string) (KeyRecord, bool) {
	var buf [64]byte
	k, ok := (*e.keys.Load())[sha256.Sum256(append(buf[:0], token...))]
	return k.rec, ok
}

// Suspended reports whether token is a valid (not revoked) key of a
// suspended account: one Authenticate refuses for its account, not for
// itself.
func (e *Engine) Suspended(token string) bool {
	m := e.suspended.Load()
	if m == nil {
		return false
	}
	var buf [64]byte
	_, ok := (*m)[sha256.Sum256(append(buf[:0], token...))]
	return ok
}

// Lookup returns the key with hash h, if it is valid and its account
// active.
func (e *Engine) Lookup(h [32]byte) (KeyRecord, bool) {
	k, ok := (*e.keys.Load())[h]
	return k.rec, ok
}

// Charge pays for one lookup of kind, plus the messaging add-on when
// addon, from the account of the key with hash h, and holds the payment
// until the answer is written: the caller settles the returned Hold once,
// with whether the answer was delivered, and only a delivered answer is
// charged. Charge returns an *InsufficientBalanceError when the lookup
// cannot be paid, and an error wrapping ErrStoreUnavailable when the lease
// is spent and the store does not renew it within StoreTimeout. A store
// round trip happens only when the lease runs out.
func (e *Engine) Charge(ctx context.Context, h [32]byte, kind Kind, addon bool) (*Hold, error) {
	k, ok := (*e.keys.Load())[h]
	if !ok {
		return nil, ErrUnknownKey
	}
	select {
	case <-e.stop:
		return nil, ErrClosed
	default:
	}
	ki := kind.index()
	if ki < 0 || (addon && !kind.Free()) {
		return nil, fmt.Errorf("billing: %q is not a billable lookup", kind)
	}
	a := k.acct
	var deadline time.Time // of the syncs this lookup waits for
	var recallUntil time.Time
	// A lookup waits for at most one sync for credit, and a few for a free
	// lookup (another process's background sync can return the one this
	// sync leased before this lookup takes it).
	for syncs, skipped, tries := 0, 0, 0; ; tries++ {
		now := e.now()
		if tries == 0 {
			k.use.mark(now)
		}
		a.mu.Lock()
		hold, sync, low, gen := a.spend(now, kind, ki, addon, e.leaseCredit, syncs)
		var short *InsufficientBalanceError
		if hold == nil && (!sync || tries >= maxTries) {
			price := a.prices[ki]
			if addon {
				price, _ = addMicros(price, a.prices[KindMessagingAddon.index()])
			}
			short = &InsufficientBalanceError{Price: price, Balance: a.credit + a.balance + a.others, Leased: a.others}
			a.short = price
			if a.others > 0 && a.status == StatusActive {
				// Other processes hold part of the wallet: ask it back
				// and wait, a while, for it to come.
				a.recall = true
				if recallUntil.IsZero() {
					recallUntil = now.Add(e.recallWait())
				}
				if now.Before(recallUntil) {
					short = nil
				}
			}
		}
		a.mu.Unlock()
		switch {
		case hold != nil:
			hold.e = e
			if low {
				e.wake()
			}
			return hold, nil
		case short != nil:
			// What this lease holds cannot pay: give it back at once, so
			// that a process holding the rest of the wallet can.
			e.wake()
			return nil, short
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(e.storeTimeout)
		}
		if !recallUntil.IsZero() {
			// Waiting on a recall: the other processes hand their leases
			// back at their next syncs. Look again every so often.
			t := time.NewTimer(e.every / 10)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			case <-t.C:
			}
			// A sync another lookup ran meanwhile serves this one too.
		}
		synced, err := e.syncBy(ctx, deadline, a, gen)
		switch {
		case err != nil:
			return nil, err
		case synced || skipped >= 3:
			syncs++
		default:
			// Another sync ran meanwhile: look again as if none had.
			skipped++
		}
	}
}

// recallWait is how long a lookup the wallet cannot pay waits while other
// processes hand back the leases it recalled: their syncs come about every
// SyncEvery.
func (e *Engine) recallWait() time.Duration {
	return min(e.storeTimeout, e.every+e.every/2)
}

// syncBy syncs a for a lookup, giving up at deadline.
func (e *Engine) syncBy(ctx context.Context, deadline time.Time, a *acctState, gen uint64) (bool, error) {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	synced, err := e.syncAccounts(ctx, []*acctState{a}, gen)
	if err != nil && ctx.Err() != nil {
		e.storeTimeouts.Add(1)
	}
	return synced, err
}

// Hold is a lookup's payment, taken from a lease and held until the
// lookup's answer is written. Settle it exactly once.
type Hold struct {
	e                 *Engine
	a                 *acctState
	epoch             uint64
	kind              Kind
	addon, free       bool
	price, addonPrice Micros
	day               string
}

var holds = sync.Pool{New: func() any { return new(Hold) }}

// Settle charges the held lookup when its answer was delivered, and gives
// the payment back to the lease when it was not. A hold of a lease that
// ended meanwhile (returned on shutdown, or lost to expiry) charges
// nothing: a delivered lookup is then counted as unbilled.
func (h *Hold) Settle(delivered bool) {
	e, a := h.e, h.a
	total := h.price + h.addonPrice
	a.mu.Lock()
	switch {
	case h.epoch != a.epoch:
		if delivered {
			e.unbilled.Add(1)
		}
	case delivered:
		a.reserved -= total
		a.pendC += total
		u := a.row(h.day, h.kind)
		u.Lookups++
		u.Amount += h.price
		if h.free {
			a.reservedF--
			a.pendF++
			u.Free++
		}
		if h.addon {
			u := a.row(h.day, KindMessagingAddon)
			u.Lookups++
			u.Amount += h.addonPrice
		}
	default:
		a.reserved -= total
		a.credit += total
		if h.free {
			a.reservedF--
			a.free++
		}
	}
	a.mu.Unlock()
	switch {
	case !delivered:
		e.undelivered.Add(1)
	case h.epoch == a.epoch:
		e.lookup.Add(1)
	}
	*h = Hold{}
	holds.Put(h)
}

// spend pays for a lookup from the lease if it can. Otherwise it says
// whether a sync could help (given how many the lookup waited for already)
// or the wallet is short.
func (a *acctState) spend(now time.Time, kind Kind, ki int, addon bool, leaseCredit Micros, syncs int) (hold *Hold, sync, low bool, gen uint64) {
	gen = a.gen
	first := syncs == 0
	if a.status != StatusActive {
		return nil, false, false, gen
	}
	if a.lease == 0 || !now.Before(a.deadline) {
		// No lease, or one about to expire: it must not be spent.
		a.freeDemand = a.freeDemand || kind.Free()
		return nil, true, false, gen
	}
	day, month := a.today(now)
	useFree := false
	if kind.Free() {
		switch {
		case a.month == month && a.free > 0:
			useFree = true
		case syncs < 3 && (a.month != month || a.freeLeft > 0):
			// The month's free lookups are in the store (or a new month
			// began): lease one before charging the wallet.
			a.freeDemand = true
			return nil, true, false, gen
		}
	}
	price := a.prices[ki]
	if useFree {
		price = 0
	}
	addonPrice := Micros(0)
	if addon {
		addonPrice = a.prices[KindMessagingAddon.index()]
	}
	total, ok := addMicros(price, addonPrice)
	if !ok || price < 0 || addonPrice < 0 {
		// A price no store accepts today (MaxPrice) but an older one
		// kept: refuse rather than wrap.
		return nil, false, false, gen
	}
	if total > a.credit {
		// A sync helps if none ran since this lookup first looked, or if
		// the store still has credit (other lookups took the renewal).
		return nil, first || a.balance > 0, false, gen
	}
	a.credit -= total
	a.reserved += total
	a.spent += total
	if useFree {
		a.free--
		a.reservedF++
	}
	a.lastUsed = now
	hold = holds.Get().(*Hold)
	*hold = Hold{a: a, epoch: a.epoch, kind: kind, addon: addon, free: useFree, price: price, addonPrice: addonPrice, day: day}
	// Renew early, in the background, if the store has credit to add.
	return hold, false, a.credit < a.want/4 && a.balance > 0, gen
}

// today returns now's day and month (UTC), formatted once a day: the
// charge path does not allocate.
func (a *acctState) today(now time.Time) (day, month string) {
	if now.Before(a.dayStart) || !now.Before(a.dayEnd) {
		u := now.UTC()
		a.dayStart = time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC)
		a.dayEnd = a.dayStart.AddDate(0, 0, 1)
		a.day = Day(u)
	}
	return a.day, a.day[:7]
}

func (a *acctState) row(day string, kind Kind) *UsageRow {
	k := usageKey{day, kind}
	u := a.pend[k]
	if u == nil {
		u = &UsageRow{AccountID: a.id, Day: day, Kind: kind}
		a.pend[k] = u
	}
	return u
}

func (e *Engine) wake() {
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// syncAccounts settles and renews the leases of accts in one store
// transaction. With gen != 0 (one account, from Charge) it does nothing,
// and says so, if a sync happened since the caller looked.
func (e *Engine) syncAccounts(ctx context.Context, accts []*acctState, gen uint64) (synced bool, err error) {
	sort.Slice(accts, func(i, j int) bool { return accts[i].id < accts[j].id })
	for i, a := range accts {
		select {
		case a.syncing <- struct{}{}:
		case <-ctx.Done():
			for _, b := range accts[:i] {
				<-b.syncing
			}
			return false, fmt.Errorf("%w: waiting for a sync under way: %w", ErrStoreUnavailable, ctx.Err())
		}
	}
	defer func() {
		for _, a := range accts {
			<-a.syncing
		}
	}()
	if len(accts) == 1 && gen != 0 {
		a := accts[0]
		a.mu.Lock()
		same := a.gen == gen
		a.mu.Unlock()
		if !same {
			return false, nil
		}
	}
	closing := false
	select {
	case <-e.stop:
		closing = true
	default:
	}
	now := e.now()
	reqs := make([]LeaseSync, len(accts))
	for i, a := range accts {
		a.mu.Lock()
		reqs[i] = a.request(now, e, closing)
		a.mu.Unlock()
	}
	e.syncs.Add(1)
	states, err := e.store.Sync(ctx, now, e.ttl, reqs)
	if err != nil {
		e.syncErrs.Add(1)
		return false, fmt.Errorf("%w: syncing leases: %w", ErrStoreUnavailable, err)
	}
	var retry []*acctState
	for i, a := range accts {
		a.mu.Lock()
		lost := a.apply(&reqs[i], &states[i], now, e)
		a.mu.Unlock()
		if lost {
			retry = append(retry, a)
		}
	}
	if len(retry) > 0 && !closing {
		// A lease was lost: take a new one now, once.
		now = e.now()
		reqs = reqs[:0]
		for _, a := range retry {
			a.mu.Lock()
			reqs = append(reqs, a.request(now, e, false))
			a.mu.Unlock()
		}
		if states, err = e.store.Sync(ctx, now, e.ttl, reqs); err != nil {
			e.syncErrs.Add(1)
			return true, fmt.Errorf("%w: syncing leases: %w", ErrStoreUnavailable, err)
		}
		for i, a := range retry {
			a.mu.Lock()
			a.apply(&reqs[i], &states[i], now, e)
			a.mu.Unlock()
		}
	}
	return true, nil
}

// request builds the account's next sync: the one in flight again if its
// outcome is unknown, else what was spent since.
func (a *acctState) request(now time.Time, e *Engine, closing bool) LeaseSync {
	if a.inflight != nil {
		// As it was, even when closing: the store may have applied it
		// (its sequence number says so), so what was spent since cannot
		// join it, nor can the release, which would return that spending's
		// credit uncharged. Both go in the sync after (Close syncs until
		// nothing is left).
		return *a.inflight
	}
	// A free lookup is leased only while free-tier lookups are asked for,
	// so that no process sits on one while another charges the wallet.
	a.want = a.wantCredit(now, e.leaseCredit)
	// The lease keeps what answers being written hold, besides what it
	// wants to spend.
	r := LeaseSync{Account: a.id, Lease: a.lease, Holder: e.holder, WantCredit: a.want + a.reserved}
	if (a.short > 0 && a.credit < a.short) || a.recalled {
		// A lookup was refused (the wallet may be split between leases
		// of several processes, none able to pay), or another process
		// recalled this lease: hand back what is not spoken for.
		r.WantCredit = a.reserved
	}
	r.Recall, a.recall = a.recall, false
	if r.Recall {
		e.recallsAsked.Add(1)
	}
	a.short, a.recalled = 0, false
	switch {
	case a.freeDemand:
		r.WantFree, a.freeDemand, a.freeKeep = 1, false, true
	case a.freeKeep:
		// Keep a free lookup leased for a lookup waiting on it for one
		// more sync, not longer.
		r.WantFree, a.freeKeep = min(a.free, 1), false
	}
	// A lease not spent from for a second goes back: an idle process does
	// not sit on a wallet another one may need.
	idle := a.lastUsed.IsZero() || now.Sub(a.lastUsed) > max(e.every, idleAfter)
	if closing || (idle && a.lease != 0 && a.pendC == 0 && a.pendF == 0 && a.reserved == 0 && a.reservedF == 0) {
		r.Release = true
	}
	// What the sync gives back is given up here, before the store takes
	// it: nothing may spend it while the sync is under way, nor while its
	// outcome is in doubt. The store leaves the lease what the sync wants
	// whenever it applies it — at once, or sent again after the store was
	// away, the lease expired and revived meanwhile —, so what is spent
	// until its answer must fit in that, or the next sync would report
	// more than the lease holds, and be refused.
	if r.Release {
		a.credit, a.free, a.deadline = 0, 0, time.Time{}
		a.endLease()
	} else {
		a.credit = min(a.credit, r.WantCredit-a.reserved)
		a.free = min(a.free, r.WantFree)
		r.WantFree += a.reservedF
	}
	if a.lease != 0 {
		a.seq++
		r.Seq = a.seq
	}
	r.SpentCredit, r.SpentFree = a.pendC, a.pendF
	for _, u := range a.pend {
		r.Usage = append(r.Usage, *u)
	}
	clear(a.pend)
	a.pendC, a.pendF = 0, 0
	a.inflight = &r
	return r
}

// idleAfter is how long a lease may go unspent before it is returned (or
// SyncEvery, if longer).
const idleAfter = time.Second

// leaseSeconds is how many seconds of an account's spending a full lease
// holds: enough that renewals (about once a second) run ahead of it.
const leaseSeconds = 3

// wantCredit sizes the lease: leaseSeconds of the account's recent
// spending, at least min.
func (a *acctState) wantCredit(now time.Time, minimum Micros) Micros {
	if d := now.Sub(a.rateAt); d >= 100*time.Millisecond || a.rateAt.IsZero() {
		if !a.rateAt.IsZero() {
			inst := float64(a.spent) / d.Seconds()
			a.rate = (a.rate + inst) / 2
		}
		a.spent, a.rateAt = 0, now
	}
	return max(minimum, Micros(a.rate*leaseSeconds))
}

// endLease forgets the holds of the lease that ends: settling them changes
// nothing of the next one.
func (a *acctState) endLease() {
	a.epoch++
	a.reserved, a.reservedF = 0, 0
}

// apply takes a sync's outcome; it reports whether the lease was lost.
func (a *acctState) apply(req *LeaseSync, st *LeaseState, now time.Time, e *Engine) (lost bool) {
	a.inflight = nil
	a.gen++
	switch {
	case st.Err != nil:
		// The lease is gone (expired and returned) or refused: what was
		// spent of it cannot be charged any more.
		var n int64
		rows := append([]UsageRow(nil), req.Usage...)
		for _, u := range a.pend {
			rows = append(rows, *u)
		}
		for _, u := range rows {
			if u.Kind != KindMessagingAddon {
				n += u.Lookups
			}
		}
		e.unbilled.Add(n)
		e.log.Warn("a lease could not be synced: its lookups go unbilled", "account", a.id, "lease", req.Lease,
			"lookups", n, "amount", (req.SpentCredit + a.pendC).String(), "error", st.Err)
		clear(a.pend)
		a.pendC, a.pendF = 0, 0
		a.lease, a.seq, a.credit, a.free = 0, 0, 0, 0
		a.endLease()
		if errors.Is(st.Err, ErrNotFound) {
			a.status = StatusSuspended
		}
		return errors.Is(st.Err, ErrLeaseLost)
	}
	a.status = st.Status
	a.balance, a.freeLeft, a.others = st.Balance, st.FreeLeft, st.Leased
	if st.Recalled && st.Lease != 0 {
		a.recalled = true
		e.recallsAnswered.Add(1)
		e.wake()
	}
	for k, p := range st.Prices {
		if i := k.index(); i >= 0 {
			a.prices[i] = p
		}
	}
	if st.Lease != a.lease && a.lease != 0 {
		a.endLease()
	}
	a.lease = st.Lease
	if a.lease == 0 {
		a.seq = 0
		a.endLease()
	}
	// What was spent during the sync, and what answers being written
	// hold, is not in the store's answer.
	a.credit, a.free, a.month = st.Credit-a.pendC-a.reserved, st.Free-a.pendF-a.reservedF, st.Month
	a.deadline = now.Add(e.ttl - e.margin)
	return false
}

func (e *Engine) loop() {
	defer close(e.done)
	tick := time.NewTicker(e.every)
	defer tick.Stop()
	var lastKeys, lastExpire, lastUses time.Time
	for {
		select {
		case <-e.stop:
			return
		case <-tick.C:
		case <-e.kick:
		}
		ctx, cancel := context.WithTimeout(context.Background(), e.ttl/4)
		if err := e.Flush(ctx); err != nil {
			e.log.Error("flushing usage", "error", err)
		}
		now := e.now()
		if now.Sub(lastExpire) >= e.ttl/2 {
			lastExpire = now
			if n, err := e.store.ExpireLeases(ctx, now); err != nil {
				e.log.Error("returning expired leases", "error", err)
			} else if n > 0 {
				e.log.Info("returned expired leases", "leases", n)
			}
		}
		if now.Sub(lastUses) >= usesEvery {
			lastUses = now
			if err := e.flushUses(ctx); err != nil {
				e.log.Error("recording when keys were last used", "error", err)
			}
		}
		if now.Sub(lastKeys) >= e.keysEvery {
			lastKeys = now
			if err := e.ReloadKeys(ctx); err != nil {
				e.log.Error("reloading keys", "error", err)
			}
		}
		cancel()
	}
}

// Flush syncs every account this process holds a lease of or has spent
// on, in one transaction.
func (e *Engine) Flush(ctx context.Context) error {
	_, err := e.flush(ctx)
	return err
}

// flush is Flush; it reports whether there was anything to sync.
func (e *Engine) flush(ctx context.Context) (bool, error) {
	e.mu.Lock()
	var busy []*acctState
	for _, a := range e.accounts {
		a.mu.Lock()
		if a.lease != 0 || a.pendC != 0 || a.pendF != 0 || a.inflight != nil {
			busy = append(busy, a)
		}
		a.mu.Unlock()
	}
	e.mu.Unlock()
	if len(busy) == 0 {
		return false, nil
	}
	_, err := e.syncAccounts(ctx, busy, 0)
	return true, err
}

// closeSyncs bounds Close's syncs: a sync in doubt sent again, then the
// release with what was spent since; a third finds nothing left.
const closeSyncs = 3

// Close stops the engine, flushes what was spent and returns what its
// leases hold. Charges after Close fail.
func (e *Engine) Close(ctx context.Context) error {
	var err error
	e.closeOnce.Do(func() {
		close(e.stop)
		<-e.done
		if e.unwatch != nil {
			e.unwatch()
		}
		e.watching.Wait()
		for range closeSyncs {
			if busy, ferr := e.flush(ctx); ferr != nil || !busy {
				err = ferr
				break
			}
		}
		if uerr := e.flushUses(ctx); err == nil {
			err = uerr
		}
	})
	return err
}

// Stats are the engine's counters.
type Stats struct {
	Lookups    int64 // lookups paid (free or from the wallet)
	Syncs      int64 // store transactions syncing leases
	SyncErrors int64
	Unbilled   int64 // lookups answered on leases lost to expiry
}

// Stats returns the engine's counters.
func (e *Engine) Stats() Stats {
	return Stats{Lookups: e.lookup.Load(), Syncs: e.syncs.Load(), SyncErrors: e.syncErrs.Load(), Unbilled: e.unbilled.Load()}
}

// UsageReport is an account's usage as GET /api/v1/usage answers it.
type UsageReport struct {
	AccountID string `json:"account_id"`
	// Balance is the wallet's credit: the store's balance and leases,
	// less what this process spent since its last sync (other processes'
	// unsynced lookups show within a second).
	Balance       Micros        `json:"balance_micros"`
	BalanceUSD    string        `json:"balance"`
	FreeTier      int64         `json:"free_tier"`
	FreeLeft      int64         `json:"free_left_this_month"`
	CurrentMonth  MonthUsage    `json:"current_month"`
	PreviousMonth MonthUsage    `json:"previous_month"`
	Prices        []PriceReport `json:"prices"`
}

// MonthUsage is a month's lookups and charges per kind.
type MonthUsage struct {
	Month     string      `json:"month"`
	Kinds     []KindUsage `json:"kinds"`
	Amount    Micros      `json:"amount_micros"`
	AmountUSD string      `json:"amount"`
}

// KindUsage is a month's lookups and charges of one kind.
type KindUsage struct {
	Kind      Kind   `json:"kind"`
	Lookups   int64  `json:"lookups"`
	Free      int64  `json:"free"`
	Amount    Micros `json:"amount_micros"`
	AmountUSD string `json:"amount"`
}

// PriceReport is one line of a price list.
type PriceReport struct {
	Kind     Kind   `json:"kind"`
	Price    Micros `json:"price_micros"`
	PriceUSD string `json:"price"`
}

// PriceList returns p in the order of Kinds.
func PriceList(p Prices) []PriceReport {
	out := make([]PriceReport, 0, len(Kinds))
	for _, k := range Kinds {
		out = append(out, PriceReport{k, p[k], p[k].String()})
	}
	return out
}

// Usage reports the usage of the account of the key with hash h.
func (e *Engine) Usage(ctx context.Context, h [32]byte) (UsageReport, error) {
	k, ok := e.Lookup(h)
	if !ok {
		return UsageReport{}, ErrUnknownKey
	}
	return e.AccountUsage(ctx, k.AccountID)
}

// AccountUsage reports an account's usage.
func (e *Engine) AccountUsage(ctx context.Context, id string) (UsageReport, error) {
	ctx, cancel := context.WithTimeout(ctx, e.storeTimeout)
	defer cancel()
	r, err := usageReport(ctx, e.store, id, e.now(), e.account(id))
	if err != nil && !errors.Is(err, ErrNotFound) {
		if ctx.Err() != nil {
			e.storeTimeouts.Add(1)
		}
		return r, fmt.Errorf("%w: %w", ErrStoreUnavailable, err)
	}
	return r, err
}

// usageReport builds the report from the store, and from a (this process's
// unsynced spending) when not nil.
func usageReport(ctx context.Context, s Store, id string, now time.Time, a *acctState) (UsageReport, error) {
	acc, err := s.Account(ctx, id)
	if err != nil {
		return UsageReport{}, err
	}
	prices, err := s.Prices(ctx, id)
	if err != nil {
		return UsageReport{}, err
	}
	r := UsageReport{AccountID: id, Balance: acc.Balance + acc.Leased, FreeTier: FreeTier, Prices: PriceList(prices)}
	var pend []UsageRow
	if a != nil {
		a.mu.Lock()
		r.Balance -= a.pendC
		for _, u := range a.pend {
			pend = append(pend, *u)
		}
		if a.inflight != nil {
			r.Balance -= a.inflight.SpentCredit
			pend = append(pend, a.inflight.Usage...)
		}
		a.mu.Unlock()
	}
	cur := Month(now)
	prev := Month(time.Date(now.UTC().Year(), now.UTC().Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, -1, 0))
	for i, m := range []string{cur, prev} {
		rows, err := s.Usage(ctx, id, m)
		if err != nil {
			return UsageReport{}, err
		}
		for _, u := range pend {
			if Month(mustDay(u.Day)) == m {
				rows = append(rows, u)
			}
		}
		mu := MonthUsage{Month: m}
		by := map[Kind]*KindUsage{}
		for _, u := range rows {
			ku := by[u.Kind]
			if ku == nil {
				ku = &KindUsage{Kind: u.Kind}
				by[u.Kind] = ku
			}
			ku.Lookups += u.Lookups
			ku.Free += u.Free
			ku.Amount += u.Amount
			mu.Amount += u.Amount
			if i == 0 {
				r.FreeLeft -= u.Free
			}
		}
		for _, k := range Kinds {
			if ku := by[k]; ku != nil {
				ku.AmountUSD = ku.Amount.String()
				mu.Kinds = append(mu.Kinds, *ku)
			}
		}
		mu.AmountUSD = mu.Amount.String()
		if mu.Kinds == nil {
			mu.Kinds = []KindUsage{}
		}
		if i == 0 {
			r.CurrentMonth = mu
		} else {
			r.PreviousMonth = mu
		}
	}
	r.FreeLeft = max(r.FreeLeft+FreeTier, 0)
	r.BalanceUSD = r.Balance.String()
	return r, nil
}

func mustDay(s string) time.Time {
	t, _ := time.Parse("2006-01-02", s)
	return t
}
