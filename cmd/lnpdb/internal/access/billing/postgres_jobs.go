package billing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/webhook"
)

const jobCols = `id, account_id, kind, enhanced, messaging, webhook_url, status, total, done, paid, free, charged, chunks, created, finished`

func scanJob(r pgx.Row) (Job, error) {
	var j Job
	var st string
	var fin *time.Time
	err := r.Scan(&j.ID, &j.AccountID, &j.Kind, &j.Enhanced, &j.Messaging, &j.WebhookURL, &st, &j.Total, &j.Done, &j.Paid, &j.Free, &j.Charged, &j.Chunks, &j.Created, &fin)
	j.Status, j.Created = JobStatus(st), j.Created.UTC()
	if fin != nil {
		j.Finished = fin.UTC()
	}
	return j, err
}

// CreateJob implements [Jobs]: the account's row is locked while its jobs
// are counted, so that jobs made together cannot pass the limits.
func (s *PostgresStore) CreateJob(ctx context.Context, spec JobSpec, lim JobLimits, now time.Time) (Job, error) {
	if err := checkSpec(&spec); err != nil {
		return Job{}, err
	}
	j, inputs, sizes := newJob(&spec, now)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE`, j.AccountID).Scan(&one)
		if err != nil {
			return pgNotFound(err, fmt.Sprintf("account %q", j.AccountID))
		}
		var unfinished int
		var recent int64
		if err := tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status IN ('queued', 'running', 'insufficient_balance')),
			COALESCE(sum(total) FILTER (WHERE created > $2), 0) FROM jobs WHERE account_id = $1`, j.AccountID, now.Add(-time.Hour)).Scan(&unfinished, &recent); err != nil {
			return err
		}
		if err := checkLimits(lim, unfinished, recent, j.Total); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO jobs (`+jobCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, 0, 0, 0, $9, $10, NULL)`,
			j.ID, j.AccountID, j.Kind, j.Enhanced, j.Messaging, j.WebhookURL, string(j.Status), j.Total, j.Chunks, j.Created); err != nil {
			return err
		}
		rows := make([][]any, len(inputs))
		for i := range inputs {
			rows[i] = []any{j.ID, i, sizes[i], inputs[i]}
		}
		_, err = tx.CopyFrom(ctx, pgx.Identifier{"job_chunks"}, []string{"job_id", "seq", "size", "input"}, pgx.CopyFromRows(rows))
		return err
	})
	return j, err
}

// Job implements [Jobs].
func (s *PostgresStore) Job(ctx context.Context, accountID, id string) (Job, error) {
	j, err := scanJob(s.pool.QueryRow(ctx, `SELECT `+jobCols+` FROM jobs WHERE id = $1 AND account_id = $2`, id, accountID))
	return j, pgNotFound(err, fmt.Sprintf("job %q", id))
}

// ListJobs implements [Jobs].
func (s *PostgresStore) ListJobs(ctx context.Context, accountID string, limit int) ([]Job, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.pool.Query(ctx, `SELECT `+jobCols+` FROM jobs WHERE ($1 = '' OR account_id = $1)
		ORDER BY created DESC, id DESC LIMIT NULLIF($2, -1)`, accountID, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Job, error) { return scanJob(r) })
}

// setJob updates a job to j (its counts, status and end).
func setJob(ctx context.Context, tx pgx.Tx, j *Job) error {
	var fin *time.Time
	if !j.Finished.IsZero() {
		fin = &j.Finished
	}
	_, err := tx.Exec(ctx, `UPDATE jobs SET status = $2, done = $3, paid = $4, free = $5, charged = $6, finished = $7 WHERE id = $1`,
		j.ID, string(j.Status), j.Done, j.Paid, j.Free, j.Charged, fin)
	return err
}

