package webui

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
)

// SessionStore keeps sessions where every node serving the same accounts
// store sees them (billing's PostgreSQL store): a session made on one node
// is served by any, and its end on one — sign-out, its key revoked — is
// its end on all at once.
type SessionStore interface {
	CreateWebSession(ctx context.Context, ws billing.WebSession, perKey int, staleBefore time.Time) error
	WebSession(ctx context.Context, id [32]byte, now time.Time, touch time.Duration) (billing.WebSession, error)
	EndWebSession(ctx context.Context, id [32]byte) error
	EndWebSessionsOf(ctx context.Context, h [32]byte) error
	SetWebSessionFlash(ctx context.Context, id [32]byte, flash string) error
}

// sessionTouch is how stale a shared session's last-seen time may be:
// one write a minute per session, and idle time known to the minute.
const sessionTouch = time.Minute

// storeTimeout bounds one call to the session store.
const storeTimeout = 5 * time.Second

// sharedSessions is a table in a SessionStore. It holds no session in
// memory: every request asks the store (one read, and a write a minute).
type sharedSessions struct {
	store        SessionStore
	idle, maxAge time.Duration
	perKey       int
	log          *slog.Logger
}

func (st *sharedSessions) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), storeTimeout)
}

func (st *sharedSessions) create(role Role, id Identity, now time.Time) (string, *Session, error) {
	cookie := token()
	s := &Session{Role: role, Identity: id, Created: now, id: sha256.Sum256([]byte(cookie)), csrf: csrfOf(cookie), seen: now, shared: st}
	ctx, cancel := st.ctx()
	defer cancel()
	err := st.store.CreateWebSession(ctx, billing.WebSession{ID: s.id, Role: role.String(), KeyHash: id.KeyHash, KeyID: id.KeyID,
		AccountID: id.AccountID, Limit: id.Limit, Created: now}, st.perKey, now.Add(-st.idle))
	if err != nil {
		return "", nil, err
	}
	return cookie, s, nil
}

func (st *sharedSessions) get(cookie string, now time.Time) *Session {
	if len(cookie) != tokenLen {
		return nil
	}
	ctx, cancel := st.ctx()
	defer cancel()
	id := sha256.Sum256([]byte(cookie))
	ws, err := st.store.WebSession(ctx, id, now, sessionTouch)
	if err != nil {
		if !errors.Is(err, billing.ErrNotFound) {
			st.log.Error("web session: the store did not answer; the browser is treated as signed out", "error", err)
		}
		return nil
	}
	var role Role
	switch ws.Role {
	case RoleCustomer.String():
		role = RoleCustomer
	case RoleAdmin.String():
		role = RoleAdmin
	}
	s := &Session{Role: role, Identity: Identity{KeyHash: ws.KeyHash, KeyID: ws.KeyID, AccountID: ws.AccountID, Limit: ws.Limit},
		Created: ws.Created, id: id, csrf: csrfOf(cookie), seen: ws.Seen, flash: ws.Flash, shared: st}
	if role == 0 || now.Sub(ws.Seen) >= st.idle || now.Sub(ws.Created) >= st.maxAge || now.Before(ws.Created) {
		st.end(s)
		return nil
	}
	return s
}

func (st *sharedSessions) end(s *Session) {
	ctx, cancel := st.ctx()
	defer cancel()
	if err := st.store.EndWebSession(ctx, s.id); err != nil {
		st.log.Error("web session: ending a session failed", "error", err)
	}
}

func (st *sharedSessions) endKey(h [32]byte) {
	ctx, cancel := st.ctx()
	defer cancel()
	if err := st.store.EndWebSessionsOf(ctx, h); err != nil {
		st.log.Error("web session: ending a key's sessions failed", "error", err)
	}
}

func (st *sharedSessions) setFlash(s *Session, msg string) {
	ctx, cancel := st.ctx()
	defer cancel()
	if err := st.store.SetWebSessionFlash(ctx, s.id, msg); err != nil {
		st.log.Error("web session: keeping a notice failed", "error", err)
	}
}
