// Package updatelog owns the one stream of port updates that several
// `lnpdb serve` nodes share: an ordered log of update batches in
// PostgreSQL (table update_log, a sequence number per batch), the append
// of a batch posted to any node (once: an Idempotency-Key is unique in the
// log), and the Follower that applies the log, in order, into the node's
// own table (its journal and overlay, through format's ApplyBatch) and
// remembers durably how far it got.
//
// # Order
//
// Appends take one advisory lock for their transaction, so that sequence
// numbers commit in the order they are drawn: a follower that has read
// every row up to N never sees a row below N appear later.
//
// # Re-application
//
// A follower records the last sequence it applied in a file beside the
// table (<table>.updatelog) after the journal has fsync'd the batches;
// a crash between the two applies those batches again at the next start.
// That changes nothing: every update sets or removes a number's ported
// record regardless of what was there, so applying a run of batches again,
// in order, on top of a table that already has them leaves every number as
// the last update of the run set it, which it already was.
//
// # Failure
//
// When PostgreSQL is unreachable, appends fail with ErrUnavailable (the
// admin API answers 503) and nothing is applied anywhere; lookups go on
// from each node's own table. Followers retry, and catch up by themselves
// once PostgreSQL is back; a lost LISTEN connection is made up for by
// polling.
package updatelog

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/feed"
	"github.com/lnpdb/lnpdb/internal/pgschema"
)

//go:embed migrations/*.sql
var migrations embed.FS

// channel is the LISTEN/NOTIFY channel an append notifies, with the new
// sequence number as the payload.
const channel = "lnpdb_update_log"

// appendLock is the advisory lock an append holds until it commits.
const appendLock = 7306542

// queryTimeout bounds each statement, so that an unreachable server is
// noticed rather than waited for.
const queryTimeout = 5 * time.Second

var (
	// ErrUnavailable reports a log that could not be reached: nothing was
	// appended (or, when the commit went unanswered, the error says so).
	ErrUnavailable = errors.New("updatelog: the update log is unavailable")
	// ErrKeyReused reports an Idempotency-Key already in the log with
	// another batch.
	ErrKeyReused = errors.New("updatelog: idempotency key already used for other updates")
)

// Log is the shared update log in PostgreSQL. Its methods are safe for
// concurrent use.
type Log struct {
	pool *pgxpool.Pool
	cfg  *pgx.ConnConfig // for the LISTEN connection
	id   string
}

// Open connects to dsn and applies the embedded migrations the database
// lacks (recorded in update_log_migrations, beside any other store's).
func Open(ctx context.Context, dsn string) (*Log, error) {
	pool, err := pgschema.Connect(ctx, dsn, "update log")
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pgschema.Migrate(cctx, pool, migrations, "migrations", "update_log_migrations"); err != nil {
		pool.Close()
		return nil, fmt.Errorf("update log %s: migrating: %w", pgschema.Redact(dsn), err)
	}
	l := &Log{pool: pool, cfg: pool.Config().ConnConfig}
	if err := pool.QueryRow(cctx, `SELECT id FROM update_log_info`).Scan(&l.id); err != nil {
		pool.Close()
		return nil, fmt.Errorf("update log %s: %w", pgschema.Redact(dsn), err)
	}
	return l, nil
}

// Close closes the pool.
func (l *Log) Close() { l.pool.Close() }

// ID names this log; a node's recorded sequence belongs to one log.
func (l *Log) ID() string { return l.id }

// Entry is one batch of the log.
type Entry struct {
	Seq    int64
	Posted time.Time
	Node   string // where it was posted
	Feed   []byte // the batch as a CSV update feed
	// What the batch does, by action.
	Added, Modified, Deleted int
	// Replayed is true when Append found the batch in the log already
	// under the same idempotency key: nothing was appended this time.
	Replayed bool
}

// Updates decodes the batch.
func (e *Entry) Updates() ([]format.Update, error) {
	ups, err := feed.ParseCSV(e.Feed)
	if err != nil {
		return nil, fmt.Errorf("updatelog: entry %d: %w", e.Seq, err)
	}
	return ups, nil
}

