// Package jobsapi serves lookup jobs over HTTP: lists of up to a million
// numbers uploaded as JSON or CSV, their progress, their results streamed
// in input order as NDJSON (each line the body the single-number endpoint
// answers) or CSV, cancel and resume, and the account's webhook secret.
//
//	POST   /api/v1/jobs               a job: JSON {phone_numbers, include_enhanced_lrn, messaging_lookup, kind, webhook_url} or text/csv (options as query parameters) → 202
//	GET    /api/v1/jobs               the account's jobs, newest first
//	GET    /api/v1/jobs/{id}          a job's status
//	DELETE /api/v1/jobs/{id}          cancel
//	POST   /api/v1/jobs/{id}/resume   resume a job stopped insufficient_balance
//	GET    /api/v1/jobs/{id}/results  application/x-ndjson or text/csv
//	POST   /api/v1/webhook-secret     create or rotate the signing secret (shown once)
//
// The routes are served by httpapi's handler ([httpapi.KeyedHandler]),
// behind its key check and rate limit: a request counts one against the
// key's per-minute limit whatever its numbers; numbers are limited per
// account by [billing.JobLimits]. Jobs, their answers and their charges
// live in the accounts store ([billing.Jobs]); a worker (node/jobs) answers
// them.
package jobsapi

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/httpapi"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/webhook"
)

// Config configures the jobs API.
type Config struct {
	// Store keeps the jobs (the accounts store).
	Store billing.Jobs
	// AccountOf returns the account of an authenticated key.
	AccountOf func(auth.Key) (string, bool)
	// Limits are every account's limits on making jobs.
	Limits billing.JobLimits
	// AllowPrivateWebhooks lets webhook_url be http:// and name a
	// private, loopback or link-local address (serve
	// --webhooks-allow-private).
	AllowPrivateWebhooks bool
	// Queued, when set, is told a job was made (to wake a worker).
	Queued func()
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives the store's failures; nil discards them.
	Logger *slog.Logger
	// StoreTimeout bounds each of a request's short store calls (a job's
	// status, the list, cancel, resume, the webhook secret), so that a
	// frozen store answers 503 rather than holding the request; 0: only
	// the request's own context. Making a job and streaming its results
	// are bounded by the request's context.
	StoreTimeout time.Duration
}

// storeCtx returns ctx bounded by Config.StoreTimeout.
func (a *API) storeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if a.cfg.StoreTimeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, a.cfg.StoreTimeout)
}

// API serves the jobs routes.
type API struct {
	cfg Config
}

