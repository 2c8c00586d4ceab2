package account

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/jobsapi"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/webui"
)

// The jobs page: lookup jobs made from an uploaded list, by the API's own
// operations (package jobsapi), their progress and their results.
//
//	GET  /account/jobs                         the account's jobs, newest first, and the upload form
//	POST /account/jobs                         a multipart upload {csrf, kind, enhanced, messaging, webhook_url, file} → a job
//	GET  /account/jobs/{id}/results.ndjson     the results as GET /api/v1/jobs/{id}/results answers them
//	GET  /account/jobs/{id}/results.csv        the same as CSV
//	POST /account/jobs/{id}/cancel             cancels a job
//	POST /account/jobs/{id}/resume             resumes a job stopped insufficient_balance
//	POST /account/webhook-secret               makes or rotates the webhook signing secret: shown once

// JobsPath is the jobs page.
const JobsPath = "/account/jobs"

// maxJobsListed is how many of the account's jobs the page lists.
const maxJobsListed = 100

// maxUploadForm bounds an upload: the list as the API bounds it, and
// room for the form's other fields.
const maxUploadForm = jobsapi.MaxUploadBytes + 64<<10

// maxField bounds a form field of an upload other than the file.
const maxField = 4 << 10

var jobKinds = []struct{ Value, Text string }{
	{"lrn", "LRN"}, {"cnam", "Caller name (CNAM)"}, {"messaging", "Messaging provider"}, {"trust", "Trust"},
}

// jobView is a job as the page lists it.
type jobView struct {
	billing.Job
	Percent    int64
	Unfinished bool // queued or running
}

type jobsData struct {
	Jobs    []jobView
	Kinds   []struct{ Value, Text string }
	Refresh bool // a job is queued or running: the page reloads itself
	Max     int
	MaxMiB  int
	// The form's, kept when an upload is refused.
	Kind                string
	Enhanced, Messaging bool
	WebhookURL          string
}

func (p *pages) showJobs(w http.ResponseWriter, r *http.Request, s *webui.Session) {
	p.renderJobs(w, r, s, http.StatusOK, "", &jobForm{upload: jobsapi.Upload{Kind: "lrn"}})
}

// renderJobs renders the jobs page with msg as its error and form's
// fields; only the page a GET shows reloads itself.
func (p *pages) renderJobs(w http.ResponseWriter, r *http.Request, s *webui.Session, status int, msg string, form *jobForm) {
	ctx, cancel := p.ctx(r)
	defer cancel()
	jobs, err := p.cfg.Jobs.List(ctx, s.AccountID, maxJobsListed)
	if err != nil {
		p.failed(w, r, err)
		return
	}
	d := jobsData{Kinds: jobKinds, Max: billing.MaxJobNumbers, MaxMiB: jobsapi.MaxUploadBytes >> 20,
		Kind: form.upload.Kind, Enhanced: form.upload.Enhanced, Messaging: form.upload.Messaging, WebhookURL: form.upload.WebhookURL}
	for _, j := range jobs {
		v := jobView{Job: j, Unfinished: j.Status == billing.JobQueued || j.Status == billing.JobRunning}
		if j.Total > 0 {
			v.Percent = j.Done * 100 / j.Total
		}
		d.Refresh = d.Refresh || (v.Unfinished && r.Method == http.MethodGet)
		d.Jobs = append(d.Jobs, v)
	}
	p.cfg.UI.Render(w, r, p.jobs, status, webui.Page{Title: "Lookup jobs", Nav: p.nav(JobsPath), Error: msg, Data: d})
}

// jobForm is an upload as the form sends it.
type jobForm struct {
	upload  jobsapi.Upload
	hasFile bool
}

// formError is an upload's field the page refuses.
type formError struct{ msg string }

func (e *formError) Error() string { return e.msg }

// readJobForm reads an upload's parts after its CSRF token: kind,
// enhanced and messaging (checkboxes), webhook_url, and file, the list,
// read by the API's own parser (jobsapi.ParseCSV) as it streams in. Other
// parts are skipped. The form read so far is returned with any error.
func readJobForm(mr *multipart.Reader) (*jobForm, error) {
	f := &jobForm{upload: jobsapi.Upload{Kind: "lrn"}}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return f, jobsapi.ReadError(err)
		}
		name := part.FormName()
		if name == "file" {
			if f.hasFile {
				return f, &formError{"Upload one file."}
			}
			f.hasFile = true
			if f.upload.Numbers, err = jobsapi.ParseCSV(part); err != nil {
				return f, jobsapi.ReadError(err)
			}
			continue
		}
		b, err := io.ReadAll(io.LimitReader(part, maxField+1))
		if err != nil {
			return f, jobsapi.ReadError(err)
		}
		if len(b) > maxField {
			return f, &formError{fmt.Sprintf("The form's field %q is longer than %d bytes.", name, maxField)}
		}
		v := strings.TrimSpace(string(b))
		switch name {
		case "kind":
			f.upload.Kind = v
		case "enhanced":
			f.upload.Enhanced = v != ""
		case "messaging":
			f.upload.Messaging = v != ""
		case "webhook_url":
			f.upload.WebhookURL = v
		}
	}
	if !f.hasFile {
		return f, &formError{"Choose a file of numbers to upload."}
	}
	return f, nil
}

