package distribute

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/metric"
)

// Metrics count what a Poller fetches.
type Metrics struct {
	pulls       *prometheus.CounterVec
	bytes       prometheus.Counter
	lastAttempt prometheus.Gauge
	lastSuccess prometheus.Gauge
	lastNew     prometheus.Gauge
}

// NewMetrics registers the fetch metrics on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		pulls: metric.CounterVec("lnpdb_table_pulls_total",
			"Fetches of the table from --db-url, by result: new (a new table installed), not_modified, or failed (the installed table stays).", "result"),
		bytes: metric.Counter("lnpdb_table_pull_bytes_total",
			"Bytes received fetching tables from --db-url, as they came over the wire (compressed or not)."),
		lastAttempt: metric.Gauge("lnpdb_table_pull_last_attempt_timestamp_seconds",
			"When the last fetch from --db-url ended, in Unix seconds."),
		lastSuccess: metric.Gauge("lnpdb_table_pull_last_success_timestamp_seconds",
			"When a fetch from --db-url last succeeded (new or not modified), in Unix seconds."),
		lastNew: metric.Gauge("lnpdb_table_pull_last_new_timestamp_seconds",
			"When a new table from --db-url was last installed, in Unix seconds."),
	}
	if err := metric.Register(reg, m.pulls, m.bytes, m.lastAttempt, m.lastSuccess, m.lastNew); err != nil {
		return nil, err
	}
	for _, r := range []string{resultNew, resultNotModified, resultFailed} {
		m.pulls.WithLabelValues(r)
	}
	return m, nil
}

// The results of a fetch, as metrics and the status name them.
const (
	resultNew         = "new"
	resultNotModified = "not_modified"
	resultFailed      = "failed"
)

// Poller fetches the table from URL into Path every Every until its
// context ends, the first time at once.
type Poller struct {
	URL     string
	Path    string
	Every   time.Duration
	Options Options
	Log     *slog.Logger // nil: no log
	Metrics *Metrics     // nil: no metrics
	// Replace, when set, runs each fetch (install), which renames a new
	// table over Path or leaves it alone: a server passes one that keeps
	// its reloads and compactions off the file meanwhile and reloads the
	// table after it (live.Runner.Replace). Nil runs install alone.
	Replace func(install func() error) error

	mu     sync.Mutex
	status Status
}

// Status is what the Poller did last, for /api/v1/status.
type Status struct {
	URL         string     `json:"url"` // without credentials or query
	Every       string     `json:"every"`
	LastAttempt lnpdb.Time `json:"last_attempt,omitzero"`
	LastResult  string     `json:"last_result,omitempty"` // new, not_modified or failed
	LastError   string     `json:"last_error,omitempty"`  // the last attempt's; empty when it succeeded
	LastSuccess lnpdb.Time `json:"last_success,omitzero"`
	LastNew     lnpdb.Time `json:"last_new,omitzero"`
	ETag        string     `json:"etag,omitempty"` // of the table fetched last
	Bytes       int64      `json:"bytes"`          // received in all
}

// Status returns what the Poller did last.
func (p *Poller) Status() Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.status
	st.URL = Redact(p.URL)
	st.Every = p.Every.String()
	return st
}

// Run polls until ctx ends.
func (p *Poller) Run(ctx context.Context) {
	t := time.NewTicker(p.Every)
	defer t.Stop()
	for {
		p.Once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Once fetches once and records the result.
func (p *Poller) Once(ctx context.Context) (Result, error) {
	log := p.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var (
		res  Result
		err  error
		took time.Duration // of the fetch and install alone, not of a reload after it
	)
	install := func() error {
		start := time.Now()
		res, err = Pull(ctx, p.URL, p.Path, p.Options)
		took = time.Since(start)
		return err
	}
	if p.Replace != nil {
		_ = p.Replace(install) // its error is install's
	} else {
		_ = install()
	}
	now := time.Now()
	result := resultNew
	switch {
	case err != nil && res.Info.Path == "":
		result = resultFailed
	case res.NotModified:
		result = resultNotModified
	}
	p.mu.Lock()
	p.status.LastAttempt = lnpdb.Unix(now.Unix())
	p.status.LastResult = result
	p.status.Bytes += res.Bytes
	p.status.LastError = ""
	if err != nil {
		p.status.LastError = err.Error()
	}
	if result != resultFailed {
		p.status.LastSuccess = lnpdb.Unix(now.Unix())
		p.status.ETag = res.ETag
	}
	if result == resultNew {
		p.status.LastNew = lnpdb.Unix(now.Unix())
	}
	p.mu.Unlock()
	if m := p.Metrics; m != nil {
		m.pulls.WithLabelValues(result).Inc()
		m.bytes.Add(float64(res.Bytes))
		m.lastAttempt.Set(float64(now.Unix()))
		if result != resultFailed {
			m.lastSuccess.Set(float64(now.Unix()))
		}
		if result == resultNew {
			m.lastNew.Set(float64(now.Unix()))
		}
	}
	switch {
	case result == resultFailed && ctx.Err() != nil:
		// Shutting down.
	case result == resultFailed:
		log.Error("table fetch failed; the installed table stays", "url", Redact(p.URL), "table", p.Path,
			"bytes", res.Bytes, "duration", took.Round(time.Millisecond), "error", err)
	case result == resultNew:
		log.Info("table fetched and installed", "url", Redact(p.URL), "table", p.Path, "etag", res.ETag,
			"bytes", res.Bytes, "size", res.Info.Size, "built_at", res.Info.BuiltAt.Format(time.RFC3339),
			"duration", took.Round(time.Millisecond))
		if err != nil {
			log.Warn("table installed, but", "table", p.Path, "error", err)
		}
	default:
		log.Debug("table not modified at the origin", "url", Redact(p.URL), "etag", res.ETag)
	}
	return res, err
}