// changeJob runs change on accountID's job id, locked, and stores it.
func (s *PostgresStore) changeJob(ctx context.Context, accountID, id string, change func(*Job) error) (Job, error) {
	var j Job
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		j, err = scanJob(tx.QueryRow(ctx, `SELECT `+jobCols+` FROM jobs WHERE id = $1 AND account_id = $2 FOR UPDATE`, id, accountID))
		if err != nil {
			return pgNotFound(err, fmt.Sprintf("job %q", id))
		}
		if err := change(&j); err != nil {
			return err
		}
		return setJob(ctx, tx, &j)
	})
	return j, err
}

// CancelJob implements [Jobs].
func (s *PostgresStore) CancelJob(ctx context.Context, accountID, id string, now time.Time) (Job, error) {
	return s.changeJob(ctx, accountID, id, func(j *Job) error { cancelJob(j, now); return nil })
}

// ResumeJob implements [Jobs].
func (s *PostgresStore) ResumeJob(ctx context.Context, accountID, id string, _ time.Time) (Job, error) {
	return s.changeJob(ctx, accountID, id, resumeJob)
}

// ClaimChunk implements [Jobs]: the oldest claimable chunk, skipping those
// another process is claiming at the same moment.
func (s *PostgresStore) ClaimChunk(ctx context.Context, now time.Time, lease time.Duration) (*JobChunk, error) {
	var c *JobChunk
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var input []byte
		var cc JobChunk
		err := tx.QueryRow(ctx, `SELECT c.job_id, j.account_id, c.seq, c.done, c.input, j.kind, j.enhanced, j.messaging
			FROM job_chunks c JOIN jobs j ON j.id = c.job_id
			WHERE j.status IN ('queued', 'running') AND c.done < c.size AND (c.claimed_until IS NULL OR c.claimed_until < $1)
			ORDER BY j.created, j.id, c.seq LIMIT 1 FOR UPDATE OF c SKIP LOCKED`, now).
			Scan(&cc.JobID, &cc.AccountID, &cc.Seq, &cc.Offset, &input, &cc.Kind, &cc.Enhanced, &cc.Messaging)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if cc.Numbers, err = chunkNumbers(input, cc.Offset); err != nil {
			return err
		}
		cc.Claim, cc.Until = newID("claim_"), now.Add(lease)
		if _, err := tx.Exec(ctx, `UPDATE job_chunks SET claim = $3, claimed_until = $4 WHERE job_id = $1 AND seq = $2`, cc.JobID, cc.Seq, cc.Claim, cc.Until); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE jobs SET status = 'running' WHERE id = $1 AND status = 'queued'`, cc.JobID); err != nil {
			return err
		}
		c = &cc
		return nil
	})
	return c, err
}

// RenewChunk implements [Jobs]. It locks only the chunk: a job canceled
// meanwhile refuses the claim's commit, as it refuses its next renewal.
func (s *PostgresStore) RenewChunk(ctx context.Context, c *JobChunk, now time.Time, lease time.Duration) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var status, claim string
		var done int
		err := tx.QueryRow(ctx, `SELECT j.status, c.claim, c.done FROM job_chunks c JOIN jobs j ON j.id = c.job_id
			WHERE c.job_id = $1 AND c.seq = $2 AND j.account_id = $3 FOR UPDATE OF c`, c.JobID, c.Seq, c.AccountID).Scan(&status, &claim, &done)
		if err != nil {
			return pgNotFound(err, fmt.Sprintf("chunk %d of job %q", c.Seq, c.JobID))
		}
		until, err := renewChunk(c, JobStatus(status), claim, done, now, lease)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE job_chunks SET claimed_until = $3 WHERE job_id = $1 AND seq = $2`, c.JobID, c.Seq, until)
		return err
	})
}

