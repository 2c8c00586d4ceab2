package account

import (
	"bytes"
	"mime/multipart"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/webui"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/htmlshape"
)

// FuzzPages renders every account page with a hostile string in every
// field a customer or an operator can set — the account's name and id, a
// key's label and id, a ledger day, a playground number, an answer, a
// job's id, kind and status, a webhook URL, a secret — and
// checks that it changes no markup (the same tags and attributes as a
// harmless string) and is shown as text.
func FuzzPages(f *testing.F) {
	for _, s := range []string{
		`<script>alert(1)</script>`, `"><img src=x onerror=alert(1)>`, `'><svg onload=alert(1)>`, `</title><script>x</script>`,
		`</textarea><b>`, `javascript:alert(1)`, `{{.CSRF}}`, `&amp;<`, `<!--`, `]]></svg><script>`, `" onmouseover="alert(1)`,
	} {
		f.Add(s)
	}
	ui, err := webui.New(webui.Config{})
	if err != nil {
		f.Fatal(err)
	}
	p := &pages{cfg: Config{UI: ui}}
	for _, t := range []struct {
		dst  **webui.Template
		file string
	}{{&p.home, "home.html"}, {&p.keys, "keys.html"}, {&p.play, "playground.html"}, {&p.newKeyTp, "newkey.html"}, {&p.jobs, "jobs.html"}, {&p.secret, "secret.html"}} {
		if *t.dst, err = ui.Template(funcs, files, "templates/"+t.file); err != nil {
			f.Fatal(err)
		}
	}
	now := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	first, last := usageWindow(now)
	render := func(s string) []string {
		acc := billing.Account{ID: s, Name: s, Status: billing.Status(s)}
		rows := []billing.UsageRow{{Day: "2026-11-20", Kind: billing.KindLRN, Lookups: 3}, {Day: s, Kind: billing.Kind(s), Lookups: 1}}
		key := billing.KeyRecord{ID: s, AccountID: s, Label: s, Limit: 3, Created: now}
		revoked := key
		revoked.Revoked = now
		var out []string
		for _, pg := range []struct {
			t    *webui.Template
			data any
		}{
			{p.home, homeData{Account: acc, Report: billing.UsageReport{AccountID: s, Prices: billing.PriceList(billing.DefaultPrices)}, Limit: 5, Usage: summarize(rows, first, last)}},
			{p.keys, keysData{Keys: []keyView{{KeyRecord: key, Current: true}, {KeyRecord: revoked}}, Label: s, RateLimit: s}},
			{p.newKeyTp, newKeyData{Key: s, Record: key, Limit: 3}},
			{p.play, playData{Lookups: lookups, Number: s, Kind: s, Status: 200, Answer: s, Curl: s}},
			{p.jobs, jobsData{Jobs: []jobView{{Job: billing.Job{ID: s, AccountID: s, Kind: s, Status: billing.JobStatus(s), Total: 2, Done: 1, Created: now}, Percent: 50}}, Kinds: jobKinds, Kind: s, WebhookURL: s}},
			{p.secret, secretData{Secret: s}},
		} {
			w := httptest.NewRecorder()
			ui.Render(w, httptest.NewRequest("GET", "/account", nil), pg.t, 200, webui.Page{Title: s, Error: s, Data: pg.data})
			out = append(out, w.Body.String())
		}
		return out
	}
	want := render("x")
	f.Fuzz(func(t *testing.T, s string) {
		if !strings.ContainsAny(s, "<>\"'&") || strings.ContainsAny(s, "\x00\r\x0c") {
			return // only markup characters change markup; NUL, CR and FF the parser rewrites
		}
		for i, page := range render(s) {
			tags, text := htmlshape.Of(page)
			wantTags, _ := htmlshape.Of(want[i])
			if !slices.Equal(tags, wantTags) {
				t.Fatalf("page %d: %q changed the markup:\n%v\nwant\n%v", i, s, tags, wantTags)
			}
			if !strings.Contains(text, s) {
				t.Fatalf("page %d: %q is not in the text", i, s)
			}
		}
	})
}

// FuzzJobForm reads any multipart body as the jobs page's upload: it
// never panics, a form taken holds 1 to billing.MaxJobNumbers numbers of
// at most 64 bytes with no new line, and a refusal is explained in words
// (never as a store's failure).
func FuzzJobForm(f *testing.F) {
	for _, s := range []string{
		"--B\r\nContent-Disposition: form-data; name=\"kind\"\r\n\r\nlrn\r\n--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\n\r\nphone_number\n2025550123\n\r\n--B--\r\n",
		"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\n\r\n2025550123\r\n--B\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n1\r\n--B--\r\n",
		"--B\r\nContent-Disposition: form-data; name=\"enhanced\"\r\n\r\n1\r\n--B--\r\n",
		"--B\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n\"a,b\",phone_number\nx,\"+1 202 555 0123\"\r\n--B--",
		"--B\r\n\r\n\r\n--B--\r\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		form, err := readJobForm(multipart.NewReader(bytes.NewReader(body), "B"))
		if err != nil {
			if _, msg, ok := explain(err); !ok || msg == "" {
				t.Fatalf("%q: %v is not explained", body, err)
			}
			return
		}
		nums := form.upload.Numbers
		if !form.hasFile || len(nums) == 0 || len(nums) > billing.MaxJobNumbers {
			t.Fatalf("%q: taken with %d numbers", body, len(nums))
		}
		for _, n := range nums {
			if len(n) > 64 || strings.ContainsAny(n, "\r\n") {
				t.Fatalf("%q: number %q kept", body, n)
			}
		}
	})
}
