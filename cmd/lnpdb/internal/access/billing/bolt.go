package billing

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// BoltStore is the embedded Store: one bbolt file, created on first use.
// bbolt locks its file, so one process at a time serves from it; several
// processes billing one set of wallets share a [PostgresStore].
type BoltStore struct {
	db *bolt.DB
}

var (
	bAccounts = []byte("accounts") // id → boltAccount
	bKeys     = []byte("keys")     // key id → boltKey
	bKeyHash  = []byte("keyhash")  // sha-256 → key id
	bCredits  = []byte("credits")  // account \0 ref → Credit
	bPrices   = []byte("prices")   // account ("" = default) \0 kind → micros
	bFree     = []byte("free")     // account \0 month → free lookups taken by leases
	bLeases   = []byte("leases")   // big-endian id → leaseRow
	bUsage    = []byte("usage")    // account \0 day \0 kind → UsageRow
	bAudit    = []byte("audit")    // big-endian sequence → AuditEntry
)

type boltAccount struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	Status   Status    `json:"status"`
	Created  time.Time `json:"created"`
	Balance  Micros    `json:"balance"`
	Credited Micros    `json:"credited"`
}

type boltKey struct {
	KeyRecord
	HashHex string `json:"hash"`
}

// OpenBolt opens the bbolt store at path, creating it (and its directory)
// on first use.
func OpenBolt(path string) (*BoltStore, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("accounts store %s: %w", path, err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("accounts store %s is in use by another process (to share accounts between processes, use PostgreSQL)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("accounts store %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range append([][]byte{bAccounts, bKeys, bKeyHash, bCredits, bPrices, bFree, bLeases, bUsage, bAudit}, jobBuckets...) {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("accounts store %s: %w", path, err)
	}
	return &BoltStore{db: db}, nil
}

// Close implements [Store].
func (s *BoltStore) Close() error { return s.db.Close() }

func key(parts ...string) []byte { return []byte(strings.Join(parts, "\x00")) }

func get[T any](b *bolt.Bucket, k []byte, v *T) (bool, error) {
	raw := b.Get(k)
	if raw == nil {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, fmt.Errorf("accounts store: record %q: %w", k, err)
	}
	return true, nil
}

func put(b *bolt.Bucket, k []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(k, raw)
}

func (s *BoltStore) account(tx *bolt.Tx, id string) (*boltAccount, error) {
	var a boltAccount
	ok, err := get(tx.Bucket(bAccounts), []byte(id), &a)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("account %q: %w", id, ErrNotFound)
	}
	return &a, nil
}

func (s *BoltStore) view(tx *bolt.Tx, a *boltAccount) (Account, error) {
	out := Account{ID: a.ID, Name: a.Name, Status: a.Status, Created: a.Created, Balance: a.Balance, Credited: a.Credited}
	err := tx.Bucket(bLeases).ForEach(func(_, v []byte) error {
		var l leaseRow
		if err := json.Unmarshal(v, &l); err != nil {
			return err
		}
		if l.Account == a.ID {
			out.Leased += l.Credit
		}
		return nil
	})
	return out, err
}

// CreateAccount implements [Store].
func (s *BoltStore) CreateAccount(ctx context.Context, name string, now time.Time) (Account, error) {
	if err := checkName(name); err != nil {
		return Account{}, err
	}
	a := boltAccount{ID: newID("acct_"), Name: name, Status: StatusActive, Created: now.UTC()}
	err := s.db.Update(func(tx *bolt.Tx) error {
		if err := put(tx.Bucket(bAccounts), []byte(a.ID), &a); err != nil {
			return err
		}
		return s.audit(ctx, tx, AuditCreate, a.ID, "name %q", name)
	})
	return Account{ID: a.ID, Name: a.Name, Status: a.Status, Created: a.Created}, err
}

// Account implements [Store].
func (s *BoltStore) Account(_ context.Context, id string) (out Account, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		a, err := s.account(tx, id)
		if err != nil {
			return err
		}
		out, err = s.view(tx, a)
		return err
	})
	return out, err
}

