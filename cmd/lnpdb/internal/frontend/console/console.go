// Package console owns the operator console, the admin's pages of lnpdb
// serve's web interface under /console: the table being served, the front
// ends' answers per second and p99 latency over the last hour (drawn as
// SVG on the server, from package history), the node's place in the
// shared update log, its Redis and its last pull, and, with an accounts
// store, the accounts (search, balance, this month's usage, credit with a
// reference, prices, suspend and resume, key revocation), the lookup jobs
// of every account, and the audit log of those changes.
//
// The pages are registered on a [webui.UI] with its admin role check, so a
// customer's session is refused (403) and every POST carries the session's
// CSRF token. They are server-rendered html/template, work without
// JavaScript, and load nothing but the UI's style sheet. Every change is
// made through [billing.Admin], the accounts admin API's own operations,
// under an actor naming the admin key and the remote address, so that the
// store records it in the audit log in the change's transaction.
//
// Without an accounts store (serve --keys FILE) there are no accounts to
// change and the console has no accounts or audit pages: its pages only
// read.
package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/redislimit"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/webui"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/distribute"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/live"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/updatelog"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/history"
	"github.com/lnpdb/lnpdb/format"
)

// Config is what the console shows. Table is required; a nil func or
// pointer leaves its part out (the server runs without it).
type Config struct {
	Table     func() format.Info
	Live      func() live.Status
	Pull      func() distribute.Status
	UpdateLog func() updatelog.Status
	Redis     func() redislimit.Status
	History   *history.Sampler
	// Accounts are the accounts admin operations; nil without an accounts
	// store.
	Accounts *billing.Admin
	Now      func() time.Time
	Logger   *slog.Logger
}

// The console's paths.
const (
	Home      = webui.ConsoleHome
	FrontEnds = Home + "/front-ends"
	Accounts  = Home + "/accounts"
	Audit     = Home + "/audit"
	Jobs      = Home + "/jobs"
)

// storeTimeout bounds the store calls of one page.
const storeTimeout = 5 * time.Second

//go:embed templates
var files embed.FS

type console struct {
	cfg                                                 Config
	ui                                                  *webui.UI
	overview, frontEnds, accounts, account, audit, jobs *webui.Template
}

