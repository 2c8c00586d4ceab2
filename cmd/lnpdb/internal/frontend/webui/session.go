package webui

import (
	"container/list"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"slices"
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

	seen time.Time     // guarded by the table's mu
	el   *list.Element // in the table's LRU list; guarded by its mu

	mu    sync.Mutex
	flash string

	shared *sharedSessions // nil: in this process's memory
}

// CSRF returns the session's CSRF token, which every state-changing form
// of the session sends in the field "csrf".
func (s *Session) CSRF() string { return s.csrf }

// SetFlash keeps a notice for the next page rendered for the session.
func (s *Session) SetFlash(msg string) {
	s.mu.Lock()
	s.flash = msg
	s.mu.Unlock()
	if s.shared != nil {
		s.shared.setFlash(s, msg)
	}
}

func (s *Session) popFlash() string {
	s.mu.Lock()
	f := s.flash
	s.flash = ""
	s.mu.Unlock()
	if f != "" && s.shared != nil {
		s.shared.setFlash(s, "")
	}
	return f
}

// csrfOf is the CSRF token of the session of cookie: derived from the
// cookie, so that whichever node serves the session knows it without
// storing it, and a store's reader, who has the cookie's hash only, does
// not.
func csrfOf(cookie string) string {
	h := sha256.Sum256([]byte("lnpdb csrf\x00" + cookie))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// table is where a UI keeps its sessions: this process's memory
// (sessions) or a store every node shares (sharedSessions).
type table interface {
	create(role Role, id Identity, now time.Time) (string, *Session, error)
	get(cookie string, now time.Time) *Session
	end(s *Session)
	endKey(h [32]byte)
}

// sessions is the in-memory session table, by the SHA-256 of the cookie.
// It holds at most perKey sessions of one key (a new sign-in ends the
// key's oldest) and at most max in all (a new sign-in ends the session
// unused the longest): a sign-in is never refused for want of room, so
// that no key holder, however many addresses he signs in from, can keep
// the others out. st.mu guards the table and every session's seen and el.
type sessions struct {
	idle, maxAge time.Duration
	max, perKey  int

	mu    sync.Mutex
	m     map[[32]byte]*Session
	lru   *list.List              // of *Session, the least recently seen first
	byKey map[[32]byte][]*Session // each key's, oldest first
}

func newSessions(idle, maxAge time.Duration, max, perKey int) *sessions {
	return &sessions{idle: idle, maxAge: maxAge, max: max, perKey: perKey,
		m: map[[32]byte]*Session{}, lru: list.New(), byKey: map[[32]byte][]*Session{}}
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
	s := &Session{Role: role, Identity: id, Created: now, id: sha256.Sum256([]byte(cookie)), csrf: csrfOf(cookie), seen: now}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.sweep(now)
	for len(st.byKey[id.KeyHash]) >= st.perKey {
		st.remove(st.byKey[id.KeyHash][0])
	}
	for len(st.m) >= st.max {
		st.remove(st.lru.Front().Value.(*Session))
	}
	st.m[s.id] = s
	s.el = st.lru.PushBack(s)
	st.byKey[id.KeyHash] = append(st.byKey[id.KeyHash], s)
	return cookie, s, nil
}

// get returns the live session of cookie, nil for none, and marks it seen.
func (st *sessions) get(cookie string, now time.Time) *Session {
	if len(cookie) != tokenLen {
		return nil
	}
	h := sha256.Sum256([]byte(cookie))
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.m[h]
	if s == nil {
		return nil
	}
	if !st.live(s, now) {
		st.remove(s)
		return nil
	}
	s.seen = now
	st.lru.MoveToBack(s.el)
	return s
}

// live reports whether s has neither idled out nor outlived MaxAge; st.mu
// is held.
func (st *sessions) live(s *Session, now time.Time) bool {
	return now.Sub(s.seen) < st.idle && now.Sub(s.Created) < st.maxAge && !now.Before(s.Created)
}

func (st *sessions) end(s *Session) {
	st.mu.Lock()
	st.remove(s)
	st.mu.Unlock()
}

// endKey ends every session signed in with the key of hash h.
func (st *sessions) endKey(h [32]byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for len(st.byKey[h]) > 0 {
		st.remove(st.byKey[h][0])
	}
}

// remove drops s from the table, if it is there; st.mu is held.
func (st *sessions) remove(s *Session) {
	if st.m[s.id] != s {
		return
	}
	delete(st.m, s.id)
	st.lru.Remove(s.el)
	k := st.byKey[s.KeyHash]
	k = slices.DeleteFunc(k, func(o *Session) bool { return o == s })
	if len(k) == 0 {
		delete(st.byKey, s.KeyHash)
	} else {
		st.byKey[s.KeyHash] = k
	}
}

// sweep drops the sessions that have idled out: they are the first of the
// LRU list, so a sweep costs what it drops. (A session past MaxAge but in
// use ends at its next request, or idles out.) st.mu is held.
func (st *sessions) sweep(now time.Time) {
	for e := st.lru.Front(); e != nil; e = st.lru.Front() {
		s := e.Value.(*Session)
		if now.Sub(s.seen) < st.idle && !now.Before(s.seen) {
			return
		}
		st.remove(s)
	}
}

func (st *sessions) len() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.m)
}