// CommitChunk implements [Jobs]. It locks the account first, then the job
// and the chunk, as Sync locks accounts before leases.
func (s *PostgresStore) CommitChunk(ctx context.Context, c *JobChunk, lines [][]byte, answered []bool, now time.Time) (Job, error) {
	var j Job
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		st := chunkCommit{job: &j}
		var status string
		err := tx.QueryRow(ctx, `SELECT status, balance FROM accounts WHERE id = $1 FOR UPDATE`, c.AccountID).Scan(&status, &st.balance)
		if err != nil {
			return pgNotFound(err, fmt.Sprintf("account %q", c.AccountID))
		}
		st.status = Status(status)
		if j, err = scanJob(tx.QueryRow(ctx, `SELECT `+jobCols+` FROM jobs WHERE id = $1 AND account_id = $2 FOR UPDATE`, c.JobID, c.AccountID)); err != nil {
			return pgNotFound(err, fmt.Sprintf("job %q", c.JobID))
		}
		var parts int
		err = tx.QueryRow(ctx, `SELECT claim, done, size, parts FROM job_chunks WHERE job_id = $1 AND seq = $2 FOR UPDATE`, c.JobID, c.Seq).Scan(&st.claim, &st.done, &st.size, &parts)
		if err != nil {
			return pgNotFound(err, fmt.Sprintf("chunk %d of job %q", c.Seq, c.JobID))
		}
		month := Month(now)
		if st.freeTaken, err = pgFreeTaken(ctx, tx, c.AccountID, month); err != nil {
			return err
		}
		if st.prices, err = s.prices(ctx, tx, c.AccountID); err != nil {
			return err
		}
		if err := commitChunk(c, lines, answered, now, &st); err != nil {
			return err
		}
		if st.part != nil {
			if _, err := tx.Exec(ctx, `INSERT INTO job_results (job_id, seq, part, data) VALUES ($1, $2, $3, $4)`, c.JobID, c.Seq, parts, st.part); err != nil {
				return err
			}
			parts++
		}
		if _, err := tx.Exec(ctx, `UPDATE job_chunks SET done = done + $3, parts = $4, claim = '', claimed_until = NULL WHERE job_id = $1 AND seq = $2`,
			c.JobID, c.Seq, st.keep, parts); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE accounts SET balance = $2 WHERE id = $1`, c.AccountID, st.balance); err != nil {
			return err
		}
		if st.free > 0 {
			if _, err := tx.Exec(ctx, `INSERT INTO free_tier (account_id, month, taken) VALUES ($1, $2, $3)
				ON CONFLICT (account_id, month) DO UPDATE SET taken = EXCLUDED.taken`, c.AccountID, month, st.freeTaken); err != nil {
				return err
			}
		}
		if err := pgAddUsage(ctx, tx, st.usage); err != nil {
			return err
		}
		if st.recall {
			if _, err := tx.Exec(ctx, `UPDATE leases SET recall = true WHERE account_id = $1 AND credit > 0`, c.AccountID); err != nil {
				return err
			}
		}
		if err := pgOutbox(ctx, tx, st.delivery); err != nil {
			return err
		}
		return setJob(ctx, tx, &j)
	})
	return j, err
}

// pgAddUsage adds rows to the usage ledger.
func pgAddUsage(ctx context.Context, tx pgx.Tx, rows []UsageRow) error {
	for _, u := range rows {
		if _, err := tx.Exec(ctx, `INSERT INTO usage (account_id, day, kind, lookups, free, amount) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (account_id, day, kind) DO UPDATE SET lookups = usage.lookups + EXCLUDED.lookups,
			free = usage.free + EXCLUDED.free, amount = usage.amount + EXCLUDED.amount`,
			u.AccountID, u.Day, string(u.Kind), u.Lookups, u.Free, u.Amount); err != nil {
			return err
		}
	}
	return nil
}

func pgOutbox(ctx context.Context, tx pgx.Tx, d *webhook.Delivery) error {
	if d == nil {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO webhook_outbox (id, account_id, url, body, next_attempt, created) VALUES ($1, $2, $3, $4, $5, $5)`,
		d.ID, d.AccountID, d.URL, d.Body, d.CreatedAt)
	return err
}