// Accounts implements [Store].
func (s *BoltStore) Accounts(_ context.Context) (out []Account, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bAccounts).ForEach(func(_, v []byte) error {
			var a boltAccount
			if err := json.Unmarshal(v, &a); err != nil {
				return err
			}
			acc, err := s.view(tx, &a)
			out = append(out, acc)
			return err
		})
	})
	sort.Slice(out, func(i, j int) bool {
		return out[i].Created.Before(out[j].Created) || out[i].Created.Equal(out[j].Created) && out[i].ID < out[j].ID
	})
	return out, err
}

// SetStatus implements [Store].
func (s *BoltStore) SetStatus(ctx context.Context, id string, st Status) (out Account, err error) {
	if st != StatusActive && st != StatusSuspended {
		return Account{}, fmt.Errorf("%w: status %q", ErrInvalid, st)
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		a, err := s.account(tx, id)
		if err != nil {
			return err
		}
		a.Status = st
		if err := put(tx.Bucket(bAccounts), []byte(id), a); err != nil {
			return err
		}
		if err := s.audit(ctx, tx, statusAction(st), id, "%s", st); err != nil {
			return err
		}
		out, err = s.view(tx, a)
		return err
	})
	return out, err
}

// AddKey implements [Store].
func (s *BoltStore) AddKey(ctx context.Context, k KeyRecord, now time.Time) (KeyRecord, error) {
	return s.AddKeyCapped(ctx, k, now, 0)
}

// AddKeyCapped implements [Store]: bbolt runs one writing transaction at
// a time, so the count and the addition are not interleaved with
// another's.
func (s *BoltStore) AddKeyCapped(ctx context.Context, k KeyRecord, now time.Time, maxValid int) (KeyRecord, error) {
	if err := checkKey(&k); err != nil {
		return KeyRecord{}, err
	}
	k.ID, k.Created, k.Revoked = newID("key_"), now.UTC(), time.Time{}
	err := s.db.Update(func(tx *bolt.Tx) error {
		if _, err := s.account(tx, k.AccountID); err != nil {
			return err
		}
		if maxValid > 0 {
			valid := 0
			if err := tx.Bucket(bKeys).ForEach(func(_, v []byte) error {
				o, err := decodeKey(v)
				if err == nil && o.AccountID == k.AccountID && o.Revoked.IsZero() {
					valid++
				}
				return err
			}); err != nil {
				return err
			}
			if valid >= maxValid {
				return fmt.Errorf("account %s has %d valid keys: %w", k.AccountID, valid, ErrKeyCap)
			}
		}
		hb := tx.Bucket(bKeyHash)
		if hb.Get(k.Hash[:]) != nil {
			return fmt.Errorf("%w: a key with this hash exists", ErrConflict)
		}
		if err := hb.Put(k.Hash[:], []byte(k.ID)); err != nil {
			return err
		}
		if err := s.audit(ctx, tx, AuditNewKey, k.AccountID, "%s label %q rate limit %d", k.ID, k.Label, k.Limit); err != nil {
			return err
		}
		return put(tx.Bucket(bKeys), []byte(k.ID), boltKey{k, hex.EncodeToString(k.Hash[:])})
	})
	return k, err
}

func decodeKey(v []byte) (KeyRecord, error) {
	var bk boltKey
	if err := json.Unmarshal(v, &bk); err != nil {
		return KeyRecord{}, err
	}
	h, err := hex.DecodeString(bk.HashHex)
	if err != nil || len(h) != 32 {
		return KeyRecord{}, fmt.Errorf("accounts store: key %s: bad hash", bk.ID)
	}
	copy(bk.Hash[:], h)
	return bk.KeyRecord, nil
}

// Keys implements [Store].
func (s *BoltStore) Keys(_ context.Context, accountID string) (out []KeyRecord, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		if accountID != "" {
			if _, err := s.account(tx, accountID); err != nil {
				return err
			}
		}
		return tx.Bucket(bKeys).ForEach(func(_, v []byte) error {
			k, err := decodeKey(v)
			if err == nil && (accountID == "" || k.AccountID == accountID) {
				out = append(out, k)
			}
			return err
		})
	})
	sortKeys(out)
	return out, err
}

