// Package live keeps a served table current, for every front end alike: it
// reloads the table when its file is replaced (by rename, never in place) or
// when asked (SIGHUP), compacts pending updates in the background past a
// threshold or when asked (the admin API), and reports what it did as a
// Status and as Prometheus metrics. Reloads and compactions take turns, so
// that a compaction never folds updates into a file that was replaced under
// it without being noticed first. Stop cancels and awaits everything it
// started. It knows nothing of HTTP, SIP or DNS.
package live

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/metric"
	"github.com/lnpdb/lnpdb/format"
)

// Config configures a Runner. DB is required.
type Config struct {
	DB     *format.DB
	Logger *slog.Logger // nil discards
	// CompactAt is the number of pending updates that starts a
	// compaction; 0 never.
	CompactAt int
	// Watch is how often the table's file is checked for a replacement;
	// 0 only on Reload.
	Watch time.Duration
	// Registerer receives the metrics; nil registers none.
	Registerer prometheus.Registerer
}

// Runner keeps one table current. Its methods are safe for concurrent use.
type Runner struct {
	db        *format.DB
	path      string
	log       *slog.Logger
	compactAt int
	metrics   *metrics

	ctx    context.Context // cancelled by Stop
	cancel context.CancelFunc
	wg     sync.WaitGroup // the watcher and background compactions

	mu        sync.Mutex // serialises reloads and compactions; guards what follows
	seen      fileID     // the file at path as last reloaded
	compacted bool       // a compaction replaced the file since

	reloads, reloadFailures int
	lastReload              time.Time
	lastReloadErr           string

	compacting atomic.Bool
}

// Status is the table's live state: reloads of its file, and the updates
// applied on top of it.
type Status struct {
	Reloads         int        `json:"reloads"`
	ReloadFailures  int        `json:"reload_failures"`
	LastReload      lnpdb.Time `json:"last_reload,omitzero"`
	LastReloadError string     `json:"last_reload_error,omitempty"` // the last attempt's; empty when it succeeded
	PendingUpdates  int        `json:"pending_updates"`
	SetAsideUpdates int        `json:"set_aside_updates"`
	// UpdatesRefused says why updates are refused (a journal that a
	// failed write left unusable); empty while they are accepted.
	UpdatesRefused string `json:"updates_refused,omitempty"`
}

// Start returns a Runner for cfg.DB and starts watching its file.
func Start(cfg Config) (*Runner, error) {
	if cfg.DB == nil {
		return nil, errors.New("live: Config.DB is required")
	}
	m, err := newMetrics(cfg.Registerer, cfg.DB)
	if err != nil {
		return nil, err
	}
	r := &Runner{db: cfg.DB, path: cfg.DB.Path(), log: cfg.Logger, compactAt: cfg.CompactAt, metrics: m}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.seen, _ = statID(r.path)
	if cfg.Watch > 0 {
		r.wg.Go(func() { r.watch(cfg.Watch) })
	}
	return r, nil
}

// DB is the table kept current; it is the same DB for the Runner's life.
func (r *Runner) DB() *format.DB { return r.db }

// Stop stops the watcher, cancels a compaction in progress (its updates stay
// pending) and waits for both. The DB stays open.
func (r *Runner) Stop() {
	r.cancel()
	r.wg.Wait()
}

// fileID tells one file at a path from its replacement.
type fileID struct {
	dev, ino uint64
	size     int64
	mtime    time.Time
}

func statID(path string) (fileID, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, err
	}
	id := fileID{size: fi.Size(), mtime: fi.ModTime()}
	id.dev, id.ino = devIno(fi)
	return id, nil
}

// Reload maps the file now at the table's path. On error the current table
// keeps serving; either way it is logged, counted and shown in Status.
func (r *Runner) Reload(reason string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reloadLocked(reason)
}

func (r *Runner) reloadLocked(reason string) error {
	id, err := statID(r.path)
	r.compacted = false
	r.lastReload = time.Now()
	if err == nil {
		start := time.Now()
		asideBefore := r.db.Recovery().SetAside
		// A DB opened with Verify checks every byte of the new file before
		// it swaps it in.
		err = r.db.Reload()
		if err == nil {
			r.seen = id
			r.reloads++
			r.lastReloadErr = ""
			r.metrics.reloaded("ok")
			info := r.db.Info()
			r.log.Info("table reloaded", "reason", reason, "table", r.path,
				"version", info.Version, "built_at", info.BuiltAt.Format(time.RFC3339),
				"ported", info.Counts.Ported, "pending", r.db.PendingUpdates(),
				"duration", time.Since(start).Round(time.Microsecond))
			if n := r.db.Recovery().SetAside - asideBefore; n > 0 {
				r.metrics.setAside(n)
				r.log.Warn("pending updates set aside: their SPID is not in the new table", "table", r.path,
					"set_aside", n, "file", format.SetAsidePath(r.path))
			}
			return nil
		}
	}
	// Remember the bad file so that the watcher does not retry it every
	// second; a new replacement (or Reload) tries again.
	if id != (fileID{}) {
		r.seen = id
	}
	r.reloadFailures++
	r.lastReloadErr = err.Error()
	r.metrics.reloaded("failed")
	r.log.Error("table reload failed; the previous table keeps serving", "reason", reason, "table", r.path, "error", err)
	return err
}