// New returns the API of cfg.
func New(cfg Config) (*API, error) {
	if cfg.Store == nil || cfg.AccountOf == nil {
		return nil, errors.New("jobsapi: Config.Store and Config.AccountOf are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Queued == nil {
		cfg.Queued = func() {}
	}
	return &API{cfg: cfg}, nil
}

// Routes returns the routes, for httpapi.Config.Keyed.
func (a *API) Routes() map[string]httpapi.KeyedHandler {
	return map[string]httpapi.KeyedHandler{
		"POST /api/v1/jobs":             a.create,
		"GET /api/v1/jobs":              a.list,
		"GET /api/v1/jobs/{id}":         a.get,
		"DELETE /api/v1/jobs/{id}":      a.cancel,
		"POST /api/v1/jobs/{id}/resume": a.resume,
		"GET /api/v1/jobs/{id}/results": a.results,
		"POST /api/v1/webhook-secret":   a.rotateSecret,
	}
}

// Error codes of the jobs API, besides httpapi's.
const (
	CodeJobLimit      = "JOB_LIMIT_EXCEEDED"
	CodeJobNotFound   = "JOB_NOT_FOUND"
	CodeNotResumable  = "JOB_NOT_RESUMABLE"
	CodeInvalidWebook = "INVALID_WEBHOOK_URL"
)

func (a *API) account(w http.ResponseWriter, key auth.Key) (string, bool) {
	id, ok := a.cfg.AccountOf(key)
	if !ok {
		httpapi.WriteError(w, http.StatusForbidden, "Forbidden", httpapi.CodeForbidden, "Lookup jobs are made with an account's key")
	}
	return id, ok
}

// Problem is how a refused job request, or a store's failure, is
// answered: the HTTP status and the error body's error, code and details.
// The account pages show the same details.
type Problem struct {
	Status               int
	Error, Code, Details string
	// Unavailable is a store's failure (503), which the caller logs.
	Unavailable bool
}

// ProblemOf returns how err, from parsing a job's upload or from an
// operation of [API], is answered.
func ProblemOf(err error) Problem {
	var tooBig *http.MaxBytesError
	var bad *uploadError
	var hook *webhookError
	switch {
	case errors.Is(err, errTooMany):
		return Problem{http.StatusRequestEntityTooLarge, "Too many numbers", httpapi.CodeInvalidRequest, err.Error(), false}
	case errors.As(err, &tooBig):
		return Problem{http.StatusRequestEntityTooLarge, "Request body too large", httpapi.CodeInvalidRequest, fmt.Sprintf("A job's request body may be at most %d MiB", MaxUploadBytes>>20), false}
	case errors.As(err, &bad):
		return Problem{http.StatusBadRequest, "Invalid request", httpapi.CodeInvalidRequest, bad.msg, false}
	case errors.As(err, &hook):
		return Problem{http.StatusBadRequest, "Invalid webhook URL", CodeInvalidWebook, hook.err.Error(), false}
	case errors.Is(err, errContentType):
		return Problem{http.StatusUnsupportedMediaType, "Unsupported media type", httpapi.CodeInvalidRequest, err.Error(), false}
	case errors.Is(err, billing.ErrNotFound):
		return Problem{http.StatusNotFound, "Job not found", CodeJobNotFound, "No job of this account has this id", false}
	case errors.Is(err, billing.ErrJobLimit):
		return Problem{http.StatusTooManyRequests, "Job limit exceeded", CodeJobLimit, strings.TrimPrefix(err.Error(), billing.ErrJobLimit.Error()+": "), false}
	case errors.Is(err, billing.ErrConflict):
		return Problem{http.StatusConflict, "Job not resumable", CodeNotResumable, strings.TrimPrefix(err.Error(), billing.ErrConflict.Error()+": "), false}
	case errors.Is(err, billing.ErrInvalid):
		return Problem{http.StatusBadRequest, "Invalid request", httpapi.CodeInvalidRequest, strings.TrimPrefix(err.Error(), billing.ErrInvalid.Error()+": "), false}
	case errors.Is(err, errRead):
		return Problem{http.StatusBadRequest, "Invalid request", httpapi.CodeInvalidRequest, "The request body could not be read", false}
	}
	return Problem{http.StatusServiceUnavailable, "Service unavailable", httpapi.CodeUnavailable, "The accounts store cannot be reached; retry shortly", true}
}

// errRead is a request body that could not be read.
var errRead = errors.New("the request body could not be read")

// webhookError is a webhook_url webhook.CheckURL refuses.
type webhookError struct{ err error }

func (e *webhookError) Error() string { return e.err.Error() }

// fail answers err (see ProblemOf), logging a store's failure.
func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	p := ProblemOf(err)
	if p.Unavailable {
		a.cfg.Logger.LogAttrs(r.Context(), slog.LevelError, "lookup jobs: the accounts store failed", slog.String("error", err.Error()))
	}
	httpapi.WriteError(w, p.Status, p.Error, p.Code, p.Details)
}

// create serves POST /api/v1/jobs.
func (a *API) create(w http.ResponseWriter, r *http.Request, key auth.Key) {
	acct, ok := a.account(w, key)
	if !ok {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxUploadBytes)
	u, err := parseRequest(r)
	if err != nil {
		a.fail(w, r, ReadError(err))
		return
	}
	j, err := a.Create(r.Context(), acct, u)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/v1/jobs/"+j.ID)
	httpapi.WriteJSON(w, http.StatusAccepted, struct {
		ID     string            `json:"id"`
		Status billing.JobStatus `json:"status"`
		Total  int64             `json:"total"`
	}{j.ID, j.Status, j.Total})
}