// Register registers the console's pages on ui.
func Register(ui *webui.UI, cfg Config) error {
	if cfg.Table == nil {
		return errors.New("console: Config.Table is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c := &console{cfg: cfg, ui: ui}
	funcs := template.FuncMap{"when": when, "dollars": func(m billing.Micros) string { return "$" + m.String() }}
	for _, p := range []struct {
		t    **webui.Template
		file string
	}{{&c.overview, "overview"}, {&c.frontEnds, "frontends"}, {&c.accounts, "accounts"}, {&c.account, "account"}, {&c.audit, "audit"}, {&c.jobs, "jobs"}} {
		t, err := ui.Template(funcs, files, "templates/"+p.file+".html")
		if err != nil {
			return err
		}
		*p.t = t
	}
	ui.HandleAdmin("GET "+Home, c.showOverview)
	ui.HandleAdmin("GET "+FrontEnds, c.showFrontEnds)
	if cfg.Accounts != nil {
		ui.HandleAdmin("GET "+Accounts, c.listAccounts)
		ui.HandleAdmin("GET "+Accounts+"/{id}", c.showAccount)
		ui.HandleAdmin("POST "+Accounts+"/{id}/credit", c.credit)
		ui.HandleAdmin("POST "+Accounts+"/{id}/price", c.setPrice)
		ui.HandleAdmin("POST "+Accounts+"/{id}/suspend", c.setStatus(billing.StatusSuspended))
		ui.HandleAdmin("POST "+Accounts+"/{id}/resume", c.setStatus(billing.StatusActive))
		ui.HandleAdmin("POST "+Accounts+"/{id}/keys/{key}/revoke", c.revoke)
		ui.HandleAdmin("GET "+Audit, c.showAudit)
		ui.HandleAdmin("GET "+Jobs, c.showJobs)
	}
	return nil
}

// nav is the console's navigation, with current marked.
func (c *console) nav(current string) []webui.Link {
	links := []webui.Link{{Href: Home, Text: "Overview"}, {Href: FrontEnds, Text: "Front ends"}}
	if c.cfg.Accounts != nil {
		links = append(links, webui.Link{Href: Accounts, Text: "Accounts"}, webui.Link{Href: Jobs, Text: "Jobs"}, webui.Link{Href: Audit, Text: "Audit log"})
	}
	for i := range links {
		links[i].Current = links[i].Href == current
	}
	return links
}

func (c *console) render(w http.ResponseWriter, r *http.Request, t *webui.Template, status int, section, title, errMsg string, data any) {
	c.ui.Render(w, r, t, status, webui.Page{Title: title, Nav: c.nav(section), Error: errMsg, Data: data})
}

// when formats a time for a page: UTC to the second, "—" for none.
func when(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

type overviewData struct {
	Table     format.Info
	Live      *live.Status
	Pull      *distribute.Status
	UpdateLog *updatelog.Status
	Redis     *redislimit.Status
}

func part[T any](fn func() T) *T {
	if fn == nil {
		return nil
	}
	v := fn()
	return &v
}

func (c *console) showOverview(w http.ResponseWriter, r *http.Request, _ *webui.Session) {
	d := overviewData{Table: c.cfg.Table(), Live: part(c.cfg.Live), Pull: part(c.cfg.Pull), UpdateLog: part(c.cfg.UpdateLog), Redis: part(c.cfg.Redis)}
	c.render(w, r, c.overview, http.StatusOK, Home, "Console", "", d)
}

func (c *console) showFrontEnds(w http.ResponseWriter, r *http.Request, _ *webui.Session) {
	var fronts []frontView
	if h := c.cfg.History; h != nil {
		now := c.cfg.Now()
		buf := make([]history.Point, 0, history.Points)
		for _, name := range h.Names() {
			buf, _ = h.Read(name, buf[:0])
			fronts = append(fronts, newFrontView(name, buf, now))
		}
	}
	c.render(w, r, c.frontEnds, http.StatusOK, FrontEnds, "Front ends", "", fronts)
}

// maxListed is how many accounts a search lists.
const maxListed = 200

type accountsData struct {
	Query    string
	Accounts []billing.Account
	More     int // matches beyond those listed
}

func (c *console) listAccounts(w http.ResponseWriter, r *http.Request, _ *webui.Session) {
	ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
	defer cancel()
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	all, err := c.cfg.Accounts.Accounts(ctx)
	if err != nil {
		c.fail(w, r, c.accounts, Accounts, "Accounts", accountsData{Query: q}, err)
		return
	}
	d := accountsData{Query: q}
	lq := strings.ToLower(q)
	for _, a := range all {
		if q != "" && a.ID != q && !strings.Contains(strings.ToLower(a.Name), lq) && !strings.HasPrefix(a.ID, q) {
			continue
		}
		if len(d.Accounts) == maxListed {
			d.More++
			continue
		}
		d.Accounts = append(d.Accounts, a)
	}
	c.render(w, r, c.accounts, http.StatusOK, Accounts, "Accounts", "", d)
}

type accountData struct {
	billing.AccountDetail
	Kinds        []billing.Kind
	UsageLookups int64
	UsageFree    int64
	UsageAmount  billing.Micros
	Month        string
	Audit        []billing.AuditEntry
}

func (c *console) showAccount(w http.ResponseWriter, r *http.Request, _ *webui.Session) {
	c.accountPage(w, r, http.StatusOK, "")
}

// accountPage renders the account of the request's path, with errMsg
// above it.
func (c *console) accountPage(w http.ResponseWriter, r *http.Request, status int, errMsg string) {
	ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
	defer cancel()
	id := r.PathValue("id")
	v, err := c.cfg.Accounts.Account(ctx, id)
	if err != nil {
		if errors.Is(err, billing.ErrNotFound) {
			c.ui.Message(w, r, http.StatusNotFound, "No such account", "There is no account "+strconv.Quote(id)+".")
			return
		}
		c.fail(w, r, c.accounts, Accounts, "Accounts", accountsData{}, err)
		return
	}
	d := accountData{AccountDetail: v, Kinds: billing.Kinds, Month: billing.Month(c.cfg.Now())}
	for _, u := range v.Usage {
		d.UsageLookups += u.Lookups
		d.UsageFree += u.Free
		d.UsageAmount += u.Amount
	}
	if d.Audit, err = c.cfg.Accounts.Audit(ctx, id, 0, 20); err != nil {
		c.fail(w, r, c.accounts, Accounts, "Accounts", accountsData{}, err)
		return
	}
	c.render(w, r, c.account, status, Accounts, "Account "+v.Name, errMsg, d)
}

// fail renders t with the store's failure: a 503, the cause logged.
func (c *console) fail(w http.ResponseWriter, r *http.Request, t *webui.Template, section, title string, data any, err error) {
	c.cfg.Logger.Error("console: accounts store", "path", r.URL.Path, "error", err)
	c.render(w, r, t, http.StatusServiceUnavailable, section, title, "The accounts store failed; the failure has been logged.", data)
}

// actor returns the context of a change: the session's admin key and the
// browser's address, for the audit log, and the store's deadline.
func (c *console) actor(r *http.Request, s *webui.Session) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
	return billing.WithActor(ctx, billing.Actor{Key: s.KeyID, Remote: r.RemoteAddr, Via: "console", At: c.cfg.Now()}), cancel
}

// done answers a change: back to the account with a notice, or the
// account page again with why the change was refused.
func (c *console) done(w http.ResponseWriter, r *http.Request, s *webui.Session, notice string, err error) {
	if err == nil {
		s.SetFlash(notice)
		webui.Redirect(w, r, Accounts+"/"+r.PathValue("id"))
		return
	}
	status := http.StatusBadRequest
	switch {
	case errors.Is(err, billing.ErrNotFound):
		status = http.StatusNotFound
	case errors.Is(err, billing.ErrConflict):
		status = http.StatusConflict
	case errors.Is(err, billing.ErrInvalid), billing.IsBadRequest(err), isRequestError(err):
	default:
		c.cfg.Logger.Error("console: change refused by the accounts store", "path", r.URL.Path, "error", err)
		status, err = http.StatusServiceUnavailable, errors.New("the accounts store failed; the failure has been logged")
	}
	c.accountPage(w, r, status, "Nothing changed: "+err.Error())
}

// requestError is a form that cannot be taken.
type requestError struct{ msg string }

func (e *requestError) Error() string { return e.msg }

func isRequestError(err error) bool {
	var re *requestError
	return errors.As(err, &re)
}

func (c *console) credit(w http.ResponseWriter, r *http.Request, s *webui.Session) {
	amount, err := billing.ParseAmount(strings.TrimSpace(r.PostForm.Get("amount")))
	ref := strings.TrimSpace(r.PostForm.Get("ref"))
	switch {
	case err != nil:
		c.done(w, r, s, "", &requestError{"amount: " + err.Error()})
		return
	case ref == "":
		c.done(w, r, s, "", &requestError{"a credit needs a reference (an invoice or payment id), so that it is applied once"})
		return
	}
	ctx, cancel := c.actor(r, s)
	defer cancel()
	v, err := c.cfg.Accounts.Credit(ctx, r.PathValue("id"), amount, ref)
	notice := fmt.Sprintf("Credited $%s (reference %q); the balance is $%s.", v.Amount, v.Ref, v.Balance)
	if err == nil && !v.Applied {
		notice = fmt.Sprintf("Reference %q was credited before: nothing changed.", v.Ref)
	}
	c.done(w, r, s, notice, err)
}

func (c *console) setPrice(w http.ResponseWriter, r *http.Request, s *webui.Session) {
	kind := billing.Kind(r.PostForm.Get("kind"))
	if !slices.Contains(billing.Kinds, kind) {
		c.done(w, r, s, "", &requestError{"choose a kind of lookup"})
		return
	}
	price, err := billing.ParseAmount(strings.TrimSpace(r.PostForm.Get("price")))
	if err != nil {
		c.done(w, r, s, "", &requestError{"price: " + err.Error()})
		return
	}
	ctx, cancel := c.actor(r, s)
	defer cancel()
	_, err = c.cfg.Accounts.SetPrice(ctx, r.PathValue("id"), kind, price)
	c.done(w, r, s, fmt.Sprintf("The price of %s is now $%s.", kind, price), err)
}

func (c *console) setStatus(st billing.Status) webui.SessionHandler {
	return func(w http.ResponseWriter, r *http.Request, s *webui.Session) {
		ctx, cancel := c.actor(r, s)
		defer cancel()
		_, err := c.cfg.Accounts.SetStatus(ctx, r.PathValue("id"), st)
		notice := "The account is suspended: its keys are refused."
		if st == billing.StatusActive {
			notice = "The account is active again."
		}
		c.done(w, r, s, notice, err)
	}
}

func (c *console) revoke(w http.ResponseWriter, r *http.Request, s *webui.Session) {
	ctx, cancel := c.actor(r, s)
	defer cancel()
	k, err := c.cfg.Accounts.RevokeKey(ctx, r.PathValue("id"), r.PathValue("key"))
	c.done(w, r, s, fmt.Sprintf("Key %s is revoked.", k.ID), err)
}

type auditData struct {
	Account string
	Entries []billing.AuditEntry
	Older   int64 // the before= of the next page; 0 for none
}

// auditPage is how many entries a page of the audit log shows.
const auditPage = 100

func (c *console) showAudit(w http.ResponseWriter, r *http.Request, _ *webui.Session) {
	ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
	defer cancel()
	q := r.URL.Query()
	before, _ := strconv.ParseInt(q.Get("before"), 10, 64)
	d := auditData{Account: strings.TrimSpace(q.Get("account"))}
	var err error
	if d.Entries, err = c.cfg.Accounts.Audit(ctx, d.Account, max(before, 0), auditPage+1); err != nil {
		c.fail(w, r, c.audit, Audit, "Audit log", d, err)
		return
	}
	if len(d.Entries) > auditPage {
		d.Entries = d.Entries[:auditPage]
		d.Older = d.Entries[auditPage-1].ID
	}
	c.render(w, r, c.audit, http.StatusOK, Audit, "Audit log", "", d)
}

type jobsData struct {
	Account string
	Jobs    []billing.Job
	Max     int
	More    bool // there are older jobs than those listed
}

// maxJobs is how many jobs the jobs page lists.
const maxJobs = 200

func (c *console) showJobs(w http.ResponseWriter, r *http.Request, _ *webui.Session) {
	ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
	defer cancel()
	d := jobsData{Account: strings.TrimSpace(r.URL.Query().Get("account")), Max: maxJobs}
	var err error
	if d.Jobs, err = c.cfg.Accounts.Jobs(ctx, d.Account, maxJobs+1); err != nil {
		c.fail(w, r, c.jobs, Jobs, "Lookup jobs", d, err)
		return
	}
	if len(d.Jobs) > maxJobs {
		d.Jobs, d.More = d.Jobs[:maxJobs], true
	}
	c.render(w, r, c.jobs, http.StatusOK, Jobs, "Lookup jobs", "", d)
}
