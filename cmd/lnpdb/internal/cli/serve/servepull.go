package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/distribute"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/live"
	"github.com/prometheus/client_golang/prometheus"
)

// pullFlags are serve's flags for fetching its table from an origin.
type pullFlags struct {
	url, keyFile string
	every        time.Duration
	maxBytes     int64
	timeout      time.Duration
	poller       *distribute.Poller
	halt         func() // stops and awaits the poller; set by start
}

func (p *pullFlags) check(dbPath string) error {
	if p.url == "" {
		return nil
	}
	if dbPath == "" {
		return fmt.Errorf("%w: --db-url needs --db FILE, where the fetched table is kept", cliutil.ErrUsage)
	}
	if p.every <= 0 {
		return fmt.Errorf("%w: --db-url-every must be positive", cliutil.ErrUsage)
	}
	if p.maxBytes < 0 || p.timeout <= 0 {
		return fmt.Errorf("%w: --db-url-max-bytes must be 0 or more, --db-url-timeout positive", cliutil.ErrUsage)
	}
	return nil
}

// fetchMissing fetches the table once when --db-url is set and there is no
// file at path yet, so that a new node starts from the origin's table.
func (p *pullFlags) fetchMissing(ctx context.Context, path string, log *slog.Logger) error {
	if p.url == "" {
		return nil
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	key, err := cliutil.ReadKeyFile(p.keyFile)
	if err != nil {
		return err
	}
	start := time.Now()
	res, err := distribute.Pull(ctx, p.url, path, p.options(key))
	if err != nil {
		return fmt.Errorf("no table at %s, and fetching it failed: %w", path, err)
	}
	log.Info("table fetched", "url", distribute.Redact(p.url), "table", path, "etag", res.ETag,
		"bytes", res.Bytes, "duration", time.Since(start).Round(time.Millisecond))
	return nil
}

// start polls the origin in the background until stop. A new table is
// installed through lv.Replace: no reload or compaction runs meanwhile (so
// no compaction renames its own file over the new one), and the table is
// reloaded right after, without waiting for the file watch.
func (p *pullFlags) start(lv *live.Runner, reg prometheus.Registerer, log *slog.Logger) error {
	if p.url == "" {
		return nil
	}
	key, err := cliutil.ReadKeyFile(p.keyFile)
	if err != nil {
		return err
	}
	m, err := distribute.NewMetrics(reg)
	if err != nil {
		return err
	}
	p.poller = &distribute.Poller{
		URL: p.url, Path: lv.DB().Path(), Every: p.every,
		Options: p.options(key), Log: log, Metrics: m,
		Replace: lv.Replace,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.poller.Run(ctx)
	}()
	p.halt = func() {
		cancel()
		<-done
	}
	return nil
}

// options are the fetch's options from the flags.
func (p *pullFlags) options(key string) distribute.Options {
	return distribute.Options{Key: key, MaxBytes: p.maxBytes, Timeout: p.timeout}
}

// stop stops the poller and waits until it has.
func (p *pullFlags) stop() {
	if p.halt != nil {
		p.halt()
	}
}

// status is the poller's status for /api/v1/status; nil without --db-url.
func (p *pullFlags) status() func() distribute.Status {
	if p.poller == nil {
		return nil
	}
	return p.poller.Status
}
