package billing

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// WebSession is a session of the web interface as the PostgreSQL store
// keeps it for every node (package webui owns what it means).
type WebSession struct {
	// ID is the SHA-256 of the session's cookie.
	ID        [32]byte
	Role      string
	KeyHash   [32]byte
	KeyID     string
	AccountID string
	Limit     int
	Created   time.Time
	Seen      time.Time
	// Flash is a notice for the next page.
	Flash string
}

// CreateWebSession stores ws and, in the same transaction, ends the
// sessions last seen before staleBefore and those of ws's key past the
// perKey newest.
func (s *PostgresStore) CreateWebSession(ctx context.Context, ws WebSession, perKey int, staleBefore time.Time) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM web_sessions WHERE seen < $1`, staleBefore); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO web_sessions (id, role, key_sha256, key_id, account_id, rate_limit, created, seen) VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
			ws.ID[:], ws.Role, ws.KeyHash[:], ws.KeyID, ws.AccountID, ws.Limit, ws.Created); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM web_sessions WHERE id IN (SELECT id FROM web_sessions WHERE key_sha256 = $1 ORDER BY created DESC, id OFFSET $2)`, ws.KeyHash[:], perKey)
		return err
	})
}

// WebSession returns the session whose cookie hashes to id, ErrNotFound
// for none. Its Seen becomes now when it was more than touch before: a
// session's idle time is known to within touch, for one write a touch.
func (s *PostgresStore) WebSession(ctx context.Context, id [32]byte, now time.Time, touch time.Duration) (WebSession, error) {
	ws := WebSession{ID: id}
	var keyHash []byte
	err := s.pool.QueryRow(ctx, `SELECT role, key_sha256, key_id, account_id, rate_limit, created, seen, flash FROM web_sessions WHERE id = $1`, id[:]).
		Scan(&ws.Role, &keyHash, &ws.KeyID, &ws.AccountID, &ws.Limit, &ws.Created, &ws.Seen, &ws.Flash)
	if err != nil {
		return WebSession{}, pgNotFound(err, "web session")
	}
	copy(ws.KeyHash[:], keyHash)
	ws.Created, ws.Seen = ws.Created.UTC(), ws.Seen.UTC()
	if now.Sub(ws.Seen) > touch {
		if _, err := s.pool.Exec(ctx, `UPDATE web_sessions SET seen = $2 WHERE id = $1 AND seen < $2`, id[:], now); err != nil {
			return WebSession{}, fmt.Errorf("web session: %w", err)
		}
	}
	return ws, nil
}

// EndWebSession ends the session whose cookie hashes to id.
func (s *PostgresStore) EndWebSession(ctx context.Context, id [32]byte) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM web_sessions WHERE id = $1`, id[:])
	return err
}

// EndWebSessionsOf ends every session signed in with the key of hash h.
func (s *PostgresStore) EndWebSessionsOf(ctx context.Context, h [32]byte) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM web_sessions WHERE key_sha256 = $1`, h[:])
	return err
}

// SetWebSessionFlash sets the notice of the session whose cookie hashes
// to id ("" clears it).
func (s *PostgresStore) SetWebSessionFlash(ctx context.Context, id [32]byte, flash string) error {
	_, err := s.pool.Exec(ctx, `UPDATE web_sessions SET flash = $2 WHERE id = $1`, id[:], flash)
	return err
}
