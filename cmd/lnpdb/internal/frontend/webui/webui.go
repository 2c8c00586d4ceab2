package webui

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/ratelimit"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/delivery"
)

// CSP is the Content-Security-Policy of every response of the web
// interface: nothing inline, nothing from another origin, no framing.
const CSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// MaxFormBytes bounds a form's body.
const MaxFormBytes = 64 << 10

// The defaults of Config.
const (
	DefaultIdleTimeout     = 30 * time.Minute
	DefaultMaxAge          = 12 * time.Hour
	DefaultSignInPerMinute = 10
	DefaultMaxSessions     = 100_000
	DefaultMaxSessionsKey  = 8
)

// The paths of the foundation.
const (
	AccountHome   = "/account"
	AccountSignIn = "/account/sign-in"
	ConsoleHome   = "/console"
	ConsoleSignIn = "/console/sign-in"
	SignOutPath   = "/ui/sign-out"
	StylePath     = "/ui/style.css"
)

// Owns reports whether path belongs to the web interface rather than to
// the API: /account, /console and what lies under them, and /ui/.
func Owns(path string) bool {
	for _, p := range []string{AccountHome, ConsoleHome} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return strings.HasPrefix(path, "/ui/")
}

// Sign-in errors a Realm returns; any other error is shown as
// ErrUnknownKey's.
var (
	ErrUnknownKey = errors.New("that key is not a valid key here, or it has been revoked")
	ErrSuspended  = errors.New("that key's account is suspended; ask the operator")
)

// Realm is one role's keys, as the auth layer holds them.
type Realm struct {
	// SignIn checks the text of a key typed at the sign-in form and
	// returns what the session keeps of it.
	SignIn func(key string) (Identity, error)
	// Valid reports whether the key a session was signed in with still
	// stands (not revoked, its account active); asked on every request.
	Valid func(Identity) bool
}

// Config configures the web interface. A nil realm leaves its role out:
// without Customer there is no /account sign-in, without Admin no console.
type Config struct {
	Customer, Admin *Realm
	// Secure marks cookies Secure and names them __Host-…, and takes
	// forms from https origins only: the server is reached over TLS (its
	// own, or a proxy's). A request that arrives over TLS, or whose URL's
	// scheme is https (X-Forwarded-Proto from a trusted proxy), is treated
	// so anyway.
	Secure bool
	// IdleTimeout ends a session unused this long; MaxAge ends any
	// session this long after sign-in.
	IdleTimeout, MaxAge time.Duration
	// SignInPerMinute bounds sign-in attempts per remote address; per key
	// (the same key text tried again) half as many, at least 1.
	SignInPerMinute int
	// MaxSessions bounds the sessions held in memory: a sign-in past it
	// ends the session unused the longest. MaxSessionsPerKey bounds one
	// key's sessions: a sign-in past it ends the key's oldest.
	MaxSessions, MaxSessionsPerKey int
	// Store, when set, keeps the sessions where every node sees them
	// (MaxSessions then does not apply); nil keeps them in this
	// process's memory.
	Store  SessionStore
	Logger *slog.Logger
	Now    func() time.Time
}

// UI is the web interface: an http.Handler for the paths [Owns] reports.
type UI struct {
	cfg      Config
	mux      *http.ServeMux
	sessions *sessions // in memory, without Config.Store
	table    table     // where the sessions are: sessions, or the store
	limiter  *ratelimit.MemoryLimiter
	layout   *template.Template
	signIn   *Template
	message  *Template
}

// Template is an area's page: its "content" in the base layout.
type Template struct{ t *template.Template }

//go:embed templates static
var files embed.FS

