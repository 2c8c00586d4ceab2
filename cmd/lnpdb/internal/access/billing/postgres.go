package billing

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/pgschema"
)

//go:embed migrations/*.sql
var migrations embed.FS

// PostgresStore is the shared Store: PostgreSQL, for several processes
// billing one set of wallets. Every method is one transaction; a sync locks
// the rows of the accounts it touches (in account order, so that
// concurrent syncs cannot deadlock).
type PostgresStore struct {
	pool        *pgxpool.Pool
	keysChannel string
}

// OpenPostgres connects to dsn and applies the embedded migrations the
// database lacks (recorded in schema_migrations). With schema not "" the
// store's tables live in that schema, created when absent, and every
// statement runs there (pgschema); "" is the connection's search_path.
func OpenPostgres(ctx context.Context, dsn, schema string) (*PostgresStore, error) {
	pool, err := pgschema.Open(ctx, dsn, schema, "accounts store", migrations, "migrations", "schema_migrations")
	if err != nil {
		return nil, err
	}
	return &PostgresStore{pool: pool, keysChannel: pgschema.Channel(keysChannel, schema)}, nil
}

// Close implements [Store].
func (s *PostgresStore) Close() error {
	s.pool.Close()
	return nil
}

const accountCols = `a.id, a.name, a.status, a.created, a.balance, a.credited,
	COALESCE((SELECT sum(credit) FROM leases l WHERE l.account_id = a.id), 0)`

func scanAccount(row pgx.Row) (Account, error) {
	var a Account
	var st string
	err := row.Scan(&a.ID, &a.Name, &st, &a.Created, &a.Balance, &a.Credited, &a.Leased)
	a.Status, a.Created = Status(st), a.Created.UTC()
	return a, err
}

func pgNotFound(err error, what string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return err
}

// CreateAccount implements [Store].
func (s *PostgresStore) CreateAccount(ctx context.Context, name string, now time.Time) (Account, error) {
	if err := checkName(name); err != nil {
		return Account{}, err
	}
	a := Account{ID: newID("acct_"), Name: name, Status: StatusActive, Created: now.UTC().Truncate(time.Microsecond)}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO accounts (id, name, status, created) VALUES ($1, $2, $3, $4)`, a.ID, a.Name, string(a.Status), a.Created); err != nil {
			return err
		}
		return s.audit(ctx, tx, AuditCreate, a.ID, "name %q", name)
	})
	return a, err
}

// Account implements [Store].
func (s *PostgresStore) Account(ctx context.Context, id string) (Account, error) {
	a, err := scanAccount(s.pool.QueryRow(ctx, `SELECT `+accountCols+` FROM accounts a WHERE a.id = $1`, id))
	return a, pgNotFound(err, fmt.Sprintf("account %q", id))
}

// Accounts implements [Store].
func (s *PostgresStore) Accounts(ctx context.Context) ([]Account, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+accountCols+` FROM accounts a ORDER BY a.created, a.id`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Account, error) { return scanAccount(r) })
}

// SetStatus implements [Store].
func (s *PostgresStore) SetStatus(ctx context.Context, id string, st Status) (Account, error) {
	if st != StatusActive && st != StatusSuspended {
		return Account{}, fmt.Errorf("%w: status %q", ErrInvalid, st)
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE accounts SET status = $2 WHERE id = $1`, id, string(st))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("account %q: %w", id, ErrNotFound)
		}
		return s.audit(ctx, tx, statusAction(st), id, "%s", st)
	})
	if err != nil {
		return Account{}, err
	}
	s.keysChanged(ctx)
	return s.Account(ctx, id)
}

func (s *PostgresStore) exists(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, id string) error {
	var one int
	err := q.QueryRow(ctx, `SELECT 1 FROM accounts WHERE id = $1`, id).Scan(&one)
	return pgNotFound(err, fmt.Sprintf("account %q", id))
}

// AddKey implements [Store].
func (s *PostgresStore) AddKey(ctx context.Context, k KeyRecord, now time.Time) (KeyRecord, error) {
	return s.AddKeyCapped(ctx, k, now, 0)
}

