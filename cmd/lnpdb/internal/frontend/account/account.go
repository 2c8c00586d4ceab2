// Package account owns the customer's web pages under /account, built on
// package webui: the account (status, balance, this month's free lookups,
// prices, the rate limit), its usage by day and kind over the last 90 days
// (an SVG chart drawn on the server, the same numbers in a table, and a
// CSV download), its API keys (labels, limits, creation, revocation, a new
// key shown once), its lookup jobs (a list uploaded, progress, results,
// cancel and resume, the webhook secret; jobs.go) and a lookup playground. Every page reads the accounts
// store (package billing) through the same operations as the JSON API and
// the operator's commands; a customer reaches only the account of the key
// the session was signed in with.
//
//	GET  /account                      the account and its usage
//	GET  /account/usage.csv            the usage ledger's rows of the last 90 days
//	GET  /account/keys                 the account's keys
//	POST /account/keys                 a new key {label, rate_limit}: shown once
//	POST /account/keys/{id}/revoke     revokes one of the account's keys
//	GET  /account/playground           the lookup form
//	POST /account/playground           one REST lookup with the key typed in the form
//	GET  /account/jobs                  the account's lookup jobs, with Config.Jobs (jobs.go)
package account

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/jobsapi"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/webui"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/delivery"
)

// Limits of what a customer may set.
const (
	// MaxLabel bounds a key's label, in characters.
	MaxLabel = 100
	// MaxKeys bounds the valid keys of an account made here; the operator
	// (lnpdb key new, the admin API) is not bound by it.
	MaxKeys = 25
	// maxAnswer bounds a playground answer kept for the page.
	maxAnswer = 64 << 10
)

// Config configures the account pages. UI, Store, Engine and API are
// required.
type Config struct {
	UI     *webui.UI
	Store  billing.Store
	Engine *billing.Engine
	// API is the lookup API's handler: the playground's lookups go
	// through it, authenticated, rate-limited and charged as any other.
	API http.Handler
	// Jobs, when set, are the lookup jobs API's operations: the jobs page
	// makes, lists, cancels and resumes jobs and serves their results
	// through them, and manages the webhook secret. Nil leaves the page
	// out.
	Jobs *jobsapi.API
	// DefaultLimit is the rate limit (lookups per minute) of a key
	// without one of its own: serve's --rate-limit.
	DefaultLimit int
	// NewKey returns a new API key's text and its SHA-256.
	NewKey func() (string, [32]byte)
	// Changed is called after a key is added or revoked, so that the
	// engine serves the change at once.
	Changed func(context.Context)
	// StoreTimeout bounds the store calls of one page.
	StoreTimeout time.Duration
	Logger       *slog.Logger
	Now          func() time.Time
}

type pages struct {
	cfg                                      Config
	home, keys, play, newKeyTp, jobs, secret *webui.Template
}

//go:embed templates
var files embed.FS