// New returns the web interface with the foundation's routes.
func New(cfg Config) (*UI, error) {
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultMaxAge
	}
	if cfg.SignInPerMinute <= 0 {
		cfg.SignInPerMinute = DefaultSignInPerMinute
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.MaxSessionsPerKey <= 0 {
		cfg.MaxSessionsPerKey = DefaultMaxSessionsKey
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	// escaped shows text stored before a rule refused what it holds (a
	// key's label with a direction override) as what it holds.
	layout, err := template.New("layout.html").Funcs(template.FuncMap{"escaped": billing.Escaped}).ParseFS(files, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	u := &UI{
		cfg:      cfg,
		mux:      http.NewServeMux(),
		sessions: newSessions(cfg.IdleTimeout, cfg.MaxAge, cfg.MaxSessions, cfg.MaxSessionsPerKey),
		limiter:  ratelimit.NewMemoryLimiter(time.Minute, cfg.Now),
		layout:   layout,
	}
	u.table = u.sessions
	if cfg.Store != nil {
		u.table = &sharedSessions{store: cfg.Store, idle: cfg.IdleTimeout, maxAge: cfg.MaxAge, perKey: cfg.MaxSessionsPerKey, log: cfg.Logger}
	}
	if u.signIn, err = u.Template(nil, files, "templates/signin.html"); err != nil {
		return nil, err
	}
	if u.message, err = u.Template(nil, files, "templates/message.html"); err != nil {
		return nil, err
	}
	style, err := files.ReadFile("static/style.css")
	if err != nil {
		return nil, err
	}
	u.mux.HandleFunc("GET "+StylePath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		_, _ = w.Write(style)
	})
	for role, p := range map[Role]struct{ signIn, home string }{RoleCustomer: {AccountSignIn, AccountHome}, RoleAdmin: {ConsoleSignIn, ConsoleHome}} {
		if u.realm(role) == nil {
			continue
		}
		u.mux.HandleFunc("GET "+p.signIn, func(w http.ResponseWriter, r *http.Request) { u.signInForm(w, r, role, http.StatusOK, "") })
		u.mux.HandleFunc("POST "+p.signIn, func(w http.ResponseWriter, r *http.Request) { u.signInPost(w, r, role) })
	}
	u.mux.HandleFunc("POST "+SignOutPath, u.signOut)
	return u, nil
}

// Template parses an area's page templates (files of fsys matching
// patterns, with funcs) over a copy of the base layout. A page template
// defines "content"; it may define "head" too.
func (u *UI) Template(funcs template.FuncMap, fsys fs.FS, patterns ...string) (*Template, error) {
	t, err := u.layout.Clone()
	if err != nil {
		return nil, err
	}
	if funcs != nil {
		t.Funcs(funcs)
	}
	if t, err = t.ParseFS(fsys, patterns...); err != nil {
		return nil, err
	}
	return &Template{t}, nil
}

// Page is what the base layout renders.
type Page struct {
	Title string
	// Nav are the area's links, shown in the header.
	Nav []Link
	// Error is shown above the content, as an alert.
	Error string
	// Data is the area's, read by its "content" template.
	Data any
	// Session and Flash are set by Render.
	Session *Session
	Flash   string
}

// Link is a link of a page's navigation.
type Link struct {
	Href, Text string
	Current    bool
}

// CSRF returns the session's CSRF token ("" on a page with no session).
func (p Page) CSRF() string {
	if p.Session == nil {
		return ""
	}
	return p.Session.CSRF()
}

// Render writes p in the layout with t's content; status is the answer's
// status. A template that fails answers 500, never half a page. It reports
// whether the page was delivered (delivery.Write): what a page shows of a
// charged lookup is charged only then.
func (u *UI) Render(w http.ResponseWriter, r *http.Request, t *Template, status int, p Page) (delivered bool) {
	if s := SessionOf(r); s != nil {
		p.Session = s
		p.Flash = s.popFlash()
	}
	var b bytes.Buffer
	if err := t.t.ExecuteTemplate(&b, "layout", p); err != nil {
		u.cfg.Logger.Error("web page", "path", r.URL.Path, "error", err)
		http.Error(w, "the page could not be made; the failure has been logged", http.StatusInternalServerError)
		return false
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	return delivery.Write(w, r, status, b.Bytes())
}

type messageData struct{ Text, Link, LinkText string }

// Message renders a page that says msg, with status, and links to the
// home page of the request's session (or to sign-in without one).
func (u *UI) Message(w http.ResponseWriter, r *http.Request, status int, title, msg string) {
	d := messageData{Text: msg, Link: AccountSignIn, LinkText: "Sign in"}
	if s := SessionOf(r); s != nil {
		d.Link, d.LinkText = homePath(s.Role), "Back"
	} else if u.cfg.Customer == nil {
		d.Link = ConsoleSignIn
	}
	u.Render(w, r, u.message, status, Page{Title: title, Data: d})
}

// Redirect answers 303 See Other to path: after a form is taken, the
// browser GETs the next page.
func Redirect(w http.ResponseWriter, r *http.Request, path string) {
	http.Redirect(w, r, path, http.StatusSeeOther)
}

type sessionKey struct{}

// SessionOf returns the session of a request a role handler serves.
func SessionOf(r *http.Request) *Session {
	s, _ := r.Context().Value(sessionKey{}).(*Session)
	return s
}

// SessionHandler serves a request of a session.
type SessionHandler func(http.ResponseWriter, *http.Request, *Session)

// HandleCustomer serves pattern for customers' sessions only (see the
// package doc).
func (u *UI) HandleCustomer(pattern string, h SessionHandler) { u.handle(pattern, RoleCustomer, h) }

// HandleAdmin serves pattern for admins' sessions only (see the package
// doc).
func (u *UI) HandleAdmin(pattern string, h SessionHandler) { u.handle(pattern, RoleAdmin, h) }

// UploadHandler serves a multipart form of a session: mr reads the form's
// parts after its CSRF token.
type UploadHandler func(w http.ResponseWriter, r *http.Request, s *Session, mr *multipart.Reader)

// HandleCustomerUpload serves pattern, a POST of a multipart/form-data
// form (a file upload), for customers' sessions only. The body, at most
// maxBytes, is not buffered: the form's first part must be its "csrf"
// field, checked before h runs and reads the rest as a stream, so that
// nothing of a forged upload is read past its first part.
func (u *UI) HandleCustomerUpload(pattern string, maxBytes int64, h UploadHandler) {
	u.handleSession(pattern, RoleCustomer, func(w http.ResponseWriter, r *http.Request, s *Session) {
		mr, why := u.checkUpload(w, r, s, maxBytes)
		if why != "" {
			u.Message(w, r, http.StatusForbidden, "Refused", why)
			return
		}
		h(w, r, s, mr)
	})
}

// maxTokenPart bounds the csrf part of an upload.
const maxTokenPart = 256

// checkUpload checks an upload of s as checkForm checks a form, its token
// the first part of the multipart body, and returns the reader of the
// parts after it, or why the upload is refused.
func (u *UI) checkUpload(w http.ResponseWriter, r *http.Request, s *Session, maxBytes int64) (*multipart.Reader, string) {
	if why := u.sameSite(r); why != "" {
		return nil, why
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBytes)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, "The form could not be read: it must be sent as multipart/form-data."
	}
	part, err := mr.NextPart()
	if err != nil || part.FormName() != "csrf" {
		return nil, "The form's CSRF token is missing or wrong: reload the page and try again."
	}
	tok, err := io.ReadAll(io.LimitReader(part, maxTokenPart))
	if err != nil || subtle.ConstantTimeCompare(tok, []byte(s.csrf)) != 1 {
		return nil, "The form's CSRF token is missing or wrong: reload the page and try again."
	}
	return mr, ""
}

func (u *UI) handle(pattern string, role Role, h SessionHandler) {
	u.handleSession(pattern, role, func(w http.ResponseWriter, r *http.Request, s *Session) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if why := u.checkForm(w, r, s); why != "" {
				u.Message(w, r, http.StatusForbidden, "Refused", why)
				return
			}
		}
		h(w, r, s)
	})
}