// AddKeyCapped implements [Store]: the account's row is locked before its
// valid keys are counted, so that additions to one account, from any
// process, are counted one after another.
func (s *PostgresStore) AddKeyCapped(ctx context.Context, k KeyRecord, now time.Time, maxValid int) (KeyRecord, error) {
	if err := checkKey(&k); err != nil {
		return KeyRecord{}, err
	}
	k.ID, k.Created, k.Revoked = newID("key_"), now.UTC().Truncate(time.Microsecond), time.Time{}
	if err := s.exists(ctx, s.pool, k.AccountID); err != nil {
		return KeyRecord{}, err
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if maxValid > 0 {
			var valid int
			if _, err := tx.Exec(ctx, `SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE`, k.AccountID); err != nil {
				return err
			}
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM api_keys WHERE account_id = $1 AND revoked IS NULL`, k.AccountID).Scan(&valid); err != nil {
				return err
			}
			if valid >= maxValid {
				return fmt.Errorf("account %s has %d valid keys: %w", k.AccountID, valid, ErrKeyCap)
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO api_keys (id, account_id, label, sha256, rate_limit, created) VALUES ($1, $2, $3, $4, $5, $6)`,
			k.ID, k.AccountID, k.Label, k.Hash[:], k.Limit, k.Created); err != nil {
			return err
		}
		return s.audit(ctx, tx, AuditNewKey, k.AccountID, "%s label %q rate limit %d", k.ID, k.Label, k.Limit)
	})
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Code == "23505":
		return KeyRecord{}, fmt.Errorf("%w: a key with this hash exists", ErrConflict)
	case errors.As(err, &pe) && pe.Code == "23503":
		return KeyRecord{}, fmt.Errorf("account %q: %w", k.AccountID, ErrNotFound)
	case err == nil:
		s.keysChanged(ctx)
	}
	return k, err
}

func scanKey(r pgx.Row) (KeyRecord, error) {
	var k KeyRecord
	var h []byte
	var revoked, used *time.Time
	if err := r.Scan(&k.ID, &k.AccountID, &k.Label, &h, &k.Limit, &k.Created, &revoked, &used); err != nil {
		return k, err
	}
	copy(k.Hash[:], h)
	k.Created = k.Created.UTC()
	if revoked != nil {
		k.Revoked = revoked.UTC()
	}
	if used != nil {
		k.LastUsed = used.UTC()
	}
	return k, nil
}

const keyCols = `id, account_id, label, sha256, rate_limit, created, revoked, last_used`

// KeysUsed implements [Store]: one statement, which moves a key's
// last_used only forward.
func (s *PostgresStore) KeysUsed(ctx context.Context, used map[string]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	ids := make([]string, 0, len(used))
	ats := make([]time.Time, 0, len(used))
	for id, at := range used {
		ids = append(ids, id)
		ats = append(ats, at.UTC().Truncate(time.Second))
	}
	_, err := s.pool.Exec(ctx, `UPDATE api_keys AS k SET last_used = u.at
		FROM unnest($1::text[], $2::timestamptz[]) AS u(id, at)
		WHERE k.id = u.id AND (k.last_used IS NULL OR k.last_used < u.at)`, ids, ats)
	return err
}

// Keys implements [Store].
func (s *PostgresStore) Keys(ctx context.Context, accountID string) ([]KeyRecord, error) {
	if accountID != "" {
		if err := s.exists(ctx, s.pool, accountID); err != nil {
			return nil, err
		}
	}
	rows, err := s.pool.Query(ctx, `SELECT `+keyCols+` FROM api_keys WHERE $1 = '' OR account_id = $1 ORDER BY created, id`, accountID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (KeyRecord, error) { return scanKey(r) })
}

// RevokeKey implements [Store].
func (s *PostgresStore) RevokeKey(ctx context.Context, accountID, keyID string, now time.Time) (KeyRecord, error) {
	var k KeyRecord
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		k, err = scanKey(tx.QueryRow(ctx, `UPDATE api_keys SET revoked = COALESCE(revoked, $3)
			WHERE id = $1 AND account_id = $2 RETURNING `+keyCols, keyID, accountID, now.UTC().Truncate(time.Microsecond)))
		if err != nil {
			return pgNotFound(err, fmt.Sprintf("key %q of account %q", keyID, accountID))
		}
		return s.audit(ctx, tx, AuditRevoke, accountID, "%s", k.ID)
	})
	if err != nil {
		return KeyRecord{}, err
	}
	s.keysChanged(ctx)
	return k, nil
}

