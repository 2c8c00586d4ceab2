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
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/pgschema"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/ingest/feed"
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
	pool    *pgxpool.Pool
	cfg     *pgx.ConnConfig // for the LISTEN connection
	channel string          // channel, named after the log's schema
	id      string

	queue           chan *appendReq // to the appender
	closed, stopped chan struct{}
	closeOnce       sync.Once
}

// Open connects to dsn and applies the embedded migrations the database
// lacks (recorded in update_log_migrations, beside any other store's).
func Open(ctx context.Context, dsn string) (*Log, error) {
	return OpenIn(ctx, dsn, "")
}

// OpenIn is Open with the log's tables in schema, created when absent, and
// every statement run there (pgschema); "" is the connection's search_path.
// Logs in different schemas of one database are different logs.
func OpenIn(ctx context.Context, dsn, schema string) (*Log, error) {
	pool, err := pgschema.Open(ctx, dsn, schema, "update log", migrations, "migrations", "update_log_migrations")
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	l := &Log{pool: pool, cfg: pool.Config().ConnConfig, channel: pgschema.Channel(channel, schema),
		queue: make(chan *appendReq, maxGroup), closed: make(chan struct{}), stopped: make(chan struct{})}
	if err := pool.QueryRow(cctx, `SELECT id FROM update_log_info`).Scan(&l.id); err != nil {
		pool.Close()
		return nil, fmt.Errorf("update log %s: %w", pgschema.Redact(dsn), err)
	}
	go l.appender()
	return l, nil
}