// ReadError returns err, from ParseCSV or ParseJSON reading an upload, as
// [ProblemOf] explains it to the client: a failure to read the body that
// is not the parser's own refusal is errRead, not a store's failure.
func ReadError(err error) error {
	var tooBig *http.MaxBytesError
	var bad *uploadError
	if errors.Is(err, errTooMany) || errors.As(err, &tooBig) || errors.As(err, &bad) || errors.Is(err, errContentType) {
		return err
	}
	return fmt.Errorf("%w: %w", errRead, err)
}

// Create makes a job of u for the account acct, as POST /api/v1/jobs
// does: its webhook_url checked, the account's limits applied, the
// worker woken. Its errors are explained by [ProblemOf].
func (a *API) Create(ctx context.Context, acct string, u *Upload) (billing.Job, error) {
	if u.WebhookURL != "" {
		if err := webhook.CheckURL(u.WebhookURL, a.cfg.AllowPrivateWebhooks); err != nil {
			return billing.Job{}, &webhookError{err}
		}
	}
	j, err := a.cfg.Store.CreateJob(ctx, billing.JobSpec{AccountID: acct, Kind: u.Kind, Enhanced: u.Enhanced, Messaging: u.Messaging,
		WebhookURL: u.WebhookURL, Numbers: u.Numbers}, a.cfg.Limits, a.cfg.Now())
	if err == nil {
		a.cfg.Queued()
	}
	return j, err
}

var errContentType = errors.New("Content-Type must be application/json or text/csv")

// parseRequest reads a job request: JSON, or CSV with the options in the
// query.
func parseRequest(r *http.Request) (*Upload, error) {
	ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	switch strings.ToLower(strings.TrimSpace(ct)) {
	case "application/json":
		return ParseJSON(r.Body)
	case "text/csv", "text/plain":
		q := r.URL.Query()
		u := &Upload{Kind: q.Get("kind"), WebhookURL: q.Get("webhook_url")}
		for name, dst := range map[string]*bool{"include_enhanced_lrn": &u.Enhanced, "messaging_lookup": &u.Messaging} {
			if v := q.Get(name); v != "" {
				b, err := strconv.ParseBool(v)
				if err != nil {
					return nil, badUpload("%s must be true or false", name)
				}
				*dst = b
			}
		}
		var err error
		u.Numbers, err = ParseCSV(r.Body)
		return u, err
	}
	return nil, errContentType
}

// list serves GET /api/v1/jobs.
func (a *API) list(w http.ResponseWriter, r *http.Request, key auth.Key) {
	acct, ok := a.account(w, key)
	if !ok {
		return
	}
	jobs, err := a.List(r.Context(), acct, 1000)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	views := make([]billing.JobView, len(jobs))
	for i, j := range jobs {
		views[i] = j.View()
	}
	httpapi.WriteJSON(w, http.StatusOK, struct {
		Jobs []billing.JobView `json:"jobs"`
	}{views})
}

// one serves a request about one job with do.
func (a *API) one(w http.ResponseWriter, r *http.Request, key auth.Key, do func(ctx context.Context, acct, id string) (billing.Job, error)) {
	acct, ok := a.account(w, key)
	if !ok {
		return
	}
	j, err := do(r.Context(), acct, r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, j.View())
}

func (a *API) get(w http.ResponseWriter, r *http.Request, key auth.Key) { a.one(w, r, key, a.Job) }
func (a *API) cancel(w http.ResponseWriter, r *http.Request, key auth.Key) {
	a.one(w, r, key, a.Cancel)
}
func (a *API) resume(w http.ResponseWriter, r *http.Request, key auth.Key) {
	a.one(w, r, key, a.Resume)
}

