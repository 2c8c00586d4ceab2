package jobsapi_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/httpapi"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/jobsapi"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/jobs"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/diptest"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

type env struct {
	srv    *httptest.Server
	key    string
	store  *billing.BoltStore
	acct   billing.Account
	worker *jobs.Worker
	nums   diptest.Numbers
}

func setup(t *testing.T, credit billing.Micros, lim billing.JobLimits) *env {
	t.Helper()
	ctx := context.Background()
	db := testdb.Sample(t)
	store, err := billing.OpenBolt(filepath.Join(t.TempDir(), "accounts.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	acct, err := store.CreateAccount(ctx, "Acme", t0)
	if err != nil {
		t.Fatal(err)
	}
	if credit > 0 {
		if _, _, err := store.Credit(ctx, acct.ID, credit, "INV-0", t0); err != nil {
			t.Fatal(err)
		}
	}
	key := auth.NewKey()
	k := auth.HashKey(key)
	k.Limit = 1_000_000
	clock := func() time.Time { return t0 }
	api, err := jobsapi.New(jobsapi.Config{Store: store, Limits: lim, Now: clock,
		AccountOf: func(got auth.Key) (string, bool) { return acct.ID, got.Hash == k.Hash }})
	if err != nil {
		t.Fatal(err)
	}
	h, err := httpapi.New(httpapi.Config{Tables: diptest.Fixed(db), Keys: auth.NewKeySet(k), Keyed: api.Routes(), Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	w, err := jobs.New(jobs.Config{Store: store, Answer: h.AnswerJob, Now: clock, Slice: 7})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &env{srv: srv, key: key, store: store, acct: acct, worker: w, nums: diptest.Find(t, db)}
}

func (e *env) do(t *testing.T, method, path, ctype string, body io.Reader, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.key)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// run works every chunk there is.
func (e *env) run(t *testing.T) {
	t.Helper()
	for {
		worked, err := e.worker.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !worked {
			return
		}
	}
}

func (e *env) submit(t *testing.T, req map[string]any) string {
	t.Helper()
	body, _ := json.Marshal(req)
	resp, b := e.do(t, "POST", "/api/v1/jobs", "application/json", bytes.NewReader(body))
	var got struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Total  int    `json:"total"`
	}
	if err := json.Unmarshal(b, &got); err != nil || resp.StatusCode != 202 || got.Status != "queued" || resp.Header.Get("Location") != "/api/v1/jobs/"+got.ID {
		t.Fatalf("submit: %d %s %v", resp.StatusCode, b, err)
	}
	return got.ID
}

func (e *env) status(t *testing.T, id string) billing.JobView {
	t.Helper()
	resp, b := e.do(t, "GET", "/api/v1/jobs/"+id, "", nil)
	var v billing.JobView
	if err := json.Unmarshal(b, &v); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status: %d %s %v", resp.StatusCode, b, err)
	}
	return v
}

// Every line of a job's NDJSON results is the body the single-number
// endpoint of its kind answers for that number, byte for byte, and the CSV
// has a row per number.
func TestResultsAreTheSingleEndpointsBodies(t *testing.T) {
	e := setup(t, 100_000_000, billing.JobLimits{})
	n := e.nums
	numbers := []string{n.Ported, n.Pooled, n.Home, n.Vacant, n.Invalid, "+1 (" + n.Home[1:4] + ") " + n.Home[4:7] + "-" + n.Home[7:], "", "abc", n.Ported}
	cases := []struct {
		kind, path  string
		enh, msg    bool
		singleExtra string
	}{
		{"lrn", "/api/v1/lrn", false, false, ""},
		{"lrn", "/api/v1/lrn", true, true, `,"include_enhanced_lrn":true,"messaging_lookup":true`},
		{"cnam", "/api/v1/cnam", false, false, ""},
		{"messaging", "/api/v1/messaging", false, false, ""},
		{"trust", "/api/v1/trust", false, false, ""},
	}
	for _, c := range cases {
		req := map[string]any{"phone_numbers": numbers, "kind": c.kind}
		if c.kind == "lrn" {
			req["include_enhanced_lrn"], req["messaging_lookup"] = c.enh, c.msg
		}
		id := e.submit(t, req)
		e.run(t)
		if v := e.status(t, id); v.Status != billing.JobSucceeded || v.Done != int64(len(numbers)) || v.FinishedAt.IsZero() {
			t.Fatalf("%s: status %+v", c.kind, v)
		}
		resp, body := e.do(t, "GET", "/api/v1/jobs/"+id+"/results", "", nil, "Accept", "application/x-ndjson")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" {
			t.Fatalf("results: %d %s", resp.StatusCode, body)
		}
		lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
		if len(lines) != len(numbers) {
			t.Fatalf("%s: %d lines for %d numbers", c.kind, len(lines), len(numbers))
		}
		codes := 0
		for i, num := range numbers {
			q, _ := json.Marshal(num)
			_, single := e.do(t, "POST", c.path, "application/json", strings.NewReader(`{"phone_number":`+string(q)+c.singleExtra+`}`))
			if want := strings.TrimSuffix(string(single), "\n"); lines[i] != want {
				t.Errorf("%s %q:\n job    %s\n single %s", c.kind, num, lines[i], want)
			}
			if strings.Contains(lines[i], `"code":`) {
				codes++
			}
		}
		if codes < 4 { // vacant, invalid, "", abc
			t.Fatalf("%s: only %d error lines", c.kind, codes)
		}
		resp, body = e.do(t, "GET", "/api/v1/jobs/"+id+"/results", "", nil, "Accept", "text/csv")
		rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
		if err != nil || resp.StatusCode != 200 || len(rows) != len(numbers)+1 || rows[0][0] != "input" || rows[0][len(rows[0])-2] != "code" {
			t.Fatalf("%s csv: %d %v %q", c.kind, resp.StatusCode, err, body)
		}
		for i, num := range numbers {
			if rows[i+1][0] != num {
				t.Fatalf("%s csv row %d: %q", c.kind, i+1, rows[i+1])
			}
		}
		if rows[5][len(rows[5])-2] != httpapi.CodeInvalidPhoneNumber || rows[1][len(rows[1])-2] != "" {
			t.Fatalf("%s csv error columns: %q / %q", c.kind, rows[5], rows[1])
		}
	}
}

// A job is charged for its answered numbers only, at the kind's price; the
// wallet running out stops it insufficient_balance with what was paid
// kept, and a resume after a top-up finishes it.
func TestChargedIsAnsweredAcrossResume(t *testing.T) {
	price := billing.DefaultPrices[billing.KindCNAM]
	e := setup(t, 5*price, billing.JobLimits{})
	var numbers []string
	for range 4 {
		numbers = append(numbers, e.nums.Ported, e.nums.Invalid, e.nums.Home)
	}
	id := e.submit(t, map[string]any{"phone_numbers": numbers, "kind": "cnam"})
	e.run(t)
	v := e.status(t, id)
	// Answered (charged) numbers 1, 3, 4, 6, 7 are paid; number 9 is not.
	if v.Status != billing.JobInsufficientBalance || v.Done != 8 || v.Charged != (5*price).String() {
		t.Fatalf("stopped: %+v", v)
	}
	_, body := e.do(t, "GET", "/api/v1/jobs/"+id+"/results", "", nil)
	if got := strings.Count(string(body), "\n"); got != 8 {
		t.Fatalf("%d results kept, want 8", got)
	}
	resp, body := e.do(t, "POST", "/api/v1/jobs/"+id+"/resume", "", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"status":"queued"`) {
		t.Fatalf("resume before top-up: %d %s", resp.StatusCode, body)
	}
	e.run(t)
	if v := e.status(t, id); v.Status != billing.JobInsufficientBalance || v.Done != 8 {
		t.Fatalf("resumed without credit: %+v", v)
	}
	if _, _, err := e.store.Credit(context.Background(), e.acct.ID, price*10, "INV-1", t0); err != nil {
		t.Fatal(err)
	}
	e.do(t, "POST", "/api/v1/jobs/"+id+"/resume", "", nil)
	e.run(t)
	v = e.status(t, id)
	if v.Status != billing.JobSucceeded || v.Done != 12 || v.Charged != (8*price).String() {
		t.Fatalf("finished: %+v", v)
	}
	a, _ := e.store.Account(context.Background(), e.acct.ID)
	if a.Balance != 15*price-8*price {
		t.Fatalf("balance %s", a.Balance)
	}
	resp, body = e.do(t, "POST", "/api/v1/jobs/"+id+"/resume", "", nil)
	if resp.StatusCode != 409 || !strings.Contains(string(body), jobsapi.CodeNotResumable) {
		t.Fatalf("resume of a finished job: %d %s", resp.StatusCode, body)
	}
}

func TestHostileUploads(t *testing.T) {
	e := setup(t, 0, billing.JobLimits{MaxUnfinished: 1})
	// 1,000,001 numbers: 413, as JSON and as CSV.
	var js bytes.Buffer
	js.WriteString(`{"phone_numbers":[`)
	for i := range billing.MaxJobNumbers + 1 {
		if i > 0 {
			js.WriteByte(',')
		}
		js.WriteString(`"1"`)
	}
	js.WriteString(`]}`)
	resp, body := e.do(t, "POST", "/api/v1/jobs", "application/json", &js)
	if resp.StatusCode != 413 || !strings.Contains(string(body), `"code":"INVALID_REQUEST"`) {
		t.Fatalf("JSON of 1,000,001: %d %s", resp.StatusCode, body)
	}
	resp, body = e.do(t, "POST", "/api/v1/jobs", "text/csv", strings.NewReader(strings.Repeat("1\n", billing.MaxJobNumbers+1)))
	if resp.StatusCode != 413 {
		t.Fatalf("CSV of 1,000,001: %d %s", resp.StatusCode, body)
	}
	// A body past MaxUploadBytes (a 1 GB line): 413 once the bound is read.
	resp, body = e.do(t, "POST", "/api/v1/jobs", "text/csv", io.LimitReader(repeat('7'), 1<<30))
	if resp.StatusCode != 413 || !strings.Contains(string(body), "MiB") {
		t.Fatalf("1 GB line: %d %s", resp.StatusCode, body)
	}
	for _, c := range []struct{ ctype, body, want string }{
		{"application/json", `{"phone_numbers":[1]}`, "array of strings"},
		{"application/json", `{"phone_numbers":[]}`, "1 to 1000000"},
		{"application/json", `[]`, "JSON object"},
		{"application/json", `{"phone_numbers":["12015550123"],"kind":"x"}`, "kind"},
		{"application/json", `{"phone_numbers":["12015550123"],"webhook_url":"https://127.0.0.1/h"}`, "not allowed"},
		{"application/json", `{"phone_numbers":["12015550123"],"webhook_url":"http://example.com/h"}`, "https"},
		{"application/xml", `<a/>`, "Content-Type"},
	} {
		resp, body := e.do(t, "POST", "/api/v1/jobs", c.ctype, strings.NewReader(c.body))
		if resp.StatusCode/100 != 4 || !strings.Contains(string(body), c.want) || !strings.Contains(string(body), `"details"`) {
			t.Errorf("%s: %d %s", c.body, resp.StatusCode, body)
		}
	}
	// A CSV row past lineio's bound is a row of its own, answered invalid.
	csvBody := "phone_number,name\n" + e.nums.Home + ",a\n" + strings.Repeat("9", 2<<20) + ",b\n" + e.nums.Ported + ",c\n"
	resp, body = e.do(t, "POST", "/api/v1/jobs?kind=lrn", "text/csv", strings.NewReader(csvBody))
	if resp.StatusCode != 202 || !strings.Contains(string(body), `"total":3`) {
		t.Fatalf("CSV with a long row: %d %s", resp.StatusCode, body)
	}
	// The account's limit of unfinished jobs.
	resp, body = e.do(t, "POST", "/api/v1/jobs", "text/csv", strings.NewReader(e.nums.Home))
	if resp.StatusCode != 429 || !strings.Contains(string(body), jobsapi.CodeJobLimit) {
		t.Fatalf("second job: %d %s", resp.StatusCode, body)
	}
	resp, body = e.do(t, "GET", "/api/v1/jobs/job_nosuch", "", nil)
	if resp.StatusCode != 404 || !strings.Contains(string(body), jobsapi.CodeJobNotFound) {
		t.Fatalf("unknown job: %d %s", resp.StatusCode, body)
	}
	req, _ := http.NewRequest("GET", e.srv.URL+"/api/v1/jobs", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 401 {
		t.Fatalf("no key: %v %v", resp, err)
	}
}

func TestCancelListAndSecret(t *testing.T) {
	e := setup(t, 1_000_000, billing.JobLimits{})
	id1 := e.submit(t, map[string]any{"phone_numbers": []string{e.nums.Home}})
	id2 := e.submit(t, map[string]any{"phone_numbers": []string{e.nums.Home}, "kind": "trust", "webhook_url": "https://hooks.example.com/x"})
	resp, body := e.do(t, "DELETE", "/api/v1/jobs/"+id1, "", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"status":"canceled"`) {
		t.Fatalf("cancel: %d %s", resp.StatusCode, body)
	}
	e.run(t)
	_, body = e.do(t, "GET", "/api/v1/jobs", "", nil)
	var list struct{ Jobs []billing.JobView }
	if err := json.Unmarshal(body, &list); err != nil || len(list.Jobs) != 2 {
		t.Fatalf("list %s %v", body, err)
	}
	for _, j := range list.Jobs {
		if j.ID == id1 && (j.Status != billing.JobCanceled || j.Done != 0) || j.ID == id2 && j.Status != billing.JobSucceeded {
			t.Fatalf("list %+v", list.Jobs)
		}
	}
	resp, body = e.do(t, "POST", "/api/v1/webhook-secret", "", nil)
	var sec struct{ Secret string }
	if err := json.Unmarshal(body, &sec); err != nil || resp.StatusCode != 201 || !strings.HasPrefix(sec.Secret, "whsec_") {
		t.Fatalf("secret: %d %s", resp.StatusCode, body)
	}
	due, err := e.store.WebhooksDue(context.Background(), t0, 10)
	if err != nil || len(due) != 1 || due[0].Secret != sec.Secret || due[0].URL != "https://hooks.example.com/x" || !bytes.Contains(due[0].Body, []byte(id2)) {
		t.Fatalf("outbox %+v %v", due, err)
	}
}

// repeat is an endless reader of one byte.
type repeat byte

func (r repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}