// EncodeFeed writes updates as a CSV update feed (DATA.md, Live updates),
// the form a batch is kept in the log: readable by an operator, and read
// back through the same parser as a posted feed.
func EncodeFeed(updates []format.Update) []byte {
	var b bytes.Buffer
	b.Grow(32 + 48*len(updates))
	b.WriteString("action,tn,lrn,spid,activated_at\n")
	for i := range updates {
		u := &updates[i]
		b.WriteByte(byte(u.Action))
		b.WriteByte(',')
		b.WriteString(strconv.FormatUint(u.TN, 10))
		b.WriteByte(',')
		if u.LRN != 0 {
			b.WriteString(strconv.FormatUint(u.LRN, 10))
		}
		b.WriteByte(',')
		b.WriteString(u.SPID)
		b.WriteByte(',')
		if u.ActivatedAt != 0 {
			b.WriteString(time.Unix(u.ActivatedAt, 0).UTC().Format(time.RFC3339))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// Append appends a batch (as EncodeFeed wrote it), posted to node, and
// notifies the followers, in one transaction; it returns once the batch is
// committed. With a non-empty key, a batch already logged under key is
// answered again (Replayed) if it is the same feed, and ErrKeyReused if
// not. An unreachable server is ErrUnavailable.
func (l *Log) Append(ctx context.Context, node, key string, feedCSV []byte) (Entry, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	sum := sha256.Sum256(feedCSV)
	var nb [16]byte
	_, _ = rand.Read(nb[:])
	batchID := hex.EncodeToString(nb[:])
	e := Entry{Node: node, Feed: feedCSV}
	for _, line := range bytes.Split(feedCSV, []byte("\n"))[1:] {
		if len(line) == 0 {
			continue
		}
		switch line[0] {
		case 'A':
			e.Added++
		case 'U':
			e.Modified++
		case 'D':
			e.Deleted++
		}
	}
	var keyArg *string
	if key != "" {
		keyArg = &key
	}
	err := pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, appendLock); err != nil {
			return err
		}
		if key != "" {
			var fp []byte
			err := tx.QueryRow(ctx, `SELECT seq, posted, node, fingerprint, added, modified, deleted FROM update_log WHERE idempotency_key = $1`, key).
				Scan(&e.Seq, &e.Posted, &e.Node, &fp, &e.Added, &e.Modified, &e.Deleted)
			switch {
			case err == nil && bytes.Equal(fp, sum[:]):
				e.Replayed = true
				return nil
			case err == nil:
				return ErrKeyReused
			case !errors.Is(err, pgx.ErrNoRows):
				return err
			}
		}
		if err := tx.QueryRow(ctx, `INSERT INTO update_log (node, idempotency_key, batch_id, fingerprint, feed, added, modified, deleted)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING seq, posted`,
			node, keyArg, batchID, sum[:], string(feedCSV), e.Added, e.Modified, e.Deleted).Scan(&e.Seq, &e.Posted); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, strconv.FormatInt(e.Seq, 10))
		return err
	})
	switch {
	case err == nil:
		e.Posted = e.Posted.UTC()
		return e, nil
	case errors.Is(err, ErrKeyReused):
		return Entry{}, err
	case e.Seq != 0 && !e.Replayed:
		// The insert was answered but the commit was not: the batch may
		// be in the log. Ask once more on a fresh connection.
		qctx, qcancel := context.WithTimeout(context.WithoutCancel(ctx), queryTimeout)
		defer qcancel()
		var seq int64
		qerr := l.pool.QueryRow(qctx, `SELECT seq FROM update_log WHERE batch_id = $1`, batchID).Scan(&seq)
		switch {
		case qerr == nil:
			e.Seq = seq
			return e, nil
		case errors.Is(qerr, pgx.ErrNoRows):
			return Entry{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		return Entry{}, fmt.Errorf("%w: the commit went unanswered, so the batch may be in the log (send it again with the same Idempotency-Key to know): %v", ErrUnavailable, err)
	}
	return Entry{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
}

// Read returns up to limit entries after seq, in order, and the log's head
// (its highest sequence number; 0 when empty).
func (l *Log) Read(ctx context.Context, after int64, limit int) ([]Entry, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	var head int64
	var out []Entry
	err := pgx.BeginTxFunc(ctx, l.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT COALESCE(max(seq), 0) FROM update_log`).Scan(&head); err != nil {
			return err
		}
		if head <= after {
			return nil
		}
		rows, err := tx.Query(ctx, `SELECT seq, posted, node, feed, added, modified, deleted FROM update_log WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limit)
		if err != nil {
			return err
		}
		for rows.Next() {
			var e Entry
			var f string
			if err := rows.Scan(&e.Seq, &e.Posted, &e.Node, &f, &e.Added, &e.Modified, &e.Deleted); err != nil {
				rows.Close()
				return err
			}
			e.Feed = []byte(f)
			out = append(out, e)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return out, head, nil
}

// ReportApplied records that node has applied the log up to seq.
func (l *Log) ReportApplied(ctx context.Context, node string, seq int64) error {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	_, err := l.pool.Exec(ctx, `INSERT INTO update_log_nodes (node, applied_seq) VALUES ($1, $2)
		ON CONFLICT (node) DO UPDATE SET applied_seq = excluded.applied_seq, updated = now()`, node, seq)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return nil
}

// AppliedBy counts the nodes that have reported applying seq.
func (l *Log) AppliedBy(ctx context.Context, seq int64) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	var n int
	if err := l.pool.QueryRow(ctx, `SELECT count(*) FROM update_log_nodes WHERE applied_seq >= $1`, seq).Scan(&n); err != nil {
		return 0, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return n, nil
}

// listen opens a connection that LISTENs on the log's channel.
func (l *Log) listen(ctx context.Context) (*pgx.Conn, error) {
	cctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	c, err := pgx.ConnectConfig(cctx, l.cfg.Copy())
	if err != nil {
		return nil, err
	}
	if _, err := c.Exec(cctx, "LISTEN "+channel); err != nil {
		c.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return c, nil
}
