package billing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func jobsOf(s Store) Jobs { return s.(Jobs) }

// answerAll answers a claimed chunk: the line of a number is "n:<number>",
// and numbers starting with "bad" are not charged (as an invalid number).
func answerAll(c *JobChunk) ([][]byte, []bool) {
	lines := make([][]byte, len(c.Numbers))
	ok := make([]bool, len(c.Numbers))
	for i, n := range c.Numbers {
		lines[i] = []byte("n:" + n)
		ok[i] = !strings.HasPrefix(n, "bad")
	}
	return lines, ok
}

// work claims and commits chunks at now until none is left or a commit
// stops the job; it returns the last job state.
func work(t *testing.T, js Jobs, now time.Time) Job {
	t.Helper()
	ctx := context.Background()
	var j Job
	for {
		c, err := js.ClaimChunk(ctx, now, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if c == nil {
			return j
		}
		lines, ok := answerAll(c)
		if j, err = js.CommitChunk(ctx, c, lines, ok, now); err != nil {
			t.Fatal(err)
		}
	}
}

func results(t *testing.T, js Jobs, acct, id string) []string {
	t.Helper()
	var out []string
	err := js.JobResults(context.Background(), acct, id, func(n string, l []byte) error {
		if string(l) != "n:"+n {
			return fmt.Errorf("number %q has the answer %q", n, l)
		}
		out = append(out, string(l))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func numbers(n int, bad ...int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("2015550%04d", i)
	}
	for _, b := range bad {
		out[b] = "bad" + out[b]
	}
	return out
}

func TestJobRunsAndCharges(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		js := jobsOf(s)
		a := mustAccount(t, s, 1_000_000)
		nums := numbers(25, 3, 17)
		j, err := js.CreateJob(ctx, JobSpec{AccountID: a.ID, Numbers: nums, ChunkSize: 10, WebhookURL: "https://example.com/h"}, JobLimits{}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status != JobQueued || j.Total != 25 || j.Chunks != 3 || !strings.HasPrefix(j.ID, "job_") {
			t.Fatalf("created %+v", j)
		}
		j = work(t, js, t0)
		// 23 answered: the first FreeTier free, the rest at the LRN price.
		want := Micros(23-FreeTier) * DefaultPrices[KindLRN]
		if j.Status != JobSucceeded || j.Done != 25 || j.Paid != 23 || j.Free != FreeTier || j.Charged != want || j.Finished.IsZero() {
			t.Fatalf("finished %+v, want charged %d", j, want)
		}
		acc, charged := conserved(t, s, a.ID)
		if charged != want || acc.Balance != 1_000_000-want {
			t.Fatalf("ledger charged %d, balance %d", charged, acc.Balance)
		}
		got := results(t, js, a.ID, j.ID)
		if len(got) != 25 {
			t.Fatalf("%d results", len(got))
		}
		for i, n := range nums {
			if got[i] != "n:"+n {
				t.Fatalf("result %d is %q, want n:%s", i, got[i], n)
			}
		}
		// The webhook was written with the job's end, and is claimed once.
		due, err := js.WebhooksDue(ctx, t0, 10)
		if err != nil || len(due) != 1 {
			t.Fatalf("due %v %v", due, err)
		}
		var ev struct {
			Type string  `json:"type"`
			Data JobView `json:"data"`
		}
		if err := json.Unmarshal(due[0].Body, &ev); err != nil || ev.Type != "job.completed" || ev.Data.ID != j.ID || ev.Data.Charged != want.String() || ev.Data.Status != JobSucceeded {
			t.Fatalf("webhook body %s: %v", due[0].Body, err)
		}
		if again, _ := js.WebhooksDue(ctx, t0.Add(time.Second), 10); len(again) != 0 {
			t.Fatalf("claimed twice: %v", again)
		}
		if err := js.WebhookRetry(ctx, due[0].ID, t0.Add(time.Minute), 1, "503"); err != nil {
			t.Fatal(err)
		}
		if err := js.SetWebhookSecret(ctx, a.ID, "whsec_c2VjcmV0", t0); err != nil {
			t.Fatal(err)
		}
		again, err := js.WebhooksDue(ctx, t0.Add(time.Minute), 10)
		if err != nil || len(again) != 1 || again[0].ID != due[0].ID || again[0].Attempts != 1 || again[0].Secret != "whsec_c2VjcmV0" {
			t.Fatalf("retry %+v %v", again, err)
		}
		if err := js.WebhookDone(ctx, due[0].ID, t0.Add(time.Minute), 2); err != nil {
			t.Fatal(err)
		}
		if left, _ := js.WebhooksDue(ctx, t0.Add(time.Hour), 10); len(left) != 0 {
			t.Fatalf("delivered, still due: %v", left)
		}
		// Retention deletes the job and its ended delivery.
		if n, err := js.DeleteJobs(ctx, t0.Add(2*time.Minute)); err != nil || n != 1 {
			t.Fatalf("deleted %d: %v", n, err)
		}
		if n := outboxLen(t, s); n != 0 {
			t.Fatalf("%d deliveries kept", n)
		}
	})
}

func TestJobInsufficientBalanceAndResume(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		js := jobsOf(s)
		price := DefaultPrices[KindCNAM]
		a := mustAccount(t, s, 7*price+price/2) // pays 7 CNAM lookups (no free tier)
		nums := numbers(20, 2)
		j, err := js.CreateJob(ctx, JobSpec{AccountID: a.ID, Kind: "cnam", Numbers: nums, ChunkSize: 6}, JobLimits{}, t0)
		if err != nil {
			t.Fatal(err)
		}
		j = work(t, js, t0)
		// 7 paid and the invalid one free: the 9th number is the first unpaid.
		if j.Status != JobInsufficientBalance || j.Done != 8 || j.Paid != 7 || j.Charged != 7*price {
			t.Fatalf("stopped %+v", j)
		}
		if got := results(t, js, a.ID, j.ID); len(got) != 8 || got[7] != "n:"+nums[7] {
			t.Fatalf("results so far %q", got)
		}
		if c, _ := js.ClaimChunk(ctx, t0, time.Minute); c != nil {
			t.Fatalf("a stopped job's chunk claimed: %+v", c)
		}
		if _, _, err := s.Credit(ctx, a.ID, 100*price, "INV-1", t0); err != nil {
			t.Fatal(err)
		}
		if j, err = js.ResumeJob(ctx, a.ID, j.ID, t0); err != nil || j.Status != JobQueued {
			t.Fatalf("resume %+v %v", j, err)
		}
		if _, err := js.ResumeJob(ctx, a.ID, j.ID, t0); !errors.Is(err, ErrConflict) {
			t.Fatalf("resuming a queued job: %v", err)
		}
		j = work(t, js, t0)
		if j.Status != JobSucceeded || j.Done != 20 || j.Paid != 19 || j.Charged != 19*price {
			t.Fatalf("resumed %+v", j)
		}
		if _, charged := conserved(t, s, a.ID); charged != j.Charged {
			t.Fatalf("ledger %d, job %d", charged, j.Charged)
		}
		got := results(t, js, a.ID, j.ID)
		for i, n := range nums {
			if got[i] != "n:"+n {
				t.Fatalf("result %d is %q", i, got[i])
			}
		}
	})
}

