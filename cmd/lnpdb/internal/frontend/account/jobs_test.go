package account

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/jobsapi"
)

// upload posts the jobs form as a browser does: the CSRF token first
// (unless tok is ""), the fields, then the file read from file.
func (b *browser) upload(t *testing.T, tok string, fields [][2]string, file io.Reader) (*http.Response, string) {
	t.Helper()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		err := func() error {
			if tok != "" {
				if err := mw.WriteField("csrf", tok); err != nil {
					return err
				}
			}
			for _, f := range fields {
				if err := mw.WriteField(f[0], f[1]); err != nil {
					return err
				}
			}
			if file != nil {
				fw, err := mw.CreateFormFile("file", "numbers.csv")
				if err != nil {
					return err
				}
				if _, err := io.Copy(fw, file); err != nil {
					return err
				}
			}
			return mw.Close()
		}()
		pw.CloseWithError(err)
	}()
	req, err := http.NewRequest(http.MethodPost, b.srv.URL+JobsPath, pr)
	require.NoError(t, err)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := b.c.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

// rest GETs path of the REST API with the account's key and accept.
func (s *site) restGet(t *testing.T, path, accept string) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.rest.URL+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.apiKey)
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return b
}

// run works every chunk there is.
func (s *site) run(t *testing.T) {
	t.Helper()
	for {
		worked, err := s.worker.Step(context.Background())
		require.NoError(t, err)
		if !worked {
			return
		}
	}
}

func (s *site) jobsOf(t *testing.T, acct string) []billing.Job {
	t.Helper()
	js, err := s.bolt.ListJobs(context.Background(), acct, 0)
	require.NoError(t, err)
	return js
}

var refreshRE = regexp.MustCompile(`<meta http-equiv="refresh" content="2">`)

// TestJobsPage: a list uploaded becomes a job the page lists with its
// progress, reloading itself until it ends; its results download as the
// REST API serves them, byte for byte.
func TestJobsPage(t *testing.T) {
	s := newSite(t, withJobs(billing.JobLimits{}))
	b := s.signIn(t, s.keyA)
	resp, body := b.get(t, JobsPath)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `<a href="/account/jobs" aria-current="page">Jobs</a>`)
	assert.Contains(t, body, "No jobs yet.")
	assert.NotRegexp(t, refreshRE, body, "nothing to wait for")
	tok := csrfRE.FindStringSubmatch(body)[1]

	n := s.nums
	list := "id,phone_number\n1," + n.Ported + "\n2," + n.Home + "\n3," + n.Vacant + "\n4,abc\n5," + n.Pooled + "\n"
	resp, body = b.upload(t, tok, [][2]string{{"kind", "lrn"}, {"enhanced", "1"}, {"webhook_url", ""}}, strings.NewReader(list))
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	assert.Equal(t, JobsPath, resp.Header.Get("Location"))
	js := s.jobsOf(t, s.a.ID)
	require.Len(t, js, 1)
	j := js[0]
	assert.Equal(t, int64(5), j.Total)
	assert.True(t, j.Enhanced)
	assert.False(t, j.Messaging)

	_, body = b.get(t, JobsPath)
	assert.Contains(t, body, "Job "+j.ID+" is queued: 5 numbers.", "the flash")
	assert.Regexp(t, refreshRE, body, "a queued job: the page reloads itself")
	assert.Contains(t, body, `<progress max="5" value="0"`)
	assert.Contains(t, body, `<td class="status">queued</td>`)
	assert.Contains(t, body, `action="/account/jobs/`+j.ID+`/cancel"`)
	assert.NotContains(t, body, "results.ndjson", "nothing to download yet")

	s.run(t)
	_, body = b.get(t, JobsPath)
	assert.NotRegexp(t, refreshRE, body, "the job ended: no reload")
	assert.Contains(t, body, `<progress max="5" value="5"`)
	assert.Contains(t, body, `<td class="num done">5 / 5</td>`)
	assert.Contains(t, body, `<td class="status">succeeded</td>`)
	assert.NotContains(t, body, `/cancel"`)

	for ext, accept := range map[string]string{"ndjson": "application/x-ndjson", "csv": "text/csv"} {
		resp, got := b.get(t, JobsPath+"/"+j.ID+"/results."+ext)
		require.Equal(t, http.StatusOK, resp.StatusCode, got)
		assert.Equal(t, `attachment; filename="`+j.ID+`.`+ext+`"`, resp.Header.Get("Content-Disposition"))
		assert.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), accept), resp.Header.Get("Content-Type"))
		want := s.restGet(t, "/api/v1/jobs/"+j.ID+"/results", accept)
		assert.Equal(t, string(want), got, ext+": the REST API's bytes")
		assert.Equal(t, 6-map[string]int{"ndjson": 1, "csv": 0}[ext], strings.Count(got, "\n"), ext)
	}
}

