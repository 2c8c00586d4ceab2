package jobsapi_test

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/jobsapi"
)

// frozenJobs is an accounts store that does not answer: each call waits
// for its context, as a call to a stopped PostgreSQL does.
type frozenJobs struct{ billing.Jobs }

func (frozenJobs) ListJobs(ctx context.Context, _ string, _ int) ([]billing.Job, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (frozenJobs) Job(ctx context.Context, _, _ string) (billing.Job, error) {
	<-ctx.Done()
	return billing.Job{}, ctx.Err()
}

func (frozenJobs) CancelJob(ctx context.Context, _, _ string, _ time.Time) (billing.Job, error) {
	<-ctx.Done()
	return billing.Job{}, ctx.Err()
}

// TestFrozenStoreIsUnavailable: with the store frozen, a request's short
// store calls end at StoreTimeout and are answered 503, not held for as
// long as the store is frozen.
func TestFrozenStoreIsUnavailable(t *testing.T) {
	store, err := billing.OpenBolt(filepath.Join(t.TempDir(), "accounts.db"))
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	api, err := jobsapi.New(jobsapi.Config{Store: frozenJobs{store}, StoreTimeout: 50 * time.Millisecond,
		AccountOf: func(auth.Key) (string, bool) { return "acct", true }})
	require.NoError(t, err)
	calls := map[string]func() error{
		"list":   func() error { _, err := api.List(context.Background(), "acct", 10); return err },
		"job":    func() error { _, err := api.Job(context.Background(), "acct", "job_x"); return err },
		"cancel": func() error { _, err := api.Cancel(context.Background(), "acct", "job_x"); return err },
	}
	for name, call := range calls {
		done := make(chan error, 1)
		go func() { done <- call() }()
		select {
		case err := <-done:
			require.True(t, errors.Is(err, context.DeadlineExceeded), "%s: %v", name, err)
			require.Equal(t, http.StatusServiceUnavailable, jobsapi.ProblemOf(err).Status, name)
		case <-time.After(time.Minute): // a bound on the failure only: the call waits for the store
			t.Fatalf("%s: still waiting for the frozen store after a minute", name)
		}
	}
}