// claimTrustJob makes an account with 1,000,000 micros and a trust job of
// five numbers (one chunk), and claims its chunk at t0 for a minute.
func claimTrustJob(t *testing.T, s Store) (Account, Job, *JobChunk) {
	t.Helper()
	ctx := context.Background()
	js := jobsOf(s)
	a := mustAccount(t, s, 1_000_000)
	j, err := js.CreateJob(ctx, JobSpec{AccountID: a.ID, Kind: "trust", Numbers: numbers(5)}, JobLimits{}, t0)
	if err != nil {
		t.Fatal(err)
	}
	first, err := js.ClaimChunk(ctx, t0, time.Minute)
	if err != nil || first == nil {
		t.Fatalf("claim %v %v", first, err)
	}
	return a, j, first
}

// A worker that stops mid-chunk (killed) leaves its claim; after the lease
// another claims the chunk, and the first's late commit is refused: each
// number is answered and charged once.
func TestJobClaimLost(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		js := jobsOf(s)
		a, j, first := claimTrustJob(t, s)
		if c, _ := js.ClaimChunk(ctx, t0.Add(30*time.Second), time.Minute); c != nil {
			t.Fatalf("claimed during the lease: %+v", c)
		}
		second, err := js.ClaimChunk(ctx, t0.Add(61*time.Second), time.Minute)
		if err != nil || second == nil || second.Seq != first.Seq || second.Claim == first.Claim {
			t.Fatalf("reclaim %+v %v", second, err)
		}
		// The first worker, back late, commits before the second: refused.
		lines, ok := answerAll(first)
		if _, err := js.CommitChunk(ctx, first, lines, ok, t0.Add(62*time.Second)); !errors.Is(err, ErrClaimLost) {
			t.Fatalf("stale commit before the current one: %v", err)
		}
		lines, ok = answerAll(second)
		if j, err = js.CommitChunk(ctx, second, lines, ok, t0.Add(62*time.Second)); err != nil || j.Status != JobSucceeded {
			t.Fatalf("commit %+v %v", j, err)
		}
		lines, ok = answerAll(first)
		if _, err := js.CommitChunk(ctx, first, lines, ok, t0.Add(63*time.Second)); !errors.Is(err, ErrClaimLost) {
			t.Fatalf("stale commit: %v", err)
		}
		if _, err := js.CommitChunk(ctx, second, lines, ok, t0.Add(63*time.Second)); !errors.Is(err, ErrClaimLost) {
			t.Fatalf("second commit of one claim: %v", err)
		}
		j, _ = js.Job(ctx, a.ID, j.ID)
		want := 5 * DefaultPrices[KindTrust]
		if j.Done != 5 || j.Paid != 5 || j.Charged != want {
			t.Fatalf("job %+v", j)
		}
		if _, charged := conserved(t, s, a.ID); charged != want {
			t.Fatalf("charged %d, want %d", charged, want)
		}
		if got := results(t, js, a.ID, j.ID); len(got) != 5 {
			t.Fatalf("%d results", len(got))
		}
	})
}

