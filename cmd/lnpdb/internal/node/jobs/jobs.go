// Package jobs is a serving process's worker of lookup jobs: it claims a
// chunk of a job from the accounts store (billing.Jobs), answers its
// numbers as the single-number endpoint would (httpapi's AnswerJob, in
// batches), and commits the answers with their charge; and it deletes
// jobs past their retention.
//
// A worker works one chunk at a time in one goroutine, in slices of
// [Config.Slice] numbers, resting after each as long as it took
// ([Config.Rest]), so that a million-number job takes at most half a
// processor from the interactive API.
// Several processes sharing a PostgreSQL store each run one and share the
// chunks. A worker renews its claim ([Config.Lease]) after a slice once
// half of it has passed, so that a chunk slower than the lease stays its
// own; a process killed mid-chunk leaves its claim to expire, after which
// another answers the chunk again: its answers and charge were never
// committed, so nothing is lost or charged twice.
package jobs

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
)

// AnswerFunc answers numbers: lines[i] is numbers[i]'s answer, answered[i]
// whether it is charged (httpapi.Handler.AnswerJob).
type AnswerFunc func(ctx context.Context, kind string, enhanced, messaging bool, numbers []string) (lines [][]byte, answered []bool, err error)

// Config configures a Worker.
type Config struct {
	Store  billing.Jobs
	Answer AnswerFunc
	// Lease is how long a claimed chunk is this worker's without
	// renewal; 0 means a minute. The claim is renewed after each slice
	// that ends more than half a lease after the claim's start or last
	// renewal.
	Lease time.Duration
	// Poll is how often the store is asked for work when there was none
	// (and no Wake came); 0 means a second.
	Poll time.Duration
	// Slice is how many numbers are answered between rests; 0 means 1000.
	Slice int
	// Rest is how long the worker rests after a slice, as a share of
	// the time the slice took: 1 (the default) leaves the processor idle
	// for as long as the worker used it, so that a job takes at most half
	// of one processor from the interactive API; a negative Rest, none.
	Rest float64
	// Sleep waits d (a test's clock); nil means time.Sleep.
	Sleep func(d time.Duration)
	// Retention is how long a stopped job's answers are kept; 0 means 7
	// days.
	Retention time.Duration
	// Stopped, when set, is told of each job a commit stopped (it
	// succeeded, failed or ran out of credit): its webhook, if it has
	// one, is in the outbox.
	Stopped func(billing.Job)
	// Now is the clock; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Worker answers lookup jobs.
type Worker struct {
	cfg  Config
	wake chan struct{}

	mu        sync.Mutex
	lastSweep time.Time
}

// New returns a worker of cfg.
func New(cfg Config) (*Worker, error) {
	if cfg.Store == nil || cfg.Answer == nil {
		return nil, errors.New("jobs: Config.Store and Config.Answer are required")
	}
	if cfg.Lease <= 0 {
		cfg.Lease = time.Minute
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.Slice <= 0 {
		cfg.Slice = 1000
	}
	if cfg.Rest == 0 {
		cfg.Rest = 1
	}
	if cfg.Sleep == nil {
		cfg.Sleep = time.Sleep
	}
	if cfg.Retention <= 0 {
		cfg.Retention = 7 * 24 * time.Hour
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Worker{cfg: cfg, wake: make(chan struct{}, 1)}, nil
}

// Wake tells the worker a job was made or resumed, so that it looks at
// once rather than at its next poll.
func (w *Worker) Wake() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Run works until ctx ends.
func (w *Worker) Run(ctx context.Context) {
	for ctx.Err() == nil {
		worked, err := w.Step(ctx)
		if err != nil && ctx.Err() == nil {
			w.cfg.Logger.LogAttrs(ctx, slog.LevelError, "lookup jobs: a chunk failed", slog.String("error", err.Error()))
		}
		if worked && err == nil {
			continue
		}
		w.sweep(ctx)
		t := time.NewTimer(w.cfg.Poll)
		select {
		case <-ctx.Done():
		case <-w.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// Step claims one chunk, answers it and commits it; it reports whether
// there was one. After a slice that ends more than half a lease after the
// claim or its last renewal, the claim is renewed. A claim lost (the job
// was canceled, or the lease passed and another worker took the chunk),
// found at a renewal or at the commit, is not an error: the chunk is left
// at once, and that worker's answers count.
func (w *Worker) Step(ctx context.Context) (bool, error) {
	claimed := w.cfg.Now()
	c, err := w.cfg.Store.ClaimChunk(ctx, claimed, w.cfg.Lease)
	if err != nil || c == nil {
		return false, err
	}
	lines := make([][]byte, 0, len(c.Numbers))
	answered := make([]bool, 0, len(c.Numbers))
	for i := 0; i < len(c.Numbers); i += w.cfg.Slice {
		part := c.Numbers[i:min(i+w.cfg.Slice, len(c.Numbers))]
		start := w.cfg.Now()
		l, a, err := w.cfg.Answer(ctx, c.Kind, c.Enhanced, c.Messaging, part)
		if err != nil {
			// No table, or it was swapped: the claim lapses and the chunk
			// is answered again.
			return true, err
		}
		lines, answered = append(lines, l...), append(answered, a...)
		if rest := time.Duration(float64(w.cfg.Now().Sub(start)) * w.cfg.Rest); rest > 0 {
			w.cfg.Sleep(rest)
		} else {
			runtime.Gosched()
		}
		if now := w.cfg.Now(); now.Sub(claimed) > w.cfg.Lease/2 {
			// Past half the lease: keep the claim, or, when another worker
			// has the chunk or the job stopped, leave the chunk at once.
			err := w.cfg.Store.RenewChunk(ctx, c, now, w.cfg.Lease)
			if errors.Is(err, billing.ErrClaimLost) {
				return true, nil
			}
			if err != nil {
				return true, err
			}
			claimed = now
		}
	}
	j, err := w.cfg.Store.CommitChunk(ctx, c, lines, answered, w.cfg.Now())
	if errors.Is(err, billing.ErrClaimLost) {
		return true, nil
	}
	if err == nil && j.Status != billing.JobRunning && w.cfg.Stopped != nil {
		w.cfg.Stopped(j)
	}
	return true, err
}

// sweep deletes the jobs past their retention, at most once an hour.
func (w *Worker) sweep(ctx context.Context) {
	now := w.cfg.Now()
	w.mu.Lock()
	due := now.Sub(w.lastSweep) >= time.Hour
	if due {
		w.lastSweep = now
	}
	w.mu.Unlock()
	if !due {
		return
	}
	if _, err := w.cfg.Store.DeleteJobs(ctx, now.Add(-w.cfg.Retention)); err != nil && ctx.Err() == nil {
		w.cfg.Logger.LogAttrs(ctx, slog.LevelError, "lookup jobs: deleting old jobs failed", slog.String("error", err.Error()))
	}
}