// handleSession serves pattern with h for a live session of role: without
// one, a GET is sent to the role's sign-in page and anything else refused.
func (u *UI) handleSession(pattern string, role Role, h SessionHandler) {
	u.mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := u.session(w, r)
		switch {
		case s == nil && (r.Method == http.MethodGet || r.Method == http.MethodHead):
			Redirect(w, r, signInPath(role))
			return
		case s == nil:
			u.Message(w, r, http.StatusForbidden, "Signed out", "Your session has ended. Sign in again.")
			return
		case s.Role != role:
			u.Message(w, r, http.StatusForbidden, "Not for this key", "This page is for "+role.String()+"s; this browser is signed in with "+s.Role.article()+" key.")
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), sessionKey{}, s))
		h(w, r, s)
	}))
}

func signInPath(role Role) string {
	if role == RoleAdmin {
		return ConsoleSignIn
	}
	return AccountSignIn
}

func homePath(role Role) string {
	if role == RoleAdmin {
		return ConsoleHome
	}
	return AccountHome
}

func (u *UI) realm(role Role) *Realm {
	if role == RoleAdmin {
		return u.cfg.Admin
	}
	return u.cfg.Customer
}

// secure reports whether the request's site is https: cookies are then
// Secure and named __Host-…, and forms are taken from https origins only.
// It is, under Config.Secure, over TLS, or when the trusted proxy the
// request came through says the client reached it over TLS (package
// httpapi's conventions set the URL's scheme from X-Forwarded-Proto).
func (u *UI) secure(r *http.Request) bool {
	return u.cfg.Secure || r.TLS != nil || r.URL.Scheme == "https"
}