// TestJobsRefused: an upload the API would refuse is refused with the
// API's words, and makes no job; so is one without the CSRF token.
func TestJobsRefused(t *testing.T) {
	s := newSite(t, withJobs(billing.JobLimits{MaxUnfinished: 1}))
	b := s.signIn(t, s.keyA)
	tok := b.jobsCSRF(t)
	var million bytes.Buffer
	for range billing.MaxJobNumbers + 1 {
		million.WriteString("2025550123\n")
	}
	for name, tc := range map[string]struct {
		tok    string
		fields [][2]string
		file   io.Reader
		code   int
		want   string
	}{
		"no token":              {"", nil, strings.NewReader("2025550123\n"), http.StatusForbidden, "CSRF token"},
		"wrong token":           {tok[1:], nil, strings.NewReader("2025550123\n"), http.StatusForbidden, "CSRF token"},
		"no file":               {tok, [][2]string{{"kind", "lrn"}}, nil, http.StatusBadRequest, "Choose a file"},
		"an empty file":         {tok, nil, strings.NewReader("\n\n"), http.StatusBadRequest, "the list holds no numbers"},
		"1,000,001 numbers":     {tok, nil, &million, http.StatusRequestEntityTooLarge, "a job holds at most 1000000 numbers"},
		"a line past 64 MiB":    {tok, nil, io.LimitReader(repeat('9'), jobsapi.MaxUploadBytes+1<<20), http.StatusRequestEntityTooLarge, "at most 64 MiB"},
		"an unknown kind":       {tok, [][2]string{{"kind", "hlr"}}, strings.NewReader("2025550123\n"), http.StatusBadRequest, `kind &#34;hlr&#34;`},
		"options of cnam":       {tok, [][2]string{{"kind", "cnam"}, {"enhanced", "1"}}, strings.NewReader("2025550123\n"), http.StatusBadRequest, "options of an lrn job"},
		"a webhook to loopback": {tok, [][2]string{{"webhook_url", "https://127.0.0.1/hook"}}, strings.NewReader("2025550123\n"), http.StatusBadRequest, "address not allowed for webhooks"},
		"a long field":          {tok, [][2]string{{"webhook_url", "https://example.com/" + strings.Repeat("a", maxField)}}, strings.NewReader("2025550123\n"), http.StatusBadRequest, "longer than 4096 bytes"},
	} {
		resp, body := b.upload(t, tc.tok, tc.fields, tc.file)
		assert.Equal(t, tc.code, resp.StatusCode, name)
		assert.Contains(t, body, tc.want, name)
		if tc.code != http.StatusForbidden {
			assert.Contains(t, body, "No job was made: ", name)
		}
		assert.Empty(t, s.jobsOf(t, s.a.ID), name+": no job made")
	}
	// The form's fields are kept when it is refused.
	_, body := b.upload(t, tok, [][2]string{{"kind", "cnam"}, {"messaging", "1"}, {"webhook_url", "https://example.com/h"}}, strings.NewReader("1\n"))
	assert.Contains(t, body, `<option value="cnam" selected>`)
	assert.Contains(t, body, `name="messaging" value="1" checked`)
	assert.Contains(t, body, `value="https://example.com/h"`)

	// The account's limits, as the API applies them.
	resp, _ := b.upload(t, tok, nil, strings.NewReader("2025550123\n"))
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	resp, body = b.upload(t, tok, nil, strings.NewReader("2025550123\n"))
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Contains(t, body, "the account has 1 unfinished jobs")
	assert.Len(t, s.jobsOf(t, s.a.ID), 1)
}

// repeat is an endless reader of c.
type repeat byte