// Register registers the account pages on cfg.UI.
func Register(cfg Config) error {
	if cfg.UI == nil || cfg.Store == nil || cfg.Engine == nil || cfg.API == nil || cfg.NewKey == nil {
		return errors.New("account: Config needs UI, Store, Engine, API and NewKey")
	}
	if cfg.DefaultLimit <= 0 {
		return errors.New("account: Config.DefaultLimit must be positive")
	}
	if cfg.StoreTimeout <= 0 {
		cfg.StoreTimeout = billing.DefaultStoreTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Changed == nil {
		cfg.Changed = func(context.Context) {}
	}
	p := &pages{cfg: cfg}
	var err error
	for _, t := range []struct {
		dst  **webui.Template
		file string
	}{{&p.home, "home.html"}, {&p.keys, "keys.html"}, {&p.play, "playground.html"}, {&p.newKeyTp, "newkey.html"}, {&p.jobs, "jobs.html"}, {&p.secret, "secret.html"}} {
		if *t.dst, err = cfg.UI.Template(funcs, files, "templates/"+t.file); err != nil {
			return err
		}
	}
	ui := cfg.UI
	ui.HandleCustomer("GET "+webui.AccountHome, p.showHome)
	ui.HandleCustomer("GET /account/usage.csv", p.usageCSV)
	ui.HandleCustomer("GET /account/keys", p.showKeys)
	ui.HandleCustomer("POST /account/keys", p.createKey)
	ui.HandleCustomer("POST /account/keys/{id}/revoke", p.revokeKey)
	ui.HandleCustomer("GET /account/playground", p.showPlayground)
	ui.HandleCustomer("POST /account/playground", p.lookup)
	if j := cfg.Jobs; j != nil {
		ui.HandleCustomer("GET "+JobsPath, p.showJobs)
		ui.HandleCustomerUpload("POST "+JobsPath, maxUploadForm, p.createJob)
		ui.HandleCustomer("GET "+JobsPath+"/{id}/results.ndjson", p.jobResults(false))
		ui.HandleCustomer("GET "+JobsPath+"/{id}/results.csv", p.jobResults(true))
		ui.HandleCustomer("POST "+JobsPath+"/{id}/cancel", p.jobAction(j.Cancel, "canceled"))
		ui.HandleCustomer("POST "+JobsPath+"/{id}/resume", p.jobAction(j.Resume, "resumed"))
		ui.HandleCustomer("POST /account/webhook-secret", p.rotateSecret)
	}
	return nil
}

var funcs = map[string]any{
	"usd": func(m billing.Micros) string { return "$" + m.String() },
	"time": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"at": func(s []int64, i int) int64 { return s[i] },
}

func (p *pages) nav(current string) []webui.Link {
	links := []webui.Link{{Href: webui.AccountHome, Text: "Account"}, {Href: "/account/keys", Text: "Keys"}}
	if p.cfg.Jobs != nil {
		links = append(links, webui.Link{Href: JobsPath, Text: "Jobs"})
	}
	links = append(links, webui.Link{Href: "/account/playground", Text: "Playground"})
	for i := range links {
		links[i].Current = links[i].Href == current
	}
	return links
}

// failed answers a page whose store call failed: 503, logged.
func (p *pages) failed(w http.ResponseWriter, r *http.Request, err error) {
	p.cfg.Logger.Error("account page", "path", r.URL.Path, "error", err)
	p.cfg.UI.Message(w, r, http.StatusServiceUnavailable, "Unavailable", "The accounts store did not answer; the failure has been logged. Try again in a moment.")
}

func (p *pages) ctx(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), p.cfg.StoreTimeout)
}

// audited returns ctx for a change the session's key holder makes: the
// store records it in its audit log, made through "account" by the key.
func (p *pages) audited(ctx context.Context, r *http.Request, s *webui.Session) context.Context {
	return billing.WithActor(ctx, billing.Actor{Key: s.KeyID, Remote: r.RemoteAddr, Via: "account", At: p.cfg.Now()})
}

type homeData struct {
	Account  billing.Account
	Report   billing.UsageReport
	FreeTier int
	Limit    int
	OwnLimit bool
	Usage    usage
}

func (p *pages) showHome(w http.ResponseWriter, r *http.Request, s *webui.Session) {
	ctx, cancel := p.ctx(r)
	defer cancel()
	acc, err := p.cfg.Store.Account(ctx, s.AccountID)
	if err != nil {
		p.failed(w, r, err)
		return
	}
	rep, err := p.cfg.Engine.AccountUsage(ctx, s.AccountID)
	if err != nil {
		p.failed(w, r, err)
		return
	}
	u, err := p.usage(ctx, s.AccountID)
	if err != nil {
		p.failed(w, r, err)
		return
	}
	d := homeData{Account: acc, Report: rep, FreeTier: billing.FreeTier, Limit: p.limit(s.Limit), OwnLimit: s.Limit > 0, Usage: u}
	p.cfg.UI.Render(w, r, p.home, http.StatusOK, webui.Page{Title: "Your account", Nav: p.nav(webui.AccountHome), Data: d})
}