// RevokeKey implements [Store].
func (s *BoltStore) RevokeKey(ctx context.Context, accountID, keyID string, now time.Time) (out KeyRecord, err error) {
	err = s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bKeys)
		v := b.Get([]byte(keyID))
		if v == nil {
			return fmt.Errorf("key %q: %w", keyID, ErrNotFound)
		}
		k, err := decodeKey(v)
		if err != nil {
			return err
		}
		if k.AccountID != accountID {
			return fmt.Errorf("key %q of account %q: %w", keyID, accountID, ErrNotFound)
		}
		if k.Revoked.IsZero() {
			k.Revoked = now.UTC()
		}
		out = k
		if err := s.audit(ctx, tx, AuditRevoke, accountID, "%s", k.ID); err != nil {
			return err
		}
		return put(b, []byte(k.ID), boltKey{k, hex.EncodeToString(k.Hash[:])})
	})
	return out, err
}

// KeysUsed implements [Store].
func (s *BoltStore) KeysUsed(_ context.Context, used map[string]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bKeys)
		for id, at := range used {
			v := b.Get([]byte(id))
			if v == nil {
				continue
			}
			k, err := decodeKey(v)
			if err != nil {
				return err
			}
			if at = at.UTC().Truncate(time.Second); !at.After(k.LastUsed) {
				continue
			}
			k.LastUsed = at
			if err := put(b, []byte(k.ID), boltKey{k, hex.EncodeToString(k.Hash[:])}); err != nil {
				return err
			}
		}
		return nil
	})
}

// Credit implements [Store].
func (s *BoltStore) Credit(ctx context.Context, accountID string, amount Micros, ref string, now time.Time) (c Credit, applied bool, err error) {
	if err := checkCredit(amount, ref); err != nil {
		return Credit{}, false, err
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		a, err := s.account(tx, accountID)
		if err != nil {
			return err
		}
		cb := tx.Bucket(bCredits)
		ok, err := get(cb, key(accountID, ref), &c)
		if err != nil {
			return err
		}
		if ok {
			if c.Amount != amount {
				return fmt.Errorf("%w: credit %q of account %s was %s, not %s", ErrConflict, ref, accountID, c.Amount, amount)
			}
			return s.audit(ctx, tx, AuditCredit, accountID, "%s", creditDetail(c, false))
		}
		c = Credit{AccountID: accountID, Ref: ref, Amount: amount, Created: now.UTC()}
		if err := checkCredited(accountID, a.Credited, amount); err != nil {
			return err
		}
		a.Balance += amount
		a.Credited += amount
		applied = true
		if err := put(cb, key(accountID, ref), &c); err != nil {
			return err
		}
		if err := s.audit(ctx, tx, AuditCredit, accountID, "%s", creditDetail(c, true)); err != nil {
			return err
		}
		return put(tx.Bucket(bAccounts), []byte(a.ID), a)
	})
	if err != nil {
		return Credit{}, false, err
	}
	return c, applied, nil
}

// Credits implements [Store].
func (s *BoltStore) Credits(_ context.Context, accountID string) (out []Credit, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		if _, err := s.account(tx, accountID); err != nil {
			return err
		}
		c := tx.Bucket(bCredits).Cursor()
		pre := key(accountID, "")
		for k, v := c.Seek(pre); k != nil && bytes.HasPrefix(k, pre); k, v = c.Next() {
			var cr Credit
			if err := json.Unmarshal(v, &cr); err != nil {
				return err
			}
			out = append(out, cr)
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out, err
}

// SetPrice implements [Store].
func (s *BoltStore) SetPrice(ctx context.Context, accountID string, kind Kind, price Micros) error {
	if err := checkPrice(kind, price); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		if accountID != "" {
			if _, err := s.account(tx, accountID); err != nil {
				return err
			}
		}
		if err := s.audit(ctx, tx, AuditPrice, accountID, "%s $%s", kind, price); err != nil {
			return err
		}
		return tx.Bucket(bPrices).Put(key(accountID, string(kind)), []byte(strconv.FormatInt(int64(price), 10)))
	})
}