// List returns the account acct's jobs, newest first, at most limit.
func (a *API) List(ctx context.Context, acct string, limit int) ([]billing.Job, error) {
	ctx, cancel := a.storeCtx(ctx)
	defer cancel()
	return a.cfg.Store.ListJobs(ctx, acct, limit)
}

// Job returns the account acct's job id (billing.ErrNotFound for another
// account's).
func (a *API) Job(ctx context.Context, acct, id string) (billing.Job, error) {
	ctx, cancel := a.storeCtx(ctx)
	defer cancel()
	return a.cfg.Store.Job(ctx, acct, id)
}

// Cancel stops the account acct's job id, as DELETE /api/v1/jobs/{id}.
func (a *API) Cancel(ctx context.Context, acct, id string) (billing.Job, error) {
	ctx, cancel := a.storeCtx(ctx)
	defer cancel()
	return a.cfg.Store.CancelJob(ctx, acct, id, a.cfg.Now())
}

// Resume queues again the account acct's job id, stopped
// insufficient_balance, and wakes the worker, as POST
// /api/v1/jobs/{id}/resume.
func (a *API) Resume(ctx context.Context, acct, id string) (billing.Job, error) {
	ctx, cancel := a.storeCtx(ctx)
	defer cancel()
	j, err := a.cfg.Store.ResumeJob(ctx, acct, id, a.cfg.Now())
	if err == nil {
		a.cfg.Queued()
	}
	return j, err
}

// results serves GET /api/v1/jobs/{id}/results: the stored answers in
// input order, as NDJSON or (Accept: text/csv) CSV.
func (a *API) results(w http.ResponseWriter, r *http.Request, key auth.Key) {
	acct, ok := a.account(w, key)
	if !ok {
		return
	}
	j, err := a.Job(r.Context(), acct, r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.WriteResults(w, r, j, strings.Contains(r.Header.Get("Accept"), "text/csv"))
}

// WriteResults answers 200 with job j's stored answers in input order,
// streamed: NDJSON (each line the single-number endpoint's body), or
// asCSV a flat CSV with a header. Headers set before the call are kept. A
// failure after the first line aborts the response, which the client
// sees cut.
func (a *API) WriteResults(w http.ResponseWriter, r *http.Request, j billing.Job, asCSV bool) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	if asCSV {
		h.Set("Content-Type", "text/csv; charset=utf-8")
	} else {
		h.Set("Content-Type", "application/x-ndjson")
	}
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10) // the response goes out as it fills
	var each func(string, []byte) error
	cw := csv.NewWriter(bw)
	if asCSV {
		c := NewResultsCSV(cw, j.Kind)
		each = c.Write
	} else {
		each = func(_ string, line []byte) error {
			if _, err := bw.Write(line); err != nil {
				return err
			}
			return bw.WriteByte('\n')
		}
	}
	err := a.cfg.Store.JobResults(r.Context(), j.AccountID, j.ID, each)
	if cw.Flush(); err == nil {
		err = cw.Error()
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil && r.Context().Err() == nil {
		a.cfg.Logger.LogAttrs(r.Context(), slog.LevelError, "lookup jobs: reading results failed", slog.String("job", j.ID), slog.String("error", err.Error()))
		panic(http.ErrAbortHandler)
	}
}

// rotateSecret serves POST /api/v1/webhook-secret.
func (a *API) rotateSecret(w http.ResponseWriter, r *http.Request, key auth.Key) {
	acct, ok := a.account(w, key)
	if !ok {
		return
	}
	secret, err := a.RotateSecret(r.Context(), acct)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusCreated, struct {
		Secret string `json:"secret"`
	}{secret})
}

// RotateSecret makes a new webhook signing secret for the account acct
// and returns it (it is shown once: the store keeps it for signing).
func (a *API) RotateSecret(ctx context.Context, acct string) (string, error) {
	ctx, cancel := a.storeCtx(ctx)
	defer cancel()
	secret := webhook.NewSecret()
	if err := a.cfg.Store.SetWebhookSecret(ctx, acct, secret, a.cfg.Now()); err != nil {
		return "", err
	}
	return secret, nil
}
