package account

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/webui"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testchromium"
)

// TestBrowserJobs drives the jobs page with Debian's chromium, over the
// pages and the jobs API with a worker running in this process: sign in,
// upload a list, watch the page (reloading itself, with no script) show
// the job finished, and download its results, each NDJSON line the body
// the single-number endpoint answers for its number, the CSV the API's.
func TestBrowserJobs(t *testing.T) {
	ctx, csp := testchromium.Tab(t)
	s := newSite(t, withJobs(billing.JobLimits{}))
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.worker.Run(runCtx); close(done) }()
	t.Cleanup(func() { stop(); <-done })

	n := s.nums
	numbers := []string{n.Ported, n.Pooled, n.Home, n.Vacant, n.Invalid, "+1 (" + n.Home[1:4] + ") " + n.Home[4:7] + "-" + n.Home[7:], "abc"}
	list := filepath.Join(t.TempDir(), "numbers.csv")
	require.NoError(t, os.WriteFile(list, []byte("phone_number\n"+strings.Join(numbers, "\n")+"\n"), 0o600))

	step := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		require.NoError(t, chromedp.Do(c, steps...))
	}
	eval := func(js string) string {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		v, err := chromedp.Run(c, chromedp.Evaluate[string](js))
		require.NoError(t, err, js)
		return v
	}
	base := s.srv.URL
	step(chromedp.Navigate(base+webui.AccountSignIn),
		chromedp.SendKeys(chromedp.ID("key"), s.keyA), chromedp.Submit(chromedp.ID("key")),
		chromedp.WaitVisible(chromedp.ID("balance")),
		chromedp.Click(chromedp.CSS(`a[href="/account/jobs"]`)),
		chromedp.WaitVisible(chromedp.ID("file")),
		chromedp.SetUploadFiles(chromedp.ID("file"), []string{list}),
		chromedp.Click(chromedp.CSS(`input[name="enhanced"]`)),
		chromedp.Submit(chromedp.ID("file")),
		// The page says the job is queued, then reloads itself until
		// the job has ended.
		chromedp.WaitVisible(chromedp.CSS(`p.flash`)),
		chromedp.WaitVisible(chromedp.Search(`//td[@class="status"][normalize-space()="succeeded"]`)),
	)
	js := s.jobsOf(t, s.a.ID)
	require.Len(t, js, 1)
	j := js[0]
	assert.True(t, j.Enhanced, "the box ticked")
	assert.Equal(t, int64(len(numbers)), j.Total)
	assert.Equal(t, "7 / 7", eval(`document.querySelector("#job-`+j.ID+` td.done").textContent`))
	assert.Equal(t, "7", eval(`String(document.querySelector("#job-`+j.ID+` progress").value)`))

	// The links download what the API serves, with the page's session.
	dir := t.TempDir()
	download := func(sel string) string {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		progress := chromedp.Events(c, cdpbrowser.DownloadProgress)
		require.NoError(t, chromedp.Do(c, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Call(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
				Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: &[]bool{true}[0]})
			return err
		}), chromedp.Click(chromedp.CSS(sel))))
		for ev, err := range progress {
			require.NoError(t, err, "downloading %s", sel)
			if ev.State == cdpbrowser.DownloadProgressStateCompleted {
				b, err := os.ReadFile(filepath.Join(dir, ev.GUID))
				require.NoError(t, err)
				return string(b)
			}
			require.NotEqual(t, cdpbrowser.DownloadProgressStateCanceled, ev.State, sel)
		}
		t.Fatalf("downloading %s: no end", sel)
		return ""
	}
	ndjson := download("#job-" + j.ID + " a.ndjson")
	lines := strings.Split(strings.TrimSuffix(ndjson, "\n"), "\n")
	require.Len(t, lines, len(numbers), ndjson)
	for i, num := range numbers {
		q, _ := json.Marshal(num)
		req, err := http.NewRequest(http.MethodPost, s.rest.URL+"/api/v1/lrn", strings.NewReader(`{"phone_number":`+string(q)+`,"include_enhanced_lrn":true}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+s.apiKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		single, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, strings.TrimSuffix(string(single), "\n"), lines[i], "number %q: the single-number endpoint's body", num)
	}
	csv := download("#job-" + j.ID + " a.csv")
	assert.Equal(t, string(s.restGet(t, "/api/v1/jobs/"+j.ID+"/results", "text/csv")), csv)
	assert.Empty(t, csp(), "the pages need nothing the Content Security Policy refuses")
}
