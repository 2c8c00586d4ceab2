package webui

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"sync"
	"time"
)

// Role is who a session's key makes its holder.
type Role uint8

// The roles: a customer holds an API key of an account (--accounts); an
// admin holds a key of --admin-keys.
const (
	RoleCustomer Role = iota + 1
	RoleAdmin
)

func (r Role) String() string {
	switch r {
	case RoleCustomer:
		return "customer"
	case RoleAdmin:
		return "admin"
	}
	return "none"
}

// article is the role with its article: "a customer's", "an admin".
func (r Role) article() string {
	if r == RoleAdmin {
		return "an admin"
	}
	return "a customer's"
}

// Identity is what a session knows of the key it was signed in with: never
// the key's text.
type Identity struct {
	// KeyHash is the SHA-256 of the key.
	KeyHash [32]byte
	// KeyID names the key to its holder: the accounts store's key id, or
	// the first hex digits of its hash.
	KeyID string
	// AccountID is a customer's account ("" for an admin).
	AccountID string
	// Limit is the key's own rate limit (lookups per minute; 0: the
	// server's default).
	Limit int
}

// Session is a signed-in browser. Its exported fields do not change after
// sign-in.
type Session struct {
	Role Role
	Identity
	Created time.Time

	id   [32]byte // SHA-256 of the cookie's value
	csrf string

	mu    sync.Mutex
	seen  time.Time
	flash string
}

// CSRF returns the session's CSRF token, which every state-changing form
// of the session sends in the field "csrf".
func (s *Session) CSRF() string { return s.csrf }

// SetFlash keeps a notice for the next page rendered for the session.
func (s *Session) SetFlash(msg string) {
	s.mu.Lock()
	s.flash = msg
	s.mu.Unlock()
}

func (s *Session) popFlash() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.flash
	s.flash = ""
	return f
}

// errFull is sign-in's error when MaxSessions are live.
var errFull = errors.New("too many sessions")

// sessions is the in-memory session table, by the SHA-256 of the cookie.
type sessions struct {
	idle, maxAge time.Duration
	max          int

	mu        sync.Mutex
	m         map[[32]byte]*Session
	lastSweep time.Time
}

// token returns 32 random bytes in base64url: a session id or CSRF token.
func token() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// tokenLen is the length of a token's text.
const tokenLen = 43

// create makes a session with a new id and returns the cookie's value.
func (st *sessions) create(role Role, id Identity, now time.Time) (string, *Session, error) {
	cookie := token()
	s := &Session{Role: role, Identity: id, Created: now, id: sha256.Sum256([]byte(cookie)), csrf: token(), seen: now}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.sweep(now)
	if len(st.m) >= st.max {
		return "", nil, errFull
	}
	st.m[s.id] = s
	return cookie, s, nil
}

// get returns the live session of cookie, nil for none, and marks it seen.
func (st *sessions) get(cookie string, now time.Time) *Session {
	if len(cookie) != tokenLen {
		return nil
	}
	h := sha256.Sum256([]byte(cookie))
	st.mu.Lock()
	s := st.m[h]
	st.mu.Unlock()
	if s == nil {
		return nil
	}
	s.mu.Lock()
	live := st.live(s, now)
	if live {
		s.seen = now
	}
	s.mu.Unlock()
	if !live {
		st.end(s)
		return nil
	}
	return s
}

// live reports whether s has neither idled out nor outlived MaxAge; s.mu
// is held.
func (st *sessions) live(s *Session, now time.Time) bool {
	return now.Sub(s.seen) < st.idle && now.Sub(s.Created) < st.maxAge && !now.Before(s.Created)
}

func (st *sessions) end(s *Session) {
	st.mu.Lock()
	delete(st.m, s.id)
	st.mu.Unlock()
}

// endKey ends every session signed in with the key of hash h.
func (st *sessions) endKey(h [32]byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for id, s := range st.m {
		if s.KeyHash == h {
			delete(st.m, id)
		}
	}
}

// sweep drops expired sessions, at most once a minute; st.mu is held.
func (st *sessions) sweep(now time.Time) {
	if now.Sub(st.lastSweep) < time.Minute {
		return
	}
	st.lastSweep = now
	for id, s := range st.m {
		s.mu.Lock()
		live := st.live(s, now)
		s.mu.Unlock()
		if !live {
			delete(st.m, id)
		}
	}
}

func (st *sessions) len() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.m)
}