func (r repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

func (b *browser) jobsCSRF(t *testing.T) string {
	t.Helper()
	_, body := b.get(t, JobsPath)
	m := csrfRE.FindStringSubmatch(body)
	require.NotNil(t, m, body)
	return m[1]
}

// TestJobsLongLine: a line past the line reader's bound within the upload's
// is a row of its own, answered as an invalid number, as the API does.
func TestJobsLongLine(t *testing.T) {
	s := newSite(t, withJobs(billing.JobLimits{}))
	b := s.signIn(t, s.keyA)
	tok := b.jobsCSRF(t)
	file := io.MultiReader(strings.NewReader(s.nums.Home+"\n"), io.LimitReader(repeat('9'), 3<<20), strings.NewReader("\n"+s.nums.Ported+"\n"))
	resp, body := b.upload(t, tok, nil, file)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	j := s.jobsOf(t, s.a.ID)[0]
	assert.Equal(t, int64(3), j.Total)
	s.run(t)
	_, got := b.get(t, JobsPath+"/"+j.ID+"/results.ndjson")
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	require.Len(t, lines, 3)
	assert.Contains(t, lines[1], `"code":"INVALID_PHONE_NUMBER"`)
	assert.NotContains(t, lines[0], `"code"`)
	assert.NotContains(t, lines[2], `"code"`)
}

// TestJobsOfAnotherAccount: another account's job is not listed, and its
// results, cancel and resume are 404; the job is left as it was.
func TestJobsOfAnotherAccount(t *testing.T) {
	s := newSite(t, withJobs(billing.JobLimits{}))
	ctx := context.Background()
	other, err := s.bolt.CreateJob(ctx, billing.JobSpec{AccountID: s.b.ID, Kind: "lrn", Numbers: []string{s.nums.Home}}, billing.JobLimits{}, time.Now())
	require.NoError(t, err)
	a := s.signIn(t, s.keyA)
	tok := a.jobsCSRF(t)
	_, body := a.get(t, JobsPath)
	assert.NotContains(t, body, other.ID)
	for _, path := range []string{"/results.ndjson", "/results.csv"} {
		resp, body := a.get(t, JobsPath+"/"+other.ID+path)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, path)
		assert.Contains(t, body, "No job of this account has this id", path)
	}
	for _, path := range []string{"/cancel", "/resume"} {
		resp, _ := a.post(t, JobsPath+"/"+other.ID+path, url.Values{"csrf": {tok}})
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, path)
	}
	j, err := s.bolt.Job(ctx, s.b.ID, other.ID)
	require.NoError(t, err)
	assert.Equal(t, billing.JobQueued, j.Status)
	// Its own account sees it.
	_, body = s.signIn(t, s.keyB).get(t, JobsPath)
	assert.Contains(t, body, other.ID)
}