func (u *UI) cookieName(r *http.Request) string {
	if u.secure(r) {
		return "__Host-lnpdb_session"
	}
	return "lnpdb_session"
}

// signInCookie names the pre-session cookie: the sign-in form's token.
func (u *UI) signInCookie(r *http.Request) string {
	if u.secure(r) {
		return "__Host-lnpdb_signin"
	}
	return "lnpdb_signin"
}

// signInTTL is how long a sign-in form's token is taken.
const signInTTL = time.Hour

// signInToken returns the browser's pre-session token, set now (a cookie
// for signInTTL) when it has none: the sign-in form carries it, and a
// sign-in is taken only with the same in the form and the cookie (a
// double submit), which another site's form cannot make, whatever the
// browser tells of origins.
func (u *UI) signInToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(u.signInCookie(r)); err == nil && len(c.Value) == tokenLen {
		return c.Value
	}
	tok := token()
	http.SetCookie(w, &http.Cookie{
		Name: u.signInCookie(r), Value: tok, Path: "/", MaxAge: int(signInTTL / time.Second),
		HttpOnly: true, Secure: u.secure(r), SameSite: http.SameSiteStrictMode,
	})
	return tok
}

// signInTokenOK reports whether the sign-in form r posts carries the
// browser's pre-session token.
func (u *UI) signInTokenOK(r *http.Request) bool {
	c, err := r.Cookie(u.signInCookie(r))
	return err == nil && len(c.Value) == tokenLen &&
		subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(c.Value)) == 1
}

// session returns the request's live session whose key still stands, nil
// for none; a session whose key no longer stands is ended and its cookie
// cleared.
func (u *UI) session(w http.ResponseWriter, r *http.Request) *Session {
	c, err := r.Cookie(u.cookieName(r))
	if err != nil {
		return nil
	}
	s := u.table.get(c.Value, u.cfg.Now())
	if s == nil {
		return nil
	}
	if realm := u.realm(s.Role); realm == nil || !realm.Valid(s.Identity) {
		u.table.end(s)
		u.setCookie(w, r, "", -1)
		return nil
	}
	return s
}

func (u *UI) setCookie(w http.ResponseWriter, r *http.Request, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: u.cookieName(r), Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: u.secure(r), SameSite: http.SameSiteStrictMode,
	})
}

// sameSite says why a state-changing request is not from this site, ""
// when it is or the browser does not say. Under Referrer-Policy
// no-referrer a browser sends a form's Origin as "null": that is taken
// only with Sec-Fetch-Site same-origin beside it.
func (u *UI) sameSite(r *http.Request) string {
	site := r.Header.Get("Sec-Fetch-Site")
	if site != "" && site != "same-origin" {
		return "The request came from another site (Sec-Fetch-Site: " + site + ")."
	}
	if origin := r.Header.Get("Origin"); origin == "null" && site != "same-origin" {
		return "The request came from an opaque origin."
	} else if origin != "" && origin != "null" {
		scheme := "http://"
		if u.secure(r) {
			scheme = "https://"
		}
		if origin != scheme+r.Host {
			return "The request came from another origin."
		}
	}
	return ""
}

// checkForm checks a state-changing request of s: from this site, and
// carrying s's CSRF token. It says why not, or "".
func (u *UI) checkForm(w http.ResponseWriter, r *http.Request, s *Session) string {
	if why := u.sameSite(r); why != "" {
		return why
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxFormBytes)
	if err := r.ParseForm(); err != nil {
		return "The form could not be read."
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(s.csrf)) != 1 {
		return "The form's CSRF token is missing or wrong: reload the page and try again."
	}
	return ""
}

type signInData struct {
	Action, Home, Who, Token string
}

func (u *UI) signInForm(w http.ResponseWriter, r *http.Request, role Role, status int, msg string) {
	if status == http.StatusOK {
		if s := u.session(w, r); s != nil && s.Role == role {
			Redirect(w, r, homePath(role))
			return
		}
	}
	who := "an API key of your account"
	title := "Sign in to your account"
	if role == RoleAdmin {
		who, title = "an admin key", "Sign in to the console"
	}
	u.Render(w, r, u.signIn, status, Page{Title: title, Error: msg, Data: signInData{Action: signInPath(role), Home: homePath(role), Who: who, Token: u.signInToken(w, r)}})
}