// Close waits for the appends in progress and closes the pool; appends
// still queued fail with ErrUnavailable.
func (l *Log) Close() {
	l.closeOnce.Do(func() {
		close(l.closed)
		<-l.stopped
		for {
			select {
			case r := <-l.queue:
				r.e, r.err = Entry{}, fmt.Errorf("%w: the log is closed", ErrUnavailable)
				close(r.done)
				continue
			default:
			}
			break
		}
		l.pool.Close()
	})
}

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
	b.WriteString("action,tn,lrn,spid,activated_at,sv_type\n")
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
		b.WriteByte(',')
		if u.SVType != format.SVTypeNone {
			b.WriteString(strconv.Itoa(int(u.SVType) - 1)) // the NPAC's value
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// maxGroup is how many appends at most share one transaction.
const maxGroup = 256

// appendReq is one Append waiting for the appender.
type appendReq struct {
	node, key, batchID string
	feed               []byte
	sum                [32]byte
	e                  Entry
	err                error
	done               chan struct{}
}

// Append appends a batch (as EncodeFeed wrote it), posted to node, and
// notifies the followers; it returns once the batch is committed. With a
// non-empty key, a batch already logged under key is answered again
// (Replayed) if it is the same feed, and ErrKeyReused if not. An
// unreachable server is ErrUnavailable.
//
// Appends made at the same time share one transaction (one commit, one
// WAL flush), each batch still its own row and sequence number.
func (l *Log) Append(ctx context.Context, node, key string, feedCSV []byte) (Entry, error) {
	r := &appendReq{node: node, key: key, feed: feedCSV, sum: sha256.Sum256(feedCSV), done: make(chan struct{})}
	var nb [16]byte
	_, _ = rand.Read(nb[:])
	r.batchID = hex.EncodeToString(nb[:])
	r.e = Entry{Node: node, Feed: feedCSV}
	for _, line := range bytes.Split(feedCSV, []byte("\n"))[1:] {
		if len(line) == 0 {
			continue
		}
		switch line[0] {
		case 'A':
			r.e.Added++
		case 'U':
			r.e.Modified++
		case 'D':
			r.e.Deleted++
		}
	}
	select {
	case l.queue <- r:
	case <-ctx.Done():
		return Entry{}, fmt.Errorf("%w: %v", ErrUnavailable, ctx.Err())
	case <-l.closed:
		return Entry{}, fmt.Errorf("%w: the log is closed", ErrUnavailable)
	}
	// Once queued, the outcome is waited for whatever ctx says: the
	// appender's own timeouts bound it, and an answer given before it
	// would not know whether the batch was logged. A request queued as
	// the log closed is answered by Close, or here.
	select {
	case <-r.done:
	case <-l.stopped:
		select {
		case <-r.done:
		default:
			return Entry{}, fmt.Errorf("%w: the log is closed", ErrUnavailable)
		}
	}
	return r.e, r.err
}

// appender runs the queued appends, as many at once as are waiting.
func (l *Log) appender() {
	defer close(l.stopped)
	for {
		var group []*appendReq
		select {
		case r := <-l.queue:
			group = append(group, r)
		case <-l.closed:
			return
		}
	drain:
		for len(group) < maxGroup {
			select {
			case r := <-l.queue:
				group = append(group, r)
			default:
				break drain
			}
		}
		l.appendGroup(group)
		for _, r := range group {
			close(r.done)
		}
	}
}

// appendGroup appends a group in one transaction under the append lock.
func (l *Log) appendGroup(group []*appendReq) {
	ctx, cancel := context.WithTimeout(context.Background(), queryTimeout)
	defer cancel()
	// inserted: a row was inserted; committing: the statements all
	// succeeded, so an error is the commit's.
	inserted, committing := false, false
	err := pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		inserted = false
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, appendLock); err != nil {
			return err
		}
		var last int64
		for _, r := range group {
			r.e.Seq, r.e.Replayed, r.err = 0, false, nil
			if r.key != "" {
				var fp []byte
				var e Entry
				err := tx.QueryRow(ctx, `SELECT seq, posted, node, fingerprint, added, modified, deleted FROM update_log WHERE idempotency_key = $1`, r.key).
					Scan(&e.Seq, &e.Posted, &e.Node, &fp, &e.Added, &e.Modified, &e.Deleted)
				switch {
				case err == nil && bytes.Equal(fp, r.sum[:]):
					e.Feed, e.Replayed = r.feed, true
					r.e = e
					continue
				case err == nil:
					r.err = ErrKeyReused
					continue
				case !errors.Is(err, pgx.ErrNoRows):
					return err
				}
			}
			var keyArg *string
			if r.key != "" {
				keyArg = &r.key
			}
			if err := tx.QueryRow(ctx, `INSERT INTO update_log (node, idempotency_key, batch_id, fingerprint, feed, added, modified, deleted)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING seq, posted`,
				r.node, keyArg, r.batchID, r.sum[:], string(r.feed), r.e.Added, r.e.Modified, r.e.Deleted).Scan(&r.e.Seq, &r.e.Posted); err != nil {
				return err
			}
			inserted, last = true, r.e.Seq
		}
		if inserted {
			if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, l.channel, strconv.FormatInt(last, 10)); err != nil {
				return err
			}
		}
		committing = true
		return nil
	})
	if err == nil {
		for _, r := range group {
			r.e.Posted = r.e.Posted.UTC()
		}
		return
	}
	// Unless the commit itself went unanswered, nothing was appended.
	var logged map[string]int64
	var qerr error
	ambiguous := inserted && committing
	if ambiguous {
		logged, qerr = l.findBatches(group)
	}
	for _, r := range group {
		seq, found := logged[r.batchID]
		switch {
		case errors.Is(r.err, ErrKeyReused), r.err == nil && r.e.Replayed:
			// Read from committed rows: the answer stands.
		case found:
			r.e.Seq, r.e.Posted, r.err = seq, r.e.Posted.UTC(), nil
		case ambiguous && qerr != nil && r.e.Seq != 0:
			r.e, r.err = Entry{}, fmt.Errorf("%w: the commit went unanswered, so the batch may be in the log (send it again with the same Idempotency-Key to know): %v", ErrUnavailable, err)
		default:
			r.e, r.err = Entry{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
	}
}

// findBatches asks, on a fresh connection, which of group's batches are in
// the log after a commit that went unanswered.
func (l *Log) findBatches(group []*appendReq) (map[string]int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), queryTimeout)
	defer cancel()
	ids := make([]string, len(group))
	for i, r := range group {
		ids[i] = r.batchID
	}
	rows, err := l.pool.Query(ctx, `SELECT batch_id, seq FROM update_log WHERE batch_id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	found := map[string]int64{}
	for rows.Next() {
		var id string
		var seq int64
		if err := rows.Scan(&id, &seq); err != nil {
			return nil, err
		}
		found[id] = seq
	}
	return found, rows.Err()
}

// Read returns up to limit entries after seq, in order, and the log's head
// (its highest sequence number; 0 when empty).
func (l *Log) Read(ctx context.Context, after int64, limit int) ([]Entry, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	// Two statements, no transaction: a head read before the rows can
	// only be lower than what they show, and the next read corrects it.
	var head int64
	var out []Entry
	err := l.pool.QueryRow(ctx, `SELECT COALESCE(max(seq), 0) FROM update_log`).Scan(&head)
	if err == nil && head > after {
		var rows pgx.Rows
		rows, err = l.pool.Query(ctx, `SELECT seq, posted, node, feed, added, modified, deleted FROM update_log WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limit)
		if err == nil {
			out, err = pgx.CollectRows(rows, scanEntry)
		}
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return out, head, nil
}