func (s *BoltStore) prices(tx *bolt.Tx, accountID string) (Prices, error) {
	b := tx.Bucket(bPrices)
	load := func(acct string) (Prices, error) {
		p := Prices{}
		for _, k := range Kinds {
			if v := b.Get(key(acct, string(k))); v != nil {
				n, err := strconv.ParseInt(string(v), 10, 64)
				if err != nil {
					return nil, fmt.Errorf("accounts store: price %q: %w", v, err)
				}
				p[k] = Micros(n)
			}
		}
		return p, nil
	}
	def, err := load("")
	if err != nil || accountID == "" {
		return effective(def), err
	}
	own, err := load(accountID)
	return effective(def, own), err
}

// Prices implements [Store].
func (s *BoltStore) Prices(_ context.Context, accountID string) (p Prices, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		if accountID != "" {
			if _, err := s.account(tx, accountID); err != nil {
				return err
			}
		}
		p, err = s.prices(tx, accountID)
		return err
	})
	return p, err
}

func leaseKey(id int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(id)) }

func freeTaken(b *bolt.Bucket, acct, month string) int64 {
	n, _ := strconv.ParseInt(string(b.Get(key(acct, month))), 10, 64)
	return n
}

// Sync implements [Store].
func (s *BoltStore) Sync(_ context.Context, now time.Time, ttl time.Duration, reqs []LeaseSync) ([]LeaseState, error) {
	out := make([]LeaseState, len(reqs))
	err := s.db.Update(func(tx *bolt.Tx) error {
		lb, fb, ab := tx.Bucket(bLeases), tx.Bucket(bFree), tx.Bucket(bAccounts)
		for i := range reqs {
			req := &reqs[i]
			a, err := s.account(tx, req.Account)
			if errors.Is(err, ErrNotFound) {
				out[i].Err = err
				continue
			}
			if err != nil {
				return err
			}
			st := syncState{status: a.Status, balance: a.Balance, freeTaken: map[string]int64{}}
			st.freeTaken[Month(now)] = freeTaken(fb, a.ID, Month(now))
			if req.Lease != 0 {
				var l leaseRow
				ok, err := get(lb, leaseKey(req.Lease), &l)
				if err != nil {
					return err
				}
				if ok && l.Account == a.ID {
					st.lease = &l
					st.freeTaken[l.Month] = freeTaken(fb, a.ID, l.Month)
				}
			}
			if err := settle(req, now, ttl, &st); err != nil {
				out[i].Err = err
				continue
			}
			a.Balance = st.balance
			if err := put(ab, []byte(a.ID), a); err != nil {
				return err
			}
			for m, n := range st.freeTaken {
				if err := fb.Put(key(a.ID, m), []byte(strconv.FormatInt(n, 10))); err != nil {
					return err
				}
			}
			if err := addUsage(tx.Bucket(bUsage), st.usage); err != nil {
				return err
			}
			if l := st.lease; l != nil {
				if st.created {
					id, err := lb.NextSequence()
					if err != nil {
						return err
					}
					l.ID = int64(id)
				}
				if st.deleted {
					err = lb.Delete(leaseKey(l.ID))
				} else {
					err = put(lb, leaseKey(l.ID), l)
				}
				if err != nil {
					return err
				}
			}
			if st.othersLeased, err = s.otherLeases(lb, req, &st); err != nil {
				return err
			}
			p, err := s.prices(tx, a.ID)
			if err != nil {
				return err
			}
			out[i] = st.state(p, now)
		}
		return nil
	})
	return out, err
}

// otherLeases recalls, when req asks, the other leases of req's account,
// and returns the credit they hold.
func (s *BoltStore) otherLeases(lb *bolt.Bucket, req *LeaseSync, st *syncState) (Micros, error) {
	own := int64(0)
	if l := st.lease; l != nil && !st.deleted {
		own = l.ID
	}
	var held Micros
	var recalled []leaseRow
	err := lb.ForEach(func(_, v []byte) error {
		var l leaseRow
		if err := json.Unmarshal(v, &l); err != nil {
			return err
		}
		if l.Account != req.Account || l.ID == own {
			return nil
		}
		held += l.Credit
		if req.Recall && l.Credit > 0 && !l.Recall {
			l.Recall = true
			recalled = append(recalled, l)
		}
		return nil
	})
	for i := range recalled {
		if err == nil {
			err = put(lb, leaseKey(recalled[i].ID), &recalled[i])
		}
	}
	return held, err
}