// A worker that renews its claim keeps its chunk past the first lease;
// once another worker has the chunk, or the job is canceled, renewal is
// refused.
func TestJobRenewChunk(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		js := jobsOf(s)
		a, j, first := claimTrustJob(t, s)
		if err := js.RenewChunk(ctx, first, t0.Add(40*time.Second), time.Minute); err != nil {
			t.Fatalf("renewal by the holder: %v", err)
		}
		if !first.Until.Equal(t0.Add(100 * time.Second)) {
			t.Fatalf("renewed until %v", first.Until)
		}
		if c, err := js.ClaimChunk(ctx, t0.Add(61*time.Second), time.Minute); err != nil || c != nil {
			t.Fatalf("claimed past the first lease, within the renewed one: %+v %v", c, err)
		}
		second, err := js.ClaimChunk(ctx, t0.Add(101*time.Second), time.Minute)
		if err != nil || second == nil || second.Seq != first.Seq || second.Claim == first.Claim {
			t.Fatalf("reclaim %+v %v", second, err)
		}
		if err := js.RenewChunk(ctx, first, t0.Add(102*time.Second), time.Minute); !errors.Is(err, ErrClaimLost) {
			t.Fatalf("renewal of a claim taken over: %v", err)
		}
		if err := js.RenewChunk(ctx, second, t0.Add(102*time.Second), time.Minute); err != nil {
			t.Fatalf("renewal by the new holder: %v", err)
		}
		if _, err := js.CancelJob(ctx, a.ID, j.ID, t0.Add(103*time.Second)); err != nil {
			t.Fatal(err)
		}
		if err := js.RenewChunk(ctx, second, t0.Add(104*time.Second), time.Minute); !errors.Is(err, ErrClaimLost) {
			t.Fatalf("renewal in a canceled job: %v", err)
		}
		if !second.Until.Equal(t0.Add(162 * time.Second)) {
			t.Fatalf("a refused renewal moved the claim's end to %v", second.Until)
		}
	})
}