// Status reports the table's live state.
func (r *Runner) Status() Status {
	r.mu.Lock()
	st := Status{Reloads: r.reloads, ReloadFailures: r.reloadFailures, LastReloadError: r.lastReloadErr}
	if !r.lastReload.IsZero() {
		st.LastReload = lnpdb.Unix(r.lastReload.Unix())
	}
	r.mu.Unlock()
	st.PendingUpdates = r.db.PendingUpdates()
	st.SetAsideUpdates = r.db.Recovery().SetAside
	if err := r.db.JournalBroken(); err != nil {
		st.UpdatesRefused = err.Error()
	}
	return st
}

// changedLocked reloads the table if the file at its path is not the one
// last seen. The caller holds r.mu.
func (r *Runner) changedLocked() {
	id, err := statID(r.path)
	if err != nil || id == r.seen {
		// A missing file is the moment between unlink and rename, or an
		// operator's mistake: keep serving what is mapped.
		return
	}
	reason := "file replaced"
	if r.compacted {
		reason = "file replaced by compaction"
	}
	r.compacted = false
	_ = r.reloadLocked(reason)
}

// watch polls the table's file every interval until Stop and reloads it
// when it was replaced.
func (r *Runner) watch(interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-t.C:
			r.mu.Lock()
			r.changedLocked()
			r.mu.Unlock()
		}
	}
}

// Compact folds the pending updates into a new file now. It first picks up
// a replacement of the file not yet reloaded, so that the new file is not
// overwritten with the old one's contents.
func (r *Runner) Compact(ctx context.Context, reason string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changedLocked()
	pending := r.db.PendingUpdates()
	if pending == 0 {
		return nil
	}
	start := time.Now()
	r.log.Info("compaction started", "reason", reason, "table", r.path, "pending", pending)
	if err := r.db.Compact(ctx); err != nil {
		switch {
		case ctx.Err() != nil:
			r.log.Info("compaction cancelled; the updates stay pending", "reason", reason, "table", r.path)
		case errors.Is(err, format.ErrReplaced):
			// The replacement stays; the next compaction folds the
			// updates into it.
			r.log.Info("compaction given up: the table file was replaced meanwhile; the updates stay pending", "reason", reason, "table", r.path)
			r.changedLocked()
		default:
			r.log.Error("compaction failed; the updates stay pending", "reason", reason, "table", r.path, "error", err)
		}
		r.metrics.compacted("failed")
		return err
	}
	// The compaction has switched to its own file already, but another
	// replacement may have landed right after its rename: the next check
	// maps whatever is at the path now, which costs one extra mapping at
	// worst.
	r.compacted = true
	r.metrics.compacted("ok")
	info := r.db.Info()
	r.log.Info("compaction done", "reason", reason, "table", r.path, "folded", pending,
		"pending", r.db.PendingUpdates(), "size", info.Size, "ported", info.Counts.Ported,
		"duration", time.Since(start).Round(time.Millisecond))
	return nil
}

// StartCompaction runs a compaction in the background unless one is running
// or the Runner is stopped; it reports whether it started one.
func (r *Runner) StartCompaction(reason string) bool {
	if r.ctx.Err() != nil || !r.compacting.CompareAndSwap(false, true) {
		return false
	}
	r.wg.Go(func() {
		defer r.compacting.Store(false)
		_ = r.Compact(r.ctx, reason) // logged
	})
	return true
}

// Applied is called after each batch of updates: past the threshold it
// starts a background compaction.
func (r *Runner) Applied() {
	if r.compactAt > 0 && r.db.PendingUpdates() >= r.compactAt {
		r.StartCompaction("threshold")
	}
}

// metrics count what the Runner does.
type metrics struct {
	reloads, compactions *prometheus.CounterVec
	setAsideTotal        prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, db *format.DB) (*metrics, error) {
	m := &metrics{
		reloads: metric.CounterVec("lnpdb_table_reloads_total",
			"Table reloads (file replaced, SIGHUP), by result: ok, or failed (the previous table kept serving).", "result"),
		compactions: metric.CounterVec("lnpdb_compactions_total",
			"Compactions of pending updates into a new table file, by result: ok, or failed (the updates stay pending).", "result"),
		setAsideTotal: metric.Counter("lnpdb_updates_set_aside_total",
			"Pending updates set aside because a replacement table lacks their SPID."),
	}
	// Read at each scrape: how much of the table huge pages map, which
	// the page cache can lose under memory pressure (format.DB.HugePageBytes).
	huge := metric.GaugeFunc("lnpdb_table_huge_page_bytes",
		"Bytes of the table mapped by 2 MiB pages; -1 where the system cannot tell. Lookups on small pages pay a page-table walk each.",
		func() float64 { return float64(db.HugePageBytes()) })
	// The table's age: what an alert on a table that stopped being
	// replaced reads, the same on an origin as on a node that pulls.
	built := metric.GaugeFunc("lnpdb_table_built_timestamp_seconds",
		"When the table served was written (its header's build time), in seconds since the Unix epoch.",
		func() float64 { return float64(db.Info().BuiltAt.Unix()) })
	if err := metric.Register(reg, m.reloads, m.compactions, m.setAsideTotal, huge, built); err != nil {
		return nil, err
	}
	// Each result is exported from the start at 0, so that the first
	// failure is an increase a rate or an alert sees, not a series that
	// appears already at 1.
	for _, result := range []string{"ok", "failed"} {
		m.reloads.WithLabelValues(result)
		m.compactions.WithLabelValues(result)
	}
	return m, nil
}

func (m *metrics) reloaded(result string)  { m.reloads.WithLabelValues(result).Inc() }
func (m *metrics) compacted(result string) { m.compactions.WithLabelValues(result).Inc() }
func (m *metrics) setAside(n int)          { m.setAsideTotal.Add(float64(n)) }
