package jobs

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testclock"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testpg"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	os.Exit(testpg.Main(m))
}

// childEnv makes the test binary a serving process's worker (childMain)
// on the PostgreSQL store it names.
const childEnv = "LNPDB_JOBS_CHILD_DSN"

// childMain works chunks with a minute's lease, and at its third chunk
// says "mid" and stops answering: it is killed there.
func childMain() int {
	ctx := context.Background()
	s, err := billing.Open(ctx, os.Getenv(childEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	calls := 0
	w, _ := New(Config{Store: s.(billing.Jobs), Lease: time.Minute, Slice: billing.JobChunkSize, Answer: func(ctx context.Context, kind string, e, m bool, n []string) ([][]byte, []bool, error) {
		if calls++; calls == 3 {
			fmt.Println("mid")
			select {}
		}
		return answer(ctx, kind, e, m, n)
	}})
	for {
		if _, err := w.Step(ctx); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
}

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// answer is a fake lookup: "n:<number>", every number answered.
func answer(_ context.Context, _ string, _, _ bool, numbers []string) ([][]byte, []bool, error) {
	lines := make([][]byte, len(numbers))
	ok := make([]bool, len(numbers))
	for i, n := range numbers {
		lines[i], ok[i] = []byte("n:"+n), true
	}
	return lines, ok, nil
}

// A worker stopped mid-chunk (its lookups never return, as if killed)
// leaves its claim; once the lease has passed another node's worker
// answers that chunk and the rest, and the first worker, back late, finds
// its claim lost when it renews it and commits nothing: every number
// answered once, in order, and charged once.
func TestWorkerKilledMidChunk(t *testing.T) {
	for _, name := range []string{"bolt", "postgres"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			var nodeA, nodeB billing.Store
			var err error
			if name == "bolt" {
				nodeA, err = billing.OpenBolt(filepath.Join(t.TempDir(), "a.db"))
				nodeB = nodeA // bbolt: one process
			} else {
				dsn := testpg.New(t)
				if nodeA, err = billing.Open(ctx, dsn); err == nil {
					nodeB, err = billing.Open(ctx, dsn)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { nodeA.Close(); nodeB.Close() })
			acct, err := nodeA.CreateAccount(ctx, "Acme", t0)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := nodeA.Credit(ctx, acct.ID, 1_000_000, "INV", t0); err != nil {
				t.Fatal(err)
			}
			var nums []string
			for i := range 25 {
				nums = append(nums, fmt.Sprintf("1201555%04d", i))
			}
			job, err := nodeA.(billing.Jobs).CreateJob(ctx, billing.JobSpec{AccountID: acct.ID, Numbers: nums, ChunkSize: 10}, billing.JobLimits{}, t0)
			if err != nil {
				t.Fatal(err)
			}
			clock := testclock.New(t0)
			started, release := make(chan struct{}), make(chan struct{})
			var answeredA atomic.Int64
			a, _ := New(Config{Store: nodeA.(billing.Jobs), Now: clock.Now, Lease: time.Minute, Rest: -1, Answer: func(ctx context.Context, kind string, e, m bool, n []string) ([][]byte, []bool, error) {
				close(started)
				<-release
				answeredA.Add(int64(len(n)))
				return answer(ctx, kind, e, m, n)
			}})
			b, _ := New(Config{Store: nodeB.(billing.Jobs), Now: clock.Now, Lease: time.Minute, Rest: -1, Answer: answer})
			doneA := make(chan error, 1)
			go func() {
				_, err := a.Step(ctx)
				doneA <- err
			}()
			<-started
			if worked, err := b.Step(ctx); err != nil || !worked {
				t.Fatalf("B during A's lease: %v %v", worked, err)
			}
			clock.Advance(time.Minute + time.Second)
			for {
				worked, err := b.Step(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if !worked {
					break
				}
			}
			close(release)
			if err := <-doneA; err != nil {
				t.Fatalf("A back late: %v", err)
			}
			if answeredA.Load() != 10 {
				t.Fatalf("A answered %d", answeredA.Load())
			}
			js := nodeB.(billing.Jobs)
			j, err := js.Job(ctx, acct.ID, job.ID)
			want := billing.Micros(25-billing.FreeTier) * billing.DefaultPrices[billing.KindLRN]
			if err != nil || j.Status != billing.JobSucceeded || j.Done != 25 || j.Paid != 25 || j.Charged != want {
				t.Fatalf("job %+v %v", j, err)
			}
			i := 0
			err = js.JobResults(ctx, acct.ID, job.ID, func(n string, line []byte) error {
				if n != nums[i] || string(line) != "n:"+nums[i] {
					return fmt.Errorf("result %d: %s %s", i, n, line)
				}
				i++
				return nil
			})
			if err != nil || i != 25 {
				t.Fatalf("%d results: %v", i, err)
			}
			a2, _ := nodeB.Account(ctx, acct.ID)
			usage, _ := nodeB.Usage(ctx, acct.ID, "2026-11")
			var charged billing.Micros
			for _, u := range usage {
				charged += u.Amount
			}
			if a2.Balance != 1_000_000-want || charged != want {
				t.Fatalf("balance %s, ledger %s, want charged %s", a2.Balance, charged, want)
			}
		})
	}
}

// A serving process killed (SIGKILL) in the middle of a job, two chunks
// committed and the third claimed and half answered, loses nothing and
// charges nothing twice: another process, once the claim's minute has
// passed, answers the rest, and every number is answered and charged once.
func TestWorkerKill9(t *testing.T) {
	ctx := context.Background()
	dsn := testpg.New(t)
	s, err := billing.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	js := s.(billing.Jobs)
	acct, _ := s.CreateAccount(ctx, "Acme", time.Now())
	if _, _, err := s.Credit(ctx, acct.ID, 1_000_000_000, "INV", time.Now()); err != nil {
		t.Fatal(err)
	}
	nums := make([]string, 50_000)
	for i := range nums {
		nums[i] = fmt.Sprintf("1201%07d", i)
	}
	job, err := js.CreateJob(ctx, billing.JobSpec{AccountID: acct.ID, Numbers: nums}, billing.JobLimits{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), childEnv+"="+dsn)
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "mid\n" {
		child.Process.Kill()
		t.Fatalf("child said %q: %v", line, err)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	if j, _ := js.Job(ctx, acct.ID, job.ID); j.Done != 20_000 || j.Status != billing.JobRunning {
		t.Fatalf("after the kill: %+v", j)
	}
	later := func() time.Time { return time.Now().Add(2 * time.Minute) }
	w, _ := New(Config{Store: js, Now: later, Answer: answer})
	for {
		worked, err := w.Step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !worked {
			break
		}
	}
	j, err := js.Job(ctx, acct.ID, job.ID)
	want := billing.Micros(50_000-billing.FreeTier) * billing.DefaultPrices[billing.KindLRN]
	if err != nil || j.Status != billing.JobSucceeded || j.Done != 50_000 || j.Paid != 50_000 || j.Charged != want {
		t.Fatalf("job %+v %v, want charged %s", j, err, want)
	}
	i := 0
	err = js.JobResults(ctx, acct.ID, job.ID, func(n string, line []byte) error {
		if n != nums[i] || string(line) != "n:"+n {
			return fmt.Errorf("result %d: %s %s", i, n, line)
		}
		i++
		return nil
	})
	if err != nil || i != 50_000 {
		t.Fatalf("%d results: %v", i, err)
	}
	var charged billing.Micros
	var lookups int64
	for _, m := range slices.Compact([]string{billing.Month(job.Created), billing.Month(later())}) {
		usage, _ := s.Usage(ctx, acct.ID, m)
		for _, u := range usage {
			charged += u.Amount
			lookups += u.Lookups
		}
	}
	if charged != want || lookups != 50_000 {
		t.Fatalf("ledger: %d lookups, %s charged", lookups, charged)
	}
}

// boltJob makes a bbolt store, an account with an empty wallet and a job
// of spec for it, at t0.
func boltJob(t *testing.T, spec billing.JobSpec) (*billing.BoltStore, billing.Account, billing.Job) {
	t.Helper()
	ctx := context.Background()
	s, err := billing.OpenBolt(filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	acct, err := s.CreateAccount(ctx, "Acme", t0)
	if err != nil {
		t.Fatal(err)
	}
	spec.AccountID = acct.ID
	job, err := s.CreateJob(ctx, spec, billing.JobLimits{}, t0)
	if err != nil {
		t.Fatal(err)
	}
	return s, acct, job
}

// The worker rests after each slice for as long as the slice took.
func TestWorkerRests(t *testing.T) {
	ctx := context.Background()
	s, _, _ := boltJob(t, billing.JobSpec{Kind: "trust", Numbers: make([]string, 25)})
	clock := testclock.New(t0)
	var rests []time.Duration
	w, _ := New(Config{Store: s, Now: clock.Now, Slice: 10, Sleep: func(d time.Duration) { rests = append(rests, d) },
		Answer: func(ctx context.Context, kind string, e, m bool, n []string) ([][]byte, []bool, error) {
			clock.Advance(time.Duration(len(n)) * time.Millisecond)
			return answer(ctx, kind, e, m, n)
		}})
	if worked, err := w.Step(ctx); err != nil || !worked {
		t.Fatalf("step %v %v", worked, err)
	}
	if want := []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 5 * time.Millisecond}; !slices.Equal(rests, want) {
		t.Fatalf("rested %v, want %v", rests, want)
	}
}

// The worker deletes jobs past their retention.
func TestWorkerRetention(t *testing.T) {
	ctx := context.Background()
	s, acct, job := boltJob(t, billing.JobSpec{Kind: "cnam", Numbers: []string{"12015550123"}})
	clock := testclock.New(t0)
	w, _ := New(Config{Store: s, Now: clock.Now, Answer: answer, Retention: 24 * time.Hour})
	if worked, err := w.Step(ctx); err != nil || !worked {
		t.Fatalf("step %v %v", worked, err)
	}
	if j, _ := s.Job(ctx, acct.ID, job.ID); j.Status != billing.JobInsufficientBalance {
		t.Fatalf("an empty wallet's job: %+v", j)
	}
	w.sweep(ctx)
	if _, err := s.Job(ctx, acct.ID, job.ID); err != nil {
		t.Fatalf("deleted before its time: %v", err)
	}
	clock.Advance(25 * time.Hour)
	w.sweep(ctx)
	if _, err := s.Job(ctx, acct.ID, job.ID); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("kept past retention: %v", err)
	}
}

// creditedJob is boltJob with a wallet of 1,000,000 micros and ten numbers
// of a trust job.
func creditedJob(t *testing.T) (*billing.BoltStore, billing.Account, billing.Job) {
	t.Helper()
	nums := make([]string, 10)
	for i := range nums {
		nums[i] = fmt.Sprintf("1201555%04d", i)
	}
	s, acct, job := boltJob(t, billing.JobSpec{Kind: "trust", Numbers: nums})
	if _, _, err := s.Credit(context.Background(), acct.ID, 1_000_000, "INV", t0); err != nil {
		t.Fatal(err)
	}
	return s, acct, job
}

// A worker whose slices take, together, longer than its lease renews its
// claim as it goes: a competing worker trying at every slice gets nothing,
// and the first commits the whole chunk.
func TestWorkerRenewsItsClaim(t *testing.T) {
	ctx := context.Background()
	s, acct, job := creditedJob(t)
	clock := testclock.New(t0)
	other, _ := New(Config{Store: s, Now: clock.Now, Lease: 30 * time.Second, Rest: -1, Answer: answer})
	slicesAnswered, otherWorked := 0, 0
	w, _ := New(Config{Store: s, Now: clock.Now, Lease: 30 * time.Second, Slice: 2, Rest: -1,
		Answer: func(ctx context.Context, kind string, e, m bool, n []string) ([][]byte, []bool, error) {
			slicesAnswered++
			clock.Advance(10 * time.Second)
			worked, err := other.Step(ctx)
			if err != nil {
				return nil, nil, err
			}
			if worked {
				otherWorked++
			}
			return answer(ctx, kind, e, m, n)
		}})
	if worked, err := w.Step(ctx); err != nil || !worked {
		t.Fatalf("step %v %v", worked, err)
	}
	if slicesAnswered != 5 || otherWorked != 0 {
		t.Fatalf("%d slices answered over 50 s of a 30 s lease; the competing worker took %d chunks", slicesAnswered, otherWorked)
	}
	j, err := s.Job(ctx, acct.ID, job.ID)
	if want := 10 * billing.DefaultPrices[billing.KindTrust]; err != nil || j.Status != billing.JobSucceeded || j.Done != 10 || j.Charged != want {
		t.Fatalf("job %+v %v, want charged %s", j, err, want)
	}
}

// A worker whose claim was taken (its lease passed before it renewed)
// leaves the chunk after the slice in which renewal failed, commits
// nothing, and the new holder's commit counts.
func TestWorkerLeavesATakenChunk(t *testing.T) {
	ctx := context.Background()
	s, acct, job := creditedJob(t)
	clock := testclock.New(t0)
	var taken *billing.JobChunk
	slicesAnswered := 0
	w, _ := New(Config{Store: s, Now: clock.Now, Lease: 30 * time.Second, Slice: 2, Rest: -1,
		Answer: func(ctx context.Context, kind string, e, m bool, n []string) ([][]byte, []bool, error) {
			if slicesAnswered++; slicesAnswered == 2 {
				clock.Advance(31 * time.Second)
				c, err := s.ClaimChunk(ctx, clock.Now(), 30*time.Second)
				if err != nil {
					return nil, nil, err
				}
				taken = c
			}
			return answer(ctx, kind, e, m, n)
		}})
	if worked, err := w.Step(ctx); err != nil || !worked {
		t.Fatalf("step %v %v", worked, err)
	}
	if taken == nil || slicesAnswered != 2 {
		t.Fatalf("taken %v; %d slices answered, want 2", taken != nil, slicesAnswered)
	}
	if j, _ := s.Job(ctx, acct.ID, job.ID); j.Done != 0 || j.Charged != 0 {
		t.Fatalf("the worker that lost its claim committed: %+v", j)
	}
	lines, ok, _ := answer(ctx, taken.Kind, false, false, taken.Numbers)
	j, err := s.CommitChunk(ctx, taken, lines, ok, clock.Now())
	if err != nil || j.Status != billing.JobSucceeded || j.Done != 10 {
		t.Fatalf("the new holder's commit: %+v %v", j, err)
	}
}