// Credit implements [Store].
func (s *PostgresStore) Credit(ctx context.Context, accountID string, amount Micros, ref string, now time.Time) (c Credit, applied bool, err error) {
	if err := checkCredit(amount, ref); err != nil {
		return Credit{}, false, err
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var credited Micros
		if err := tx.QueryRow(ctx, `SELECT credited FROM accounts WHERE id = $1 FOR UPDATE`, accountID).Scan(&credited); err != nil {
			return pgNotFound(err, fmt.Sprintf("account %q", accountID))
		}
		err := tx.QueryRow(ctx, `SELECT account_id, ref, amount, created FROM credits WHERE account_id = $1 AND ref = $2`, accountID, ref).
			Scan(&c.AccountID, &c.Ref, &c.Amount, &c.Created)
		if err == nil {
			c.Created = c.Created.UTC()
			if c.Amount != amount {
				return fmt.Errorf("%w: credit %q of account %s was %s, not %s", ErrConflict, ref, accountID, c.Amount, amount)
			}
			return s.audit(ctx, tx, AuditCredit, accountID, "%s", creditDetail(c, false))
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		c = Credit{AccountID: accountID, Ref: ref, Amount: amount, Created: now.UTC().Truncate(time.Microsecond)}
		if err := checkCredited(accountID, credited, amount); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO credits (account_id, ref, amount, created) VALUES ($1, $2, $3, $4)`, accountID, ref, amount, c.Created); err != nil {
			return err
		}
		applied = true
		if _, err := tx.Exec(ctx, `UPDATE accounts SET balance = balance + $2, credited = credited + $2 WHERE id = $1`, accountID, amount); err != nil {
			return err
		}
		return s.audit(ctx, tx, AuditCredit, accountID, "%s", creditDetail(c, true))
	})
	if err != nil {
		return Credit{}, false, err
	}
	return c, applied, nil
}

// Credits implements [Store].
func (s *PostgresStore) Credits(ctx context.Context, accountID string) ([]Credit, error) {
	if err := s.exists(ctx, s.pool, accountID); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT account_id, ref, amount, created FROM credits WHERE account_id = $1 ORDER BY created, ref`, accountID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Credit, error) {
		var c Credit
		err := r.Scan(&c.AccountID, &c.Ref, &c.Amount, &c.Created)
		c.Created = c.Created.UTC()
		return c, err
	})
}