func (u *UI) signInPost(w http.ResponseWriter, r *http.Request, role Role) {
	if why := u.sameSite(r); why != "" {
		u.Message(w, r, http.StatusForbidden, "Refused", why)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxFormBytes)
	if err := r.ParseForm(); err != nil {
		u.signInForm(w, r, role, http.StatusBadRequest, "The form could not be read.")
		return
	}
	if !u.signInTokenOK(r) {
		u.signInForm(w, r, role, http.StatusForbidden, "The sign-in form has expired or did not come from this site: sign in again.")
		return
	}
	key := strings.TrimSpace(r.PostForm.Get("key"))
	if key == "" {
		u.signInForm(w, r, role, http.StatusBadRequest, "Type or paste a key.")
		return
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	sum := sha256.Sum256([]byte(key))
	for _, c := range []struct {
		id    string
		limit int
	}{{"addr:" + host, u.cfg.SignInPerMinute}, {"key:" + hex.EncodeToString(sum[:]), max(u.cfg.SignInPerMinute/2, 1)}} {
		d, _ := u.limiter.AllowN(r.Context(), c.id, c.limit, 1)
		if !d.Allowed {
			secs := int(d.Reset.Round(time.Second) / time.Second)
			w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
			u.signInForm(w, r, role, http.StatusTooManyRequests, "Too many sign-in attempts; wait "+strconv.Itoa(max(secs, 1))+" seconds and try again.")
			return
		}
	}
	id, err := u.realm(role).SignIn(key)
	if err != nil {
		msg := ErrUnknownKey.Error()
		if errors.Is(err, ErrSuspended) {
			msg = ErrSuspended.Error()
		}
		u.cfg.Logger.Info("web sign-in refused", "role", role.String(), "remote", host, "reason", msg)
		u.signInForm(w, r, role, http.StatusUnauthorized, msg)
		return
	}
	// Whatever session the browser had ends: a new id is made at every
	// sign-in, so an id planted before it is never signed in.
	if c, err := r.Cookie(u.cookieName(r)); err == nil {
		if old := u.table.get(c.Value, u.cfg.Now()); old != nil {
			u.table.end(old)
		}
	}
	cookie, _, err := u.table.create(role, id, u.cfg.Now())
	if err != nil {
		u.cfg.Logger.Error("web sign-in: the session could not be kept", "role", role.String(), "error", err)
		u.signInForm(w, r, role, http.StatusServiceUnavailable, "The sign-in could not be completed; the failure has been logged. Try again in a moment.")
		return
	}
	u.setCookie(w, r, cookie, int(u.cfg.MaxAge/time.Second))
	Redirect(w, r, homePath(role))
}

func (u *UI) signOut(w http.ResponseWriter, r *http.Request) {
	s := u.session(w, r)
	if s == nil {
		Redirect(w, r, AccountSignIn)
		return
	}
	if why := u.checkForm(w, r, s); why != "" {
		u.Message(w, r, http.StatusForbidden, "Refused", why)
		return
	}
	u.table.end(s)
	u.setCookie(w, r, "", -1)
	Redirect(w, r, signInPath(s.Role))
}

// EndSessionsOf ends every session signed in with the key of hash h (its
// key was revoked here: the sessions would end at their next request
// anyway).
func (u *UI) EndSessionsOf(h [32]byte) { u.table.endKey(h) }

// ServeHTTP implements http.Handler: the security headers, then the page.
func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if _, pattern := u.mux.Handler(r); pattern == "" {
		if allow := u.allowed(r); allow != "" {
			h.Set("Allow", allow)
			u.Message(w, r, http.StatusMethodNotAllowed, "Method not allowed", "This page takes "+allow+", not "+r.Method+".")
			return
		}
		u.Message(w, r, http.StatusNotFound, "Not found", "There is no page here.")
		return
	}
	u.mux.ServeHTTP(w, r)
}

// allowed returns the methods r's path is served with ("GET, HEAD, POST"),
// "" when none: there is no page there.
func (u *UI) allowed(r *http.Request) string {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := u.mux.Handler(probe); pattern != "" {
			allow = append(allow, m)
		}
	}
	return strings.Join(allow, ", ")
}