func addUsage(b *bolt.Bucket, rows []UsageRow) error {
	for _, u := range rows {
		k := key(u.AccountID, u.Day, string(u.Kind))
		var old UsageRow
		if _, err := get(b, k, &old); err != nil {
			return err
		}
		u.Lookups += old.Lookups
		u.Free += old.Free
		u.Amount += old.Amount
		if err := put(b, k, &u); err != nil {
			return err
		}
	}
	return nil
}

// ExpireLeases implements [Store].
func (s *BoltStore) ExpireLeases(_ context.Context, now time.Time) (n int, err error) {
	err = s.db.Update(func(tx *bolt.Tx) error {
		lb, fb, ab := tx.Bucket(bLeases), tx.Bucket(bFree), tx.Bucket(bAccounts)
		var dead, gone []leaseRow
		err := lb.ForEach(func(_, v []byte) error {
			var l leaseRow
			if err := json.Unmarshal(v, &l); err != nil {
				return err
			}
			switch {
			case l.Expired && l.Expires.Before(now.Add(-tombstoneKeep)):
				gone = append(gone, l)
			case !l.Expired && l.Expires.Before(now):
				dead = append(dead, l)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, l := range gone {
			if err := lb.Delete(leaseKey(l.ID)); err != nil {
				return err
			}
		}
		for _, l := range dead {
			if a, err := s.account(tx, l.Account); err == nil {
				a.Balance += l.Credit
				if err := put(ab, []byte(a.ID), a); err != nil {
					return err
				}
			}
			taken := freeTaken(fb, l.Account, l.Month) - l.Free
			if err := fb.Put(key(l.Account, l.Month), []byte(strconv.FormatInt(taken, 10))); err != nil {
				return err
			}
			l.Credit, l.Free, l.Expired, l.Recall = 0, 0, true, false
			if err := put(lb, leaseKey(l.ID), l); err != nil {
				return err
			}
		}
		n = len(dead)
		return nil
	})
	return n, err
}

// FreeLeft implements [Store].
func (s *BoltStore) FreeLeft(_ context.Context, accountID, month string) (n int64, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		if _, err := s.account(tx, accountID); err != nil {
			return err
		}
		n = max(FreeTier-freeTaken(tx.Bucket(bFree), accountID, month), 0)
		return nil
	})
	return n, err
}

// Usage implements [Store].
func (s *BoltStore) Usage(_ context.Context, accountID, month string) (out []UsageRow, err error) {
	if _, err := ParseMonth(month); err != nil {
		return nil, err
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		if accountID != "" {
			if _, err := s.account(tx, accountID); err != nil {
				return err
			}
		}
		return tx.Bucket(bUsage).ForEach(func(_, v []byte) error {
			var u UsageRow
			if err := json.Unmarshal(v, &u); err != nil {
				return err
			}
			if (accountID == "" || u.AccountID == accountID) && strings.HasPrefix(u.Day, month+"-") {
				out = append(out, u)
			}
			return nil
		})
	})
	sortUsage(out)
	return out, err
}

func sortUsage(rows []UsageRow) {
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.AccountID != b.AccountID {
			return a.AccountID < b.AccountID
		}
		if a.Day != b.Day {
			return a.Day < b.Day
		}
		return a.Kind.index() < b.Kind.index()
	})
}

func sortKeys(keys []KeyRecord) {
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].Created.Before(keys[j].Created) || keys[i].Created.Equal(keys[j].Created) && keys[i].ID < keys[j].ID
	})
}

// The checks both stores make before writing.

func checkName(name string) error {
	if strings.TrimSpace(name) == "" || len(name) > 200 {
		return fmt.Errorf("%w: an account name must be 1 to 200 characters", ErrInvalid)
	}
	return nil
}