func TestJobCancelAndLimits(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		js := jobsOf(s)
		a := mustAccount(t, s, 1_000_000)
		lim := JobLimits{MaxUnfinished: 2, MaxNumbersPerHour: 25}
		j1, err := js.CreateJob(ctx, JobSpec{AccountID: a.ID, Numbers: numbers(10)}, lim, t0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.CreateJob(ctx, JobSpec{AccountID: a.ID, Numbers: numbers(10)}, lim, t0.Add(time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if _, err := js.CreateJob(ctx, JobSpec{AccountID: a.ID, Numbers: numbers(1)}, lim, t0); !errors.Is(err, ErrJobLimit) {
			t.Fatalf("third unfinished job: %v", err)
		}
		c, err := js.ClaimChunk(ctx, t0, time.Minute)
		if err != nil || c == nil || c.JobID != j1.ID {
			t.Fatalf("claim %+v %v", c, err)
		}
		if j1, err = js.CancelJob(ctx, a.ID, j1.ID, t0); err != nil || j1.Status != JobCanceled {
			t.Fatalf("cancel %+v %v", j1, err)
		}
		lines, ok := answerAll(c)
		if _, err := js.CommitChunk(ctx, c, lines, ok, t0); !errors.Is(err, ErrClaimLost) {
			t.Fatalf("commit of a canceled job: %v", err)
		}
		if _, charged := conserved(t, s, a.ID); charged != 0 {
			t.Fatalf("a canceled job charged %d", charged)
		}
		// One unfinished now, but 20 numbers this hour: 6 more pass 25.
		if _, err := js.CreateJob(ctx, JobSpec{AccountID: a.ID, Numbers: numbers(6)}, lim, t0); !errors.Is(err, ErrJobLimit) {
			t.Fatalf("numbers per hour: %v", err)
		}
		if _, err := js.CreateJob(ctx, JobSpec{AccountID: a.ID, Numbers: numbers(6)}, lim, t0.Add(61*time.Minute)); err != nil {
			t.Fatalf("an hour later: %v", err)
		}
		if _, err := js.CreateJob(ctx, JobSpec{AccountID: a.ID, Kind: "cnam", Enhanced: true, Numbers: numbers(1)}, JobLimits{}, t0); !errors.Is(err, ErrInvalid) {
			t.Fatalf("enhanced cnam: %v", err)
		}
		if _, err := js.CreateJob(ctx, JobSpec{AccountID: a.ID, Numbers: make([]string, MaxJobNumbers+1)}, JobLimits{}, t0); !errors.Is(err, ErrInvalid) {
			t.Fatalf("too many numbers: %v", err)
		}
		if _, err := js.Job(ctx, "acct_other", j1.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("another account's job: %v", err)
		}
		list, err := js.ListJobs(ctx, a.ID, 0)
		if err != nil || len(list) != 3 || list[0].Created.Before(list[2].Created) {
			t.Fatalf("list %+v %v", list, err)
		}
		// Retention: the canceled job goes, the unfinished ones stay.
		if n, err := js.DeleteJobs(ctx, t0.Add(time.Second)); err != nil || n != 1 {
			t.Fatalf("deleted %d %v", n, err)
		}
		if _, err := js.Job(ctx, a.ID, j1.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("deleted job: %v", err)
		}
		if list, _ := js.ListJobs(ctx, "", 0); len(list) != 2 {
			t.Fatalf("left %d jobs", len(list))
		}
	})
}

// outboxLen counts the deliveries s keeps, ended ones included.
func outboxLen(t *testing.T, s Store) int {
	t.Helper()
	n := 0
	var err error
	switch s := s.(type) {
	case *BoltStore:
		err = s.db.View(func(tx *bolt.Tx) error { n = tx.Bucket(bOutbox).Stats().KeyN; return nil })
	case *PostgresStore:
		err = s.pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_outbox`).Scan(&n)
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A job of an account suspended while it runs fails, its answers so far
// kept, nothing more charged; its webhook says job.failed.
func TestJobOfSuspendedAccountFails(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		js := jobsOf(s)
		a := mustAccount(t, s, 1_000_000)
		j, err := js.CreateJob(ctx, JobSpec{AccountID: a.ID, Kind: "cnam", Numbers: numbers(8), ChunkSize: 4, WebhookURL: "https://example.com/h"}, JobLimits{}, t0)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := js.ClaimChunk(ctx, t0, time.Minute)
		lines, ok := answerAll(c)
		if _, err := js.CommitChunk(ctx, c, lines, ok, t0); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetStatus(ctx, a.ID, StatusSuspended); err != nil {
			t.Fatal(err)
		}
		j = work(t, js, t0)
		price := DefaultPrices[KindCNAM]
		if j.Status != JobFailed || j.Done != 4 || j.Charged != 4*price || j.Finished.IsZero() {
			t.Fatalf("job %+v", j)
		}
		if _, charged := conserved(t, s, a.ID); charged != 4*price {
			t.Fatalf("charged %d", charged)
		}
		due, err := js.WebhooksDue(ctx, t0, 10)
		if err != nil || len(due) != 1 || !strings.Contains(string(due[0].Body), `"type":"job.failed"`) {
			t.Fatalf("webhook %+v %v", due, err)
		}
	})
}
