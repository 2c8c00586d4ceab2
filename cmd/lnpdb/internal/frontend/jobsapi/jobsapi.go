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

// fail answers a store's error.
func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, billing.ErrNotFound):
		httpapi.WriteError(w, http.StatusNotFound, "Job not found", CodeJobNotFound, "No job of this account has this id")
	case errors.Is(err, billing.ErrJobLimit):
		httpapi.WriteError(w, http.StatusTooManyRequests, "Job limit exceeded", CodeJobLimit, strings.TrimPrefix(err.Error(), billing.ErrJobLimit.Error()+": "))
	case errors.Is(err, billing.ErrConflict):
		httpapi.WriteError(w, http.StatusConflict, "Job not resumable", CodeNotResumable, strings.TrimPrefix(err.Error(), billing.ErrConflict.Error()+": "))
	case errors.Is(err, billing.ErrInvalid):
		httpapi.WriteError(w, http.StatusBadRequest, "Invalid request", httpapi.CodeInvalidRequest, strings.TrimPrefix(err.Error(), billing.ErrInvalid.Error()+": "))
	default:
		a.cfg.Logger.LogAttrs(r.Context(), slog.LevelError, "lookup jobs: the accounts store failed", slog.String("error", err.Error()))
		httpapi.WriteError(w, http.StatusServiceUnavailable, "Service unavailable", httpapi.CodeUnavailable, "The accounts store cannot be reached; retry shortly")
	}
}

// create serves POST /api/v1/jobs.
func (a *API) create(w http.ResponseWriter, r *http.Request, key auth.Key) {
	acct, ok := a.account(w, key)
	if !ok {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxUploadBytes)
	u, err := parseRequest(r)
	var tooBig *http.MaxBytesError
	var bad *uploadError
	switch {
	case errors.Is(err, errTooMany):
		httpapi.WriteError(w, http.StatusRequestEntityTooLarge, "Too many numbers", httpapi.CodeInvalidRequest, err.Error())
		return
	case errors.As(err, &tooBig):
		httpapi.WriteError(w, http.StatusRequestEntityTooLarge, "Request body too large", httpapi.CodeInvalidRequest, fmt.Sprintf("A job's request body may be at most %d MiB", MaxUploadBytes>>20))
		return
	case errors.As(err, &bad):
		httpapi.WriteError(w, http.StatusBadRequest, "Invalid request", httpapi.CodeInvalidRequest, bad.msg)
		return
	case errors.Is(err, errContentType):
		httpapi.WriteError(w, http.StatusUnsupportedMediaType, "Unsupported media type", httpapi.CodeInvalidRequest, err.Error())
		return
	case err != nil:
		httpapi.WriteError(w, http.StatusBadRequest, "Invalid request", httpapi.CodeInvalidRequest, "The request body could not be read")
		return
	}
	if u.WebhookURL != "" {
		if err := webhook.CheckURL(u.WebhookURL, a.cfg.AllowPrivateWebhooks); err != nil {
			httpapi.WriteError(w, http.StatusBadRequest, "Invalid webhook URL", CodeInvalidWebook, err.Error())
			return
		}
	}
	j, err := a.cfg.Store.CreateJob(r.Context(), billing.JobSpec{AccountID: acct, Kind: u.Kind, Enhanced: u.Enhanced, Messaging: u.Messaging,
		WebhookURL: u.WebhookURL, Numbers: u.Numbers}, a.cfg.Limits, a.cfg.Now())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.cfg.Queued()
	w.Header().Set("Location", "/api/v1/jobs/"+j.ID)
	httpapi.WriteJSON(w, http.StatusAccepted, struct {
		ID     string            `json:"id"`
		Status billing.JobStatus `json:"status"`
		Total  int64             `json:"total"`
	}{j.ID, j.Status, j.Total})
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
	jobs, err := a.cfg.Store.ListJobs(r.Context(), acct, 1000)
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

func (a *API) get(w http.ResponseWriter, r *http.Request, key auth.Key) {
	a.one(w, r, key, a.cfg.Store.Job)
}

func (a *API) cancel(w http.ResponseWriter, r *http.Request, key auth.Key) {
	a.one(w, r, key, func(ctx context.Context, acct, id string) (billing.Job, error) {
		return a.cfg.Store.CancelJob(ctx, acct, id, a.cfg.Now())
	})
}

func (a *API) resume(w http.ResponseWriter, r *http.Request, key auth.Key) {
	a.one(w, r, key, func(ctx context.Context, acct, id string) (billing.Job, error) {
		j, err := a.cfg.Store.ResumeJob(ctx, acct, id, a.cfg.Now())
		if err == nil {
			a.cfg.Queued()
		}
		return j, err
	})
}

// results serves GET /api/v1/jobs/{id}/results: the stored answers in
// input order, as NDJSON or (Accept: text/csv) CSV, streamed. A failure
// after the first line aborts the response, which the client sees cut.
func (a *API) results(w http.ResponseWriter, r *http.Request, key auth.Key) {
	acct, ok := a.account(w, key)
	if !ok {
		return
	}
	id := r.PathValue("id")
	j, err := a.cfg.Store.Job(r.Context(), acct, id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	asCSV := strings.Contains(r.Header.Get("Accept"), "text/csv")
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
		c := newCSVWriter(cw, j.Kind)
		each = func(n string, line []byte) error { return c.write(n, line) }
	} else {
		each = func(_ string, line []byte) error {
			if _, err := bw.Write(line); err != nil {
				return err
			}
			return bw.WriteByte('\n')
		}
	}
	err = a.cfg.Store.JobResults(r.Context(), acct, id, each)
	if cw.Flush(); err == nil {
		err = cw.Error()
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil && r.Context().Err() == nil {
		a.cfg.Logger.LogAttrs(r.Context(), slog.LevelError, "lookup jobs: reading results failed", slog.String("job", id), slog.String("error", err.Error()))
		panic(http.ErrAbortHandler)
	}
}

// rotateSecret serves POST /api/v1/webhook-secret.
func (a *API) rotateSecret(w http.ResponseWriter, r *http.Request, key auth.Key) {
	acct, ok := a.account(w, key)
	if !ok {
		return
	}
	secret := webhook.NewSecret()
	if err := a.cfg.Store.SetWebhookSecret(r.Context(), acct, secret, a.cfg.Now()); err != nil {
		a.fail(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusCreated, struct {
		Secret string `json:"secret"`
	}{secret})
}