func (p *pages) limit(own int) int {
	if own > 0 {
		return own
	}
	return p.cfg.DefaultLimit
}

// rows returns the account's ledger rows of the window ending today.
func (p *pages) rows(ctx context.Context, account string) ([]billing.UsageRow, time.Time, time.Time, error) {
	first, last := usageWindow(p.cfg.Now())
	var rows []billing.UsageRow
	for _, m := range months(first, last) {
		rs, err := p.cfg.Store.Usage(ctx, account, m)
		if err != nil {
			return nil, first, last, err
		}
		for _, r := range rs {
			if d := r.Day; d >= first.Format("2006-01-02") && d <= last.Format("2006-01-02") {
				rows = append(rows, r)
			}
		}
	}
	return rows, first, last, nil
}

func (p *pages) usage(ctx context.Context, account string) (usage, error) {
	rows, first, last, err := p.rows(ctx, account)
	if err != nil {
		return usage{}, err
	}
	return summarize(rows, first, last), nil
}

func (p *pages) usageCSV(w http.ResponseWriter, r *http.Request, s *webui.Session) {
	ctx, cancel := p.ctx(r)
	defer cancel()
	rows, first, last, err := p.rows(ctx, s.AccountID)
	if err != nil {
		p.failed(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="lnpdb-usage-%s-%s.csv"`, first.Format("20060102"), last.Format("20060102")))
	_, _ = w.Write(billing.UsageCSV(rows))
}

// keyView is a key as the keys page lists it.
type keyView struct {
	billing.KeyRecord
	Limit   int
	Own     bool // the key's own limit, not the default
	Current bool // the key this session signed in with
}

type keysData struct {
	Keys         []keyView
	Valid        int
	MaxKeys      int
	MaxLabel     int
	SessionLimit int
	Label        string // the form's, when it was refused
	RateLimit    string
}

func (p *pages) keysData(ctx context.Context, s *webui.Session) (keysData, error) {
	keys, err := p.cfg.Store.Keys(ctx, s.AccountID)
	if err != nil {
		return keysData{}, err
	}
	d := keysData{MaxKeys: MaxKeys, MaxLabel: MaxLabel, SessionLimit: p.limit(s.Limit)}
	for _, k := range keys {
		if k.Revoked.IsZero() {
			d.Valid++
		}
		d.Keys = append(d.Keys, keyView{KeyRecord: k, Limit: p.limit(k.Limit), Own: k.Limit > 0, Current: k.Hash == s.KeyHash})
	}
	return d, nil
}

func (p *pages) showKeys(w http.ResponseWriter, r *http.Request, s *webui.Session) {
	p.renderKeys(w, r, s, http.StatusOK, "", keysData{})
}

func (p *pages) renderKeys(w http.ResponseWriter, r *http.Request, s *webui.Session, status int, msg string, form keysData) {
	ctx, cancel := p.ctx(r)
	defer cancel()
	d, err := p.keysData(ctx, s)
	if err != nil {
		p.failed(w, r, err)
		return
	}
	d.Label, d.RateLimit = form.Label, form.RateLimit
	p.cfg.UI.Render(w, r, p.keys, status, webui.Page{Title: "API keys", Nav: p.nav("/account/keys"), Error: msg, Data: d})
}

// checkLabel says what is wrong with a key's label, "" when nothing.
func checkLabel(label string) string {
	switch {
	case !utf8.ValidString(label):
		return "The label must be text (UTF-8)."
	case utf8.RuneCountInString(label) > MaxLabel:
		return fmt.Sprintf("The label must be at most %d characters.", MaxLabel)
	case !billing.PlainText(label):
		return "The label must not hold control or format characters (tabs, new lines, direction marks)."
	}
	return ""
}

type newKeyData struct {
	Key    string
	Record billing.KeyRecord
	Limit  int
}

func (p *pages) createKey(w http.ResponseWriter, r *http.Request, s *webui.Session) {
	form := keysData{Label: strings.TrimSpace(r.PostForm.Get("label")), RateLimit: strings.TrimSpace(r.PostForm.Get("rate_limit"))}
	if why := checkLabel(form.Label); why != "" {
		p.renderKeys(w, r, s, http.StatusBadRequest, why, form)
		return
	}
	// A new key's limit is at most the signed-in key's: raising limits is
	// the operator's decision. Left empty, it is the signed-in key's.
	limit := s.Limit
	ceiling := p.limit(s.Limit)
	if form.RateLimit != "" {
		n, err := strconv.Atoi(form.RateLimit)
		if err != nil || n < 1 || n > ceiling {
			p.renderKeys(w, r, s, http.StatusBadRequest, fmt.Sprintf("The rate limit must be a whole number of lookups per minute from 1 to %d (this key's), or empty.", ceiling), form)
			return
		}
		limit = n
	}
	ctx, cancel := p.ctx(r)
	defer cancel()
	text, h := p.cfg.NewKey()
	k, err := p.cfg.Store.AddKeyCapped(p.audited(ctx, r, s), billing.KeyRecord{AccountID: s.AccountID, Label: form.Label, Hash: h, Limit: limit}, p.cfg.Now(), MaxKeys)
	if errors.Is(err, billing.ErrKeyCap) {
		p.renderKeys(w, r, s, http.StatusConflict, fmt.Sprintf("The account has %d valid keys, the most that can be made here: revoke one first, or ask the operator.", MaxKeys), form)
		return
	}
	if err != nil {
		p.failed(w, r, err)
		return
	}
	p.cfg.Changed(ctx)
	p.cfg.Logger.Info("key added from the account page", "account", s.AccountID, "key", k.ID, "by_key", s.KeyID)
	p.cfg.UI.Render(w, r, p.newKeyTp, http.StatusCreated, webui.Page{Title: "Your new key", Nav: p.nav(""), Data: newKeyData{Key: text, Record: k, Limit: p.limit(k.Limit)}})
}

func (p *pages) revokeKey(w http.ResponseWriter, r *http.Request, s *webui.Session) {
	ctx, cancel := p.ctx(r)
	defer cancel()
	k, err := p.cfg.Store.RevokeKey(p.audited(ctx, r, s), s.AccountID, r.PathValue("id"), p.cfg.Now())
	if errors.Is(err, billing.ErrNotFound) {
		p.renderKeys(w, r, s, http.StatusNotFound, "No such key in this account.", keysData{})
		return
	}
	if err != nil {
		p.failed(w, r, err)
		return
	}
	p.cfg.Changed(ctx)
	p.cfg.UI.EndSessionsOf(k.Hash)
	p.cfg.Logger.Info("key revoked from the account page", "account", s.AccountID, "key", k.ID, "by_key", s.KeyID)
	if k.Hash == s.KeyHash {
		webui.Redirect(w, r, webui.AccountSignIn)
		return
	}
	s.SetFlash("Key " + k.ID + " is revoked: the API refuses it from now on.")
	webui.Redirect(w, r, "/account/keys")
}

// The playground's lookups: the REST endpoint and the body's flags.
var lookups = []struct {
	Value, Text, Path string
	Enhanced, Msg     bool
}{
	{"lrn", "LRN", "/api/v1/lrn", false, false},
	{"lrn_enhanced", "LRN, enhanced (carrier, location)", "/api/v1/lrn", true, false},
	{"lrn_messaging", "LRN with the messaging provider", "/api/v1/lrn", false, true},
	{"cnam", "Caller name (CNAM)", "/api/v1/cnam", false, false},
	{"messaging", "Messaging provider", "/api/v1/messaging", false, false},
	{"trust", "Trust", "/api/v1/trust", false, false},
}

type playData struct {
	Lookups []struct {
		Value, Text, Path string
		Enhanced, Msg     bool
	}
	Number, Kind string
	Status       int
	Answer       string
	Curl         string
}

func (p *pages) showPlayground(w http.ResponseWriter, r *http.Request, s *webui.Session) {
	p.cfg.UI.Render(w, r, p.play, http.StatusOK, webui.Page{Title: "Lookup playground", Nav: p.nav("/account/playground"), Data: playData{Lookups: lookups, Number: "12025550123", Kind: "lrn"}})
}

// validNumber reports whether s may go into the example curl line: the
// characters people write phone numbers with, so that it needs no
// quoting beyond the line's own single quotes.
func validNumber(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789+-(). ", c) {
			return false
		}
	}
	return true
}

func (p *pages) lookup(w http.ResponseWriter, r *http.Request, s *webui.Session) {
	d := playData{Lookups: lookups, Number: strings.TrimSpace(r.PostForm.Get("number")), Kind: r.PostForm.Get("kind")}
	key := strings.TrimSpace(r.PostForm.Get("key"))
	page := webui.Page{Title: "Lookup playground", Nav: p.nav("/account/playground"), Data: &d}
	li := -1
	for i, l := range lookups {
		if l.Value == d.Kind {
			li = i
		}
	}
	switch {
	case li < 0:
		page.Error = "Choose a kind of lookup."
	case !validNumber(d.Number):
		page.Error = "Type a phone number: digits, with + - ( ) . or spaces if you like, at most 32 characters."
	case key == "":
		page.Error = "Paste your API key: the lookup is made with it, and charged as any other."
	}
	if page.Error != "" {
		p.cfg.UI.Render(w, r, p.play, http.StatusBadRequest, page)
		return
	}
	l := lookups[li]
	body := map[string]any{"phone_number": d.Number}
	if l.Enhanced {
		body["include_enhanced_lrn"] = true
	}
	if l.Msg {
		body["messaging_lookup"] = true
	}
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, l.Path, bytes.NewReader(b))
	if err != nil {
		p.failed(w, r, err)
		return
	}
	req.RemoteAddr = r.RemoteAddr
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	if id := r.Header.Get("X-Request-Id"); id != "" {
		req.Header.Set("X-Request-Id", id)
	}
	// The answer is delivered with the page that shows it: its payment is
	// settled once the page is written, charged only if the page was
	// delivered.
	rec := &recorder{header: http.Header{}}
	delivered := false
	defer func() {
		if rec.settle != nil {
			rec.settle(delivered)
		}
	}()
	p.cfg.API.ServeHTTP(rec, req)
	d.Status = rec.status
	if d.Status == 0 {
		d.Status = http.StatusOK
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, rec.body.Bytes(), "", "  ") == nil {
		d.Answer = pretty.String()
	} else {
		d.Answer = rec.body.String()
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	d.Curl = fmt.Sprintf("curl -s %s://%s%s \\\n  -H 'Authorization: Bearer <API_KEY>' -H 'Content-Type: application/json' \\\n  -d '%s'", scheme, r.Host, l.Path, b)
	delivered = p.cfg.UI.Render(w, r, p.play, http.StatusOK, page)
}

// recorder keeps the API's answer to a playground lookup: its status,
// and its body up to maxAnswer bytes (an answer longer is cut, and still
// delivered: the page shows it). It is a delivery.Relay: the answer's
// payments are settled with the page.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	settle func(delivered bool)
}

var _ delivery.Relay = (*recorder)(nil)

// Relay implements delivery.Relay.
func (w *recorder) Relay(settle func(delivered bool)) { w.settle = settle }

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if room := maxAnswer - w.body.Len(); room > 0 {
		w.body.Write(b[:min(len(b), room)])
	}
	return len(b), nil
}