// TestJobsCancelAndResume: cancel takes the CSRF token and stops a job;
// a job that ran out of credit is resumed after a top-up and finishes.
func TestJobsCancelAndResume(t *testing.T) {
	s := newSite(t, withJobs(billing.JobLimits{}))
	ctx := context.Background()
	b := s.signIn(t, s.keyA)
	tok := b.jobsCSRF(t)
	resp, _ := b.upload(t, tok, nil, strings.NewReader(s.nums.Home+"\n"))
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	id := s.jobsOf(t, s.a.ID)[0].ID
	resp, _ = b.post(t, JobsPath+"/"+id+"/cancel", url.Values{})
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "no token")
	j, _ := s.bolt.Job(ctx, s.a.ID, id)
	assert.Equal(t, billing.JobQueued, j.Status)
	resp, _ = b.post(t, JobsPath+"/"+id+"/cancel", url.Values{"csrf": {tok}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body := b.get(t, JobsPath)
	assert.Contains(t, body, "Job "+id+" canceled: it is canceled.")
	assert.Contains(t, body, `<td class="status">canceled</td>`)
	resp, body = b.post(t, JobsPath+"/"+id+"/resume", url.Values{"csrf": {tok}})
	assert.Equal(t, http.StatusConflict, resp.StatusCode, "a canceled job is not resumed")
	assert.Contains(t, body, "insufficient_balance", body)

	// An account without credit: its free lookups, then it stops.
	acct, err := s.bolt.CreateAccount(ctx, "poor", time.Now())
	require.NoError(t, err)
	ses := s.signIn(t, s.addKey(t, acct.ID))
	tok = ses.jobsCSRF(t)
	list := strings.Repeat(s.nums.Home+"\n", billing.FreeTier+5)
	resp, _ = ses.upload(t, tok, nil, strings.NewReader(list))
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	s.run(t)
	id = s.jobsOf(t, acct.ID)[0].ID
	_, body = ses.get(t, JobsPath)
	assert.Contains(t, body, `<td class="status">insufficient_balance</td>`)
	assert.Contains(t, body, `action="/account/jobs/`+id+`/resume"`)
	assert.NotRegexp(t, refreshRE, body)
	_, _, err = s.bolt.Credit(ctx, acct.ID, billing.MicrosPerDollar, "top-up", time.Now())
	require.NoError(t, err)
	resp, _ = ses.post(t, JobsPath+"/"+id+"/resume", url.Values{"csrf": {tok}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	s.run(t)
	j, err = s.bolt.Job(ctx, acct.ID, id)
	require.NoError(t, err)
	assert.Equal(t, billing.JobSucceeded, j.Status)
	assert.Equal(t, int64(billing.FreeTier+5), j.Done)
}

// addKey adds a key to acct and returns its text.
func (s *site) addKey(t *testing.T, acct string) string {
	t.Helper()
	key := "lnp_key_of_" + acct
	_, err := s.store.AddKey(context.Background(), billing.KeyRecord{AccountID: acct, Hash: sha256.Sum256([]byte(key))}, time.Now())
	require.NoError(t, err)
	require.NoError(t, s.engine.ReloadKeys(context.Background()))
	return key
}

// TestWebhookSecret: a secret is made only with the CSRF token, shown
// once, and each is new.
func TestWebhookSecret(t *testing.T) {
	s := newSite(t, withJobs(billing.JobLimits{}))
	b := s.signIn(t, s.keyA)
	tok := b.jobsCSRF(t)
	resp, _ := b.post(t, "/account/webhook-secret", url.Values{})
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	secretRE := regexp.MustCompile(`value="(whsec_[^"]+)"`)
	var seen []string
	for range 2 {
		resp, body := b.post(t, "/account/webhook-secret", url.Values{"csrf": {tok}})
		require.Equal(t, http.StatusCreated, resp.StatusCode, body)
		m := secretRE.FindStringSubmatch(body)
		require.NotNil(t, m, body)
		secret, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(html.UnescapeString(m[1]), "whsec_"))
		require.NoError(t, err)
		assert.Len(t, secret, 32)
		assert.NotContains(t, seen, m[1])
		seen = append(seen, m[1])
		_, page := b.get(t, JobsPath)
		assert.NotContains(t, page, m[1], "shown once")
	}
}

// TestNoJobsPage: without the jobs API there is no jobs page or link.
func TestNoJobsPage(t *testing.T) {
	s := newSite(t)
	b := s.signIn(t, s.keyA)
	resp, _ := b.get(t, JobsPath)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	_, body := b.get(t, "/account/keys")
	assert.NotContains(t, body, `href="/account/jobs"`)
}

// downJobs is a jobs store that cannot be reached.
type downJobs struct{ billing.Jobs }

var errDown = errors.New("dial tcp 10.0.0.1:5432: connection refused")

func (downJobs) ListJobs(context.Context, string, int) ([]billing.Job, error) { return nil, errDown }
func (downJobs) Job(context.Context, string, string) (billing.Job, error) {
	return billing.Job{}, errDown
}
func (downJobs) CreateJob(context.Context, billing.JobSpec, billing.JobLimits, time.Time) (billing.Job, error) {
	return billing.Job{}, errDown
}

// TestJobsStoreDown: a store that fails is a 503 page that says so, not
// the store's words, nor a refusal of the customer's file.
func TestJobsStoreDown(t *testing.T) {
	s := newSite(t, withJobs(billing.JobLimits{}), func(t *testing.T, s *site, cfg *Config) {
		api, err := jobsapi.New(jobsapi.Config{Store: downJobs{s.bolt}, AccountOf: func(auth.Key) (string, bool) { return "", false }})
		require.NoError(t, err)
		cfg.Jobs = api
	})
	b := s.signIn(t, s.keyA)
	resp, body := b.get(t, JobsPath)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Contains(t, body, "The accounts store did not answer")
	assert.NotContains(t, body, "10.0.0.1")
	tok := b.csrf(t) // from the keys page
	resp, body = b.upload(t, tok, nil, strings.NewReader("2025550123\n"))
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.NotContains(t, body, "No job was made")
	resp, _ = b.get(t, JobsPath+"/job_x/results.csv")
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
}