// ReportApplied records that node has passed the log up to seq, and which
// batches up to it its table refused (skipped: not applied there).
func (l *Log) ReportApplied(ctx context.Context, node string, seq int64, skipped []int64) error {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	if skipped == nil {
		skipped = []int64{}
	}
	// A report lost with the server's crash is made again with the
	// next batch: it need not wait for the WAL flush.
	err := pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO update_log_nodes (node, applied_seq, skipped) VALUES ($1, $2, $3)
			ON CONFLICT (node) DO UPDATE SET applied_seq = excluded.applied_seq, skipped = excluded.skipped, updated = now()`, node, seq, skipped)
		return err
	})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return nil
}

// Appliers is what the nodes have reported of one batch, by node name.
type Appliers struct {
	// Applied names the nodes whose table took the batch.
	Applied []string
	// Refused names the nodes that passed it without applying it: their
	// table refused it (see Follower).
	Refused []string
	// Behind names the nodes known to the log that have not reached it.
	Behind []string
}

// AppliedBy reports which nodes have applied seq, which refused it, and
// which have not reached it yet.
func (l *Log) AppliedBy(ctx context.Context, seq int64) (Appliers, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	var a Appliers
	rows, err := l.pool.Query(ctx, `SELECT node, applied_seq >= $1, $1 = ANY(skipped) FROM update_log_nodes ORDER BY node`, seq)
	if err == nil {
		for rows.Next() {
			var node string
			var reached, skipped bool
			if err = rows.Scan(&node, &reached, &skipped); err != nil {
				break
			}
			switch {
			case !reached:
				a.Behind = append(a.Behind, node)
			case skipped:
				a.Refused = append(a.Refused, node)
			default:
				a.Applied = append(a.Applied, node)
			}
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	if err != nil {
		return Appliers{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return a, nil
}

// Get returns the entries with the given sequence numbers that the log
// holds, in order.
func (l *Log) Get(ctx context.Context, seqs []int64) ([]Entry, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	rows, err := l.pool.Query(ctx, `SELECT seq, posted, node, feed, added, modified, deleted FROM update_log WHERE seq = ANY($1) ORDER BY seq`, seqs)
	var out []Entry
	if err == nil {
		out, err = pgx.CollectRows(rows, scanEntry)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return out, nil
}

func scanEntry(row pgx.CollectableRow) (Entry, error) {
	var e Entry
	var f string
	err := row.Scan(&e.Seq, &e.Posted, &e.Node, &f, &e.Added, &e.Modified, &e.Deleted)
	e.Feed = []byte(f)
	return e, err
}

// listen opens a connection that LISTENs on the log's channel.
func (l *Log) listen(ctx context.Context) (*pgx.Conn, error) {
	cctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	c, err := pgx.ConnectConfig(cctx, l.cfg.Copy())
	if err != nil {
		return nil, err
	}
	if _, err := c.Exec(cctx, "LISTEN "+pgx.Identifier{l.channel}.Sanitize()); err != nil {
		c.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return c, nil
}