// SetPrice implements [Store].
func (s *PostgresStore) SetPrice(ctx context.Context, accountID string, kind Kind, price Micros) error {
	if err := checkPrice(kind, price); err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if accountID != "" {
			if err := s.exists(ctx, tx, accountID); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO prices (account_id, kind, price) VALUES ($1, $2, $3)
			ON CONFLICT (account_id, kind) DO UPDATE SET price = EXCLUDED.price`, accountID, string(kind), price); err != nil {
			return err
		}
		return s.audit(ctx, tx, AuditPrice, accountID, "%s $%s", kind, price)
	})
}

type querier interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
	QueryRow(context.Context, string, ...any) pgx.Row
}

func (s *PostgresStore) prices(ctx context.Context, q querier, accountID string) (Prices, error) {
	rows, err := q.Query(ctx, `SELECT account_id, kind, price FROM prices WHERE account_id = '' OR account_id = $1`, accountID)
	if err != nil {
		return nil, err
	}
	def, own := Prices{}, Prices{}
	var acct, kind string
	var price Micros
	_, err = pgx.ForEachRow(rows, []any{&acct, &kind, &price}, func() error {
		if !Kind(kind).Valid() {
			return nil // a kind this version does not bill
		}
		if acct == "" {
			def[Kind(kind)] = price
		} else {
			own[Kind(kind)] = price
		}
		return nil
	})
	return effective(def, own), err
}

// Prices implements [Store].
func (s *PostgresStore) Prices(ctx context.Context, accountID string) (Prices, error) {
	if accountID != "" {
		if err := s.exists(ctx, s.pool, accountID); err != nil {
			return nil, err
		}
	}
	return s.prices(ctx, s.pool, accountID)
}

func pgFreeTaken(ctx context.Context, tx pgx.Tx, acct, month string) (int64, error) {
	var n int64
	err := tx.QueryRow(ctx, `SELECT taken FROM free_tier WHERE account_id = $1 AND month = $2`, acct, month).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return n, err
}

// Sync implements [Store].
func (s *PostgresStore) Sync(ctx context.Context, now time.Time, ttl time.Duration, reqs []LeaseSync) ([]LeaseState, error) {
	out := make([]LeaseState, len(reqs))
	order := make([]int, len(reqs))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return reqs[order[i]].Account < reqs[order[j]].Account })
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, i := range order {
			req := &reqs[i]
			out[i] = LeaseState{}
			st := syncState{freeTaken: map[string]int64{}}
			var status string
			err := tx.QueryRow(ctx, `SELECT status, balance FROM accounts WHERE id = $1 FOR UPDATE`, req.Account).Scan(&status, &st.balance)
			if errors.Is(err, pgx.ErrNoRows) {
				out[i].Err = fmt.Errorf("account %q: %w", req.Account, ErrNotFound)
				continue
			}
			if err != nil {
				return err
			}
			st.status = Status(status)
			cur := Month(now)
			if st.freeTaken[cur], err = pgFreeTaken(ctx, tx, req.Account, cur); err != nil {
				return err
			}
			if req.Lease != 0 {
				var l leaseRow
				err := tx.QueryRow(ctx, `SELECT id, account_id, holder, month, credit, free, seq, expires, recall, expired FROM leases
					WHERE id = $1 AND account_id = $2 FOR UPDATE`, req.Lease, req.Account).
					Scan(&l.ID, &l.Account, &l.Holder, &l.Month, &l.Credit, &l.Free, &l.Seq, &l.Expires, &l.Recall, &l.Expired)
				switch {
				case err == nil:
					st.lease = &l
					if st.freeTaken[l.Month], err = pgFreeTaken(ctx, tx, req.Account, l.Month); err != nil {
						return err
					}
				case !errors.Is(err, pgx.ErrNoRows):
					return err
				}
			}
			if err := settle(req, now, ttl, &st); err != nil {
				out[i].Err = err
				continue
			}
			if _, err := tx.Exec(ctx, `UPDATE accounts SET balance = $2 WHERE id = $1`, req.Account, st.balance); err != nil {
				return err
			}
			for m, n := range st.freeTaken {
				if _, err := tx.Exec(ctx, `INSERT INTO free_tier (account_id, month, taken) VALUES ($1, $2, $3)
					ON CONFLICT (account_id, month) DO UPDATE SET taken = EXCLUDED.taken`, req.Account, m, n); err != nil {
					return err
				}
			}
			if err := pgAddUsage(ctx, tx, st.usage); err != nil {
				return err
			}
			if l := st.lease; l != nil {
				switch {
				case st.deleted && !st.created:
					_, err = tx.Exec(ctx, `DELETE FROM leases WHERE id = $1`, l.ID)
				case st.deleted:
				case st.created:
					err = tx.QueryRow(ctx, `INSERT INTO leases (account_id, holder, month, credit, free, seq, expires)
						VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`, l.Account, l.Holder, l.Month, l.Credit, l.Free, l.Seq, l.Expires).Scan(&l.ID)
				default:
					_, err = tx.Exec(ctx, `UPDATE leases SET holder = $2, month = $3, credit = $4, free = $5, seq = $6, expires = $7, recall = false, expired = false WHERE id = $1`,
						l.ID, l.Holder, l.Month, l.Credit, l.Free, l.Seq, l.Expires)
				}
				if err != nil {
					return err
				}
			}
			own := int64(0)
			if l := st.lease; l != nil && !st.deleted {
				own = l.ID
			}
			if req.Recall {
				if _, err := tx.Exec(ctx, `UPDATE leases SET recall = true WHERE account_id = $1 AND id <> $2 AND credit > 0`, req.Account, own); err != nil {
					return err
				}
			}
			if err := tx.QueryRow(ctx, `SELECT COALESCE(sum(credit), 0) FROM leases WHERE account_id = $1 AND id <> $2`, req.Account, own).Scan(&st.othersLeased); err != nil {
				return err
			}
			p, err := s.prices(ctx, tx, req.Account)
			if err != nil {
				return err
			}
			out[i] = st.state(p, now)
		}
		return nil
	})
	return out, err
}

// ExpireLeases implements [Store].
func (s *PostgresStore) ExpireLeases(ctx context.Context, now time.Time) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// Lock the accounts first, then the leases, as Sync does.
		rows, err := tx.Query(ctx, `SELECT id FROM accounts WHERE id IN (SELECT account_id FROM leases WHERE expires < $1 AND NOT expired) ORDER BY id FOR UPDATE`, now)
		if err != nil {
			return err
		}
		if _, err := pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM leases WHERE expired AND expires < $1`, now.Add(-tombstoneKeep)); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `UPDATE leases l SET credit = 0, free = 0, expired = true, recall = false
			FROM (SELECT id, credit, free FROM leases WHERE expires < $1 AND NOT expired FOR UPDATE) old
			WHERE l.id = old.id RETURNING l.account_id, l.month, old.credit, old.free`, now)
		if err != nil {
			return err
		}
		type dead struct {
			acct, month  string
			credit, free int64
		}
		ds, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (dead, error) {
			var d dead
			err := r.Scan(&d.acct, &d.month, &d.credit, &d.free)
			return d, err
		})
		if err != nil {
			return err
		}
		for _, d := range ds {
			if _, err := tx.Exec(ctx, `UPDATE accounts SET balance = balance + $2 WHERE id = $1`, d.acct, d.credit); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE free_tier SET taken = taken - $3 WHERE account_id = $1 AND month = $2`, d.acct, d.month, d.free); err != nil {
				return err
			}
		}
		n = len(ds)
		return nil
	})
	return n, err
}

// FreeLeft implements [Store].
func (s *PostgresStore) FreeLeft(ctx context.Context, accountID, month string) (int64, error) {
	if err := s.exists(ctx, s.pool, accountID); err != nil {
		return 0, err
	}
	var taken int64
	err := s.pool.QueryRow(ctx, `SELECT COALESCE((SELECT taken FROM free_tier WHERE account_id = $1 AND month = $2), 0)`, accountID, month).Scan(&taken)
	return max(FreeTier-taken, 0), err
}

// Usage implements [Store].
func (s *PostgresStore) Usage(ctx context.Context, accountID, month string) ([]UsageRow, error) {
	m, err := ParseMonth(month)
	if err != nil {
		return nil, err
	}
	if accountID != "" {
		if err := s.exists(ctx, s.pool, accountID); err != nil {
			return nil, err
		}
	}
	first, _ := time.Parse("2006-01", m)
	rows, err := s.pool.Query(ctx, `SELECT account_id, day, kind, lookups, free, amount FROM usage
		WHERE ($1 = '' OR account_id = $1) AND day >= $2 AND day < $3`, accountID, first, first.AddDate(0, 1, 0))
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (UsageRow, error) {
		var u UsageRow
		var day time.Time
		var kind string
		err := r.Scan(&u.AccountID, &day, &kind, &u.Lookups, &u.Free, &u.Amount)
		u.Day, u.Kind = day.Format("2006-01-02"), Kind(kind)
		return u, err
	})
	sortUsage(out)
	return out, err
}

// keysChannel is the LISTEN/NOTIFY channel on which a change of the keys or
// of an account's status is announced to every process sharing the store
// (named after the store's schema, when it has one: pgschema.Channel).
const keysChannel = "lnpdb_keys"

// keysChanged announces a committed change of keys or statuses. Should the
// notification be lost, the engines' periodic reload (KeysEvery) still
// brings the change.
func (s *PostgresStore) keysChanged(ctx context.Context) {
	_, _ = s.pool.Exec(context.WithoutCancel(ctx), `SELECT pg_notify($1, '')`, s.keysChannel)
}

// WatchKeys implements [KeysWatcher]: a LISTEN connection, made again with a
// growing pause while the server cannot be reached, signals each change
// announced by any process, and each new connection (changes may have gone
// unheard while there was none).
func (s *PostgresStore) WatchKeys(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	signal := func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	go func() {
		pause := 100 * time.Millisecond
		for ctx.Err() == nil {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			c, err := pgx.ConnectConfig(cctx, s.pool.Config().ConnConfig.Copy())
			if err == nil {
				if _, err = c.Exec(cctx, "LISTEN "+pgx.Identifier{s.keysChannel}.Sanitize()); err != nil {
					c.Close(context.Background())
				}
			}
			cancel()
			if err != nil {
				select {
				case <-ctx.Done():
					return
				case <-time.After(pause):
				}
				pause = min(2*pause, 5*time.Second)
				continue
			}
			pause = 100 * time.Millisecond
			signal()
			for {
				if _, err := c.WaitForNotification(ctx); err != nil {
					break
				}
				signal()
			}
			c.Close(context.Background())
		}
	}()
	return ch
}

// audit records the change tx makes, if ctx carries an actor, in tx.
func (s *PostgresStore) audit(ctx context.Context, tx pgx.Tx, action, account, format string, args ...any) error {
	e, ok := audit(ctx, action, account, format, args...)
	if !ok {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO audit_log (at, admin_key, remote, via, action, account_id, detail) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		e.At, e.Key, e.Remote, e.Via, e.Action, e.Account, e.Detail)
	return err
}

// Audit implements [Store].
func (s *PostgresStore) Audit(ctx context.Context, accountID string, before int64, limit int) ([]AuditEntry, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, at, admin_key, remote, via, action, account_id, detail FROM audit_log
		WHERE ($1 = '' OR account_id = $1) AND ($2 = 0 OR id < $2) ORDER BY id DESC LIMIT $3`, accountID, before, auditLimit(limit))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (AuditEntry, error) {
		var e AuditEntry
		err := r.Scan(&e.ID, &e.At, &e.Key, &e.Remote, &e.Via, &e.Action, &e.Account, &e.Detail)
		e.At = e.At.UTC()
		return e, err
	})
}