func checkKey(k *KeyRecord) error {
	if k.Limit < 0 || len(k.Label) > 200 || k.Hash == ([32]byte{}) {
		return fmt.Errorf("%w: a key needs a hash, a label of at most 200 characters and a limit that is not negative", ErrInvalid)
	}
	if !PlainText(k.Label) {
		return fmt.Errorf("%w: a key's label must be UTF-8 text without control or format characters (tabs, new lines, direction marks)", ErrInvalid)
	}
	return nil
}

// PlainText reports whether s is valid UTF-8 without a control character,
// a format character (Unicode category Cf: the direction overrides such as
// U+202E, zero-width joiners, soft hyphens), a line or paragraph separator
// or a private-use character: text that shows as what it says wherever it
// is printed (a page, a terminal, a CSV cell).
func PlainText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, notPlain)
}

// notPlain reports whether PlainText refuses r.
func notPlain(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Co)
}

// Escaped returns s with each character PlainText refuses written as its
// escape (U+202E as \u202e, a new line as \n) and each byte that is not
// UTF-8 as \xff: text stored before a rule refused them (a key's label)
// is shown as what it holds, and a direction override is seen, not
// obeyed.
func Escaped(s string) string {
	if PlainText(s) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case notPlain(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

func checkCredit(amount Micros, ref string) error {
	if amount <= 0 {
		return fmt.Errorf("%w: a credit must be positive, not %s", ErrInvalid, amount)
	}
	if amount > MaxCredit {
		return fmt.Errorf("%w: a credit may be at most $%s, not $%s", ErrInvalid, MaxCredit, amount)
	}
	if strings.TrimSpace(ref) == "" || len(ref) > 200 {
		return fmt.Errorf("%w: a credit needs a reference (an invoice number) of 1 to 200 characters", ErrInvalid)
	}
	return nil
}

// checkCredited refuses a top-up that would take what a wallet was
// credited in all past MaxCredited. The balance never exceeds it, so its
// sums cannot overflow either.
func checkCredited(accountID string, credited, amount Micros) error {
	if sum, ok := addMicros(credited, amount); !ok || sum > MaxCredited {
		return fmt.Errorf("%w: account %s was credited $%s in all; another $%s would pass the most a wallet may be credited, $%s", ErrInvalid, accountID, credited, amount, MaxCredited)
	}
	return nil
}

func checkPrice(kind Kind, price Micros) error {
	if !kind.Valid() {
		return fmt.Errorf("%w: kind %q: want one of %v", ErrInvalid, kind, Kinds)
	}
	if price < 0 {
		return fmt.Errorf("%w: a price must not be negative", ErrInvalid)
	}
	if price > MaxPrice {
		return fmt.Errorf("%w: a price may be at most $%s, not $%s", ErrInvalid, MaxPrice, price)
	}
	return nil
}

// audit records the change tx makes, if ctx carries an actor, in tx.
func (s *BoltStore) audit(ctx context.Context, tx *bolt.Tx, action, account, format string, args ...any) error {
	e, ok := audit(ctx, action, account, format, args...)
	if !ok {
		return nil
	}
	b := tx.Bucket(bAudit)
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	e.ID = int64(seq)
	return put(b, binary.BigEndian.AppendUint64(nil, seq), &e)
}

// Audit implements [Store].
func (s *BoltStore) Audit(_ context.Context, accountID string, before int64, limit int) (out []AuditEntry, err error) {
	limit = auditLimit(limit)
	err = s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bAudit).Cursor()
		k, v := c.Last()
		if before > 0 {
			if at, _ := c.Seek(binary.BigEndian.AppendUint64(nil, uint64(before))); at != nil {
				k, v = c.Prev() // the last below before
			} else {
				k, v = c.Last() // every entry is below before
			}
		}
		for ; k != nil && len(out) < limit; k, v = c.Prev() {
			var e AuditEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("accounts store: audit entry %x: %w", k, err)
			}
			if accountID == "" || e.Account == accountID {
				out = append(out, e)
			}
		}
		return nil
	})
	return out, err
}
