package serve

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/httpapi"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/jobsapi"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/jobs"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/webhook"
)

// jobsFlags are serve's flags of lookup jobs.
type jobsFlags struct {
	retention            time.Duration
	maxUnfinished        int
	maxNumbersPerHour    int64
	allowPrivateWebhooks bool
}

func addJobsFlags(fs *pflag.FlagSet) *jobsFlags {
	j := &jobsFlags{}
	fs.DurationVar(&j.retention, "jobs-retention", 7*24*time.Hour, "with --accounts: delete a lookup job's results this long after it stopped")
	fs.IntVar(&j.maxUnfinished, "jobs-max-queued", 10, "with --accounts: the most lookup jobs an account may have unfinished (queued, running or out of credit); 0: no limit")
	fs.Int64Var(&j.maxNumbersPerHour, "jobs-max-numbers-per-hour", 5_000_000, "with --accounts: the most numbers the lookup jobs an account makes in an hour may hold; 0: no limit")
	fs.BoolVar(&j.allowPrivateWebhooks, "webhooks-allow-private", false, "let lookup jobs' webhook_url be http:// and name private, loopback and link-local addresses (for tests and closed networks)")
	return j
}

// wire adds the lookup jobs API to cfg, for the accounts of b, and returns
// what starts this process's worker and webhook deliverer once the
// handler is made; they run until onClose's function is called. The
// worker claims a chunk for lease (serve's --lease-ttl): what a killed
// process held is answered by another once it lapses, as its credit is
// returned.
func (j *jobsFlags) wire(cfg *httpapi.Config, b *billed, lease time.Duration, reg prometheus.Registerer, log *slog.Logger, onClose func(func())) (func(*httpapi.Handler), error) {
	store, ok := b.store.(billing.Jobs)
	if !ok {
		return func(*httpapi.Handler) {}, nil
	}
	metrics, err := webhook.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	d := &webhook.Deliverer{Outbox: billing.WebhookOutbox(store), Client: webhook.NewClient(webhook.ClientOptions{AllowPrivate: j.allowPrivateWebhooks}),
		Log: log, Metrics: metrics}
	var w *jobs.Worker
	api, err := jobsapi.New(jobsapi.Config{
		Store: store,
		AccountOf: func(k auth.Key) (string, bool) {
			rec, ok := b.engine.Lookup(k.Hash)
			return rec.AccountID, ok
		},
		Limits:               billing.JobLimits{MaxUnfinished: j.maxUnfinished, MaxNumbersPerHour: j.maxNumbersPerHour},
		AllowPrivateWebhooks: j.allowPrivateWebhooks,
		Queued:               func() { w.Wake() },
		StoreTimeout:         b.storeTimeout,
		Logger:               log,
	})
	if err != nil {
		return nil, err
	}
	cfg.Keyed = api.Routes()
	b.jobs = api
	return func(h *httpapi.Handler) {
		w, _ = jobs.New(jobs.Config{Store: store, Answer: h.AnswerJob, Lease: lease, Retention: j.retention, Logger: log,
			Stopped: func(billing.Job) { d.Notify() }})
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { w.Run(ctx) })
		wg.Go(func() { d.Run(ctx, time.Second) })
		onClose(func() { cancel(); wg.Wait() })
	}, nil
}