// explain returns the status and the words of an upload's refusal or an
// operation's failure, as the API explains them; false for a store's
// failure, which the caller answers with p.failed.
func explain(err error) (int, string, bool) {
	var fe *formError
	if errors.As(err, &fe) {
		return http.StatusBadRequest, fe.msg, true
	}
	pr := jobsapi.ProblemOf(err)
	if pr.Unavailable {
		return 0, "", false
	}
	return pr.Status, pr.Details + ".", true
}

func (p *pages) createJob(w http.ResponseWriter, r *http.Request, s *webui.Session, mr *multipart.Reader) {
	f, err := readJobForm(mr)
	if err == nil {
		ctx, cancel := p.ctx(r)
		defer cancel()
		var j billing.Job
		if j, err = p.cfg.Jobs.Create(ctx, s.AccountID, &f.upload); err == nil {
			p.cfg.Logger.Info("lookup job made from the account page", "account", s.AccountID, "job", j.ID, "numbers", j.Total, "by_key", s.KeyID)
			s.SetFlash(fmt.Sprintf("Job %s is queued: %d numbers.", j.ID, j.Total))
			webui.Redirect(w, r, JobsPath)
			return
		}
	}
	status, msg, ok := explain(err)
	if !ok {
		p.failed(w, r, err)
		return
	}
	f.upload.Numbers = nil
	p.renderJobs(w, r, s, status, "No job was made: "+msg, f)
}

// jobResults serves a job's results, as NDJSON or CSV.
func (p *pages) jobResults(asCSV bool) webui.SessionHandler {
	return func(w http.ResponseWriter, r *http.Request, s *webui.Session) {
		ctx, cancel := p.ctx(r)
		j, err := p.cfg.Jobs.Job(ctx, s.AccountID, r.PathValue("id"))
		cancel()
		if err != nil {
			p.jobFailed(w, r, err)
			return
		}
		ext := "ndjson"
		if asCSV {
			ext = "csv"
		}
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.%s"`, j.ID, ext))
		p.cfg.Jobs.WriteResults(w, r, j, asCSV)
	}
}

// jobFailed answers an operation on a job that failed: the page of the
// API's explanation (404 for another account's job), or 503.
func (p *pages) jobFailed(w http.ResponseWriter, r *http.Request, err error) {
	status, msg, ok := explain(err)
	if !ok {
		p.failed(w, r, err)
		return
	}
	p.cfg.UI.Message(w, r, status, http.StatusText(status), msg)
}

// jobAction is cancel or resume of one of the account's jobs.
func (p *pages) jobAction(do func(ctx context.Context, acct, id string) (billing.Job, error), done string) webui.SessionHandler {
	return func(w http.ResponseWriter, r *http.Request, s *webui.Session) {
		ctx, cancel := p.ctx(r)
		defer cancel()
		j, err := do(ctx, s.AccountID, r.PathValue("id"))
		if err != nil {
			p.jobFailed(w, r, err)
			return
		}
		s.SetFlash(fmt.Sprintf("Job %s %s: it is %s.", j.ID, done, j.Status))
		webui.Redirect(w, r, JobsPath)
	}
}

type secretData struct{ Secret string }

func (p *pages) rotateSecret(w http.ResponseWriter, r *http.Request, s *webui.Session) {
	ctx, cancel := p.ctx(r)
	defer cancel()
	secret, err := p.cfg.Jobs.RotateSecret(ctx, s.AccountID)
	if err != nil {
		p.failed(w, r, err)
		return
	}
	p.cfg.Logger.Info("webhook secret made from the account page", "account", s.AccountID, "by_key", s.KeyID)
	p.cfg.UI.Render(w, r, p.secret, http.StatusCreated, webui.Page{Title: "Your webhook secret", Nav: p.nav(""), Data: secretData{secret}})
}