// JobResults implements [Jobs]: one chunk's parts at a time, so that a
// million answers are never held at once.
func (s *PostgresStore) JobResults(ctx context.Context, accountID, id string, fn func(string, []byte) error) error {
	j, err := s.Job(ctx, accountID, id)
	if err != nil {
		return err
	}
	for seq := 0; seq < j.Chunks; seq++ {
		var done, size int
		var input []byte
		if err := s.pool.QueryRow(ctx, `SELECT done, size, input FROM job_chunks WHERE job_id = $1 AND seq = $2`, id, seq).Scan(&done, &size, &input); err != nil {
			return pgNotFound(err, fmt.Sprintf("job %q", id))
		}
		rows, err := s.pool.Query(ctx, `SELECT data FROM job_results WHERE job_id = $1 AND seq = $2 ORDER BY part`, id, seq)
		if err != nil {
			return err
		}
		parts, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
		if err != nil {
			return err
		}
		if err := chunkResults(input, parts, fn); err != nil {
			return err
		}
		if done < size {
			return nil
		}
	}
	return nil
}

// DeleteJobs implements [Jobs].
func (s *PostgresStore) DeleteJobs(ctx context.Context, cutoff time.Time) (int, error) {
	var n int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM jobs WHERE finished < $1 AND status NOT IN ('queued', 'running')`, cutoff)
		if err != nil {
			return err
		}
		n = tag.RowsAffected()
		_, err = tx.Exec(ctx, `DELETE FROM webhook_outbox WHERE state <> 'pending' AND next_attempt < $1`, cutoff)
		return err
	})
	return int(n), err
}

// SetWebhookSecret implements [Jobs].
func (s *PostgresStore) SetWebhookSecret(ctx context.Context, accountID, secret string, now time.Time) error {
	if err := checkSecret(secret); err != nil {
		return err
	}
	if err := s.exists(ctx, s.pool, accountID); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO webhook_secrets (account_id, secret, created) VALUES ($1, $2, $3)
		ON CONFLICT (account_id) DO UPDATE SET secret = EXCLUDED.secret, created = EXCLUDED.created`, accountID, secret, now.UTC())
	return err
}

// WebhooksDue implements [Jobs].
func (s *PostgresStore) WebhooksDue(ctx context.Context, now time.Time, limit int) ([]webhook.Delivery, error) {
	rows, err := s.pool.Query(ctx, `UPDATE webhook_outbox o SET next_attempt = $2
		FROM (SELECT id FROM webhook_outbox WHERE state = 'pending' AND next_attempt <= $1 ORDER BY next_attempt LIMIT $3 FOR UPDATE SKIP LOCKED) due
		WHERE o.id = due.id
		RETURNING o.id, o.account_id, o.url, COALESCE((SELECT secret FROM webhook_secrets w WHERE w.account_id = o.account_id), ''), o.body, o.attempts, o.created`,
		now, now.Add(webhook.Lease), max(limit, 1))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (webhook.Delivery, error) {
		var d webhook.Delivery
		err := r.Scan(&d.ID, &d.AccountID, &d.URL, &d.Secret, &d.Body, &d.Attempts, &d.CreatedAt)
		d.CreatedAt = d.CreatedAt.UTC()
		return d, err
	})
}

func (s *PostgresStore) webhookAttempt(ctx context.Context, id, state string, next time.Time, attempts int, lastErr string) error {
	_, err := s.pool.Exec(ctx, `UPDATE webhook_outbox SET state = $2, next_attempt = $3, attempts = $4, last_error = $5 WHERE id = $1 AND state = 'pending'`,
		id, state, next, attempts, clip(lastErr))
	return err
}

// WebhookDone implements [Jobs].
func (s *PostgresStore) WebhookDone(ctx context.Context, id string, at time.Time, attempts int) error {
	return s.webhookAttempt(ctx, id, "done", at, attempts, "")
}

// WebhookRetry implements [Jobs].
func (s *PostgresStore) WebhookRetry(ctx context.Context, id string, next time.Time, attempts int, lastErr string) error {
	return s.webhookAttempt(ctx, id, "pending", next, attempts, lastErr)
}

// WebhookFail implements [Jobs].
func (s *PostgresStore) WebhookFail(ctx context.Context, id string, at time.Time, attempts int, lastErr string) error {
	return s.webhookAttempt(ctx, id, "failed", at, attempts, lastErr)
}
