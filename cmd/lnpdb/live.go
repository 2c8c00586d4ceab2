package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/httpapi"
	"github.com/prometheus/client_golang/prometheus"
)

// liveMetrics count what the live runner does.
type liveMetrics struct {
	reloads  *prometheus.CounterVec
	setAside prometheus.Counter
}

func newLiveMetrics(reg prometheus.Registerer) (*liveMetrics, error) {
	m := &liveMetrics{
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lnpdb_table_reloads_total",
			Help: "Table reloads (file replaced, SIGHUP), by result: ok, or failed (the previous table kept serving).",
		}, []string{"result"}),
		setAside: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lnpdb_updates_set_aside_total",
			Help: "Pending updates set aside because a replacement table lacks their SPID.",
		}),
	}
	for _, c := range []prometheus.Collector{m.reloads, m.setAside} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *liveMetrics) reloaded(result string) { m.reloads.WithLabelValues(result).Inc() }

// live keeps a served table current: it reloads the table when its file is
// replaced (by rename, never in place) or on SIGHUP, and compacts pending
// updates in the background. Reloads and compactions take turns, so that a
// compaction never folds updates into a file that was replaced under it
// without being noticed first.
type live struct {
	db        *format.DB
	path      string
	log       *slog.Logger
	compactAt int // pending updates that start a compaction; 0: never

	mu        sync.Mutex // serialises reloads and compactions; guards seen and compacted
	seen      fileID     // the file at path as last reloaded
	compacted bool       // a compaction replaced the file since

	compacting atomic.Bool
	wg         sync.WaitGroup // background compactions

	// What /api/v1/status and the metrics show; guarded by mu.
	reloads, reloadFailures int
	lastReload              time.Time
	lastReloadErr           string
	metrics                 *liveMetrics
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
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.dev, id.ino = uint64(st.Dev), st.Ino
	}
	return id, nil
}

func newLive(db *format.DB, log *slog.Logger, compactAt int, m *liveMetrics) *live {
	l := &live{db: db, path: db.Path(), log: log, compactAt: compactAt, metrics: m}
	l.seen, _ = statID(l.path)
	return l
}

// reload maps the file now at the table's path. On error the current table
// keeps serving.
func (l *live) reload(reason string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reloadLocked(reason)
}

func (l *live) reloadLocked(reason string) error {
	id, err := statID(l.path)
	l.compacted = false
	l.lastReload = time.Now()
	if err == nil {
		start := time.Now()
		asideBefore := l.db.Recovery().SetAside
		// The DB was opened WithVerify: Reload checks every byte of
		// the new file before it swaps it in.
		err = l.db.Reload()
		if err == nil {
			l.seen = id
			l.reloads++
			l.lastReloadErr = ""
			l.metrics.reloaded("ok")
			info := l.db.Info()
			l.log.Info("table reloaded", "reason", reason, "table", l.path,
				"version", info.Version, "built_at", info.BuiltAt.Format(time.RFC3339),
				"ported", info.Counts.Ported, "pending", l.db.PendingUpdates(),
				"duration", time.Since(start).Round(time.Microsecond))
			if n := l.db.Recovery().SetAside - asideBefore; n > 0 {
				l.metrics.setAside.Add(float64(n))
				l.log.Warn("pending updates set aside: their SPID is not in the new table", "table", l.path,
					"set_aside", n, "file", format.SetAsidePath(l.path))
			}
			return nil
		}
	}
	// Remember the bad file so that the watcher does not retry it every
	// second; a new replacement (or SIGHUP) tries again.
	if id != (fileID{}) {
		l.seen = id
	}
	l.reloadFailures++
	l.lastReloadErr = err.Error()
	l.metrics.reloaded("failed")
	l.log.Error("table reload failed; the previous table keeps serving", "reason", reason, "table", l.path, "error", err)
	return err
}

// status reports the table's live state for /api/v1/status.
func (l *live) status() httpapi.LiveStatus {
	l.mu.Lock()
	st := httpapi.LiveStatus{
		Reloads: l.reloads, ReloadFailures: l.reloadFailures, LastReloadError: l.lastReloadErr,
	}
	if !l.lastReload.IsZero() {
		st.LastReload = lnpdb.Unix(l.lastReload.Unix())
	}
	l.mu.Unlock()
	st.PendingUpdates = l.db.PendingUpdates()
	st.SetAsideUpdates = l.db.Recovery().SetAside
	if err := l.db.JournalBroken(); err != nil {
		st.UpdatesRefused = err.Error()
	}
	return st
}

// changed reloads the table if the file at its path is not the one last
// seen. The caller holds l.mu.
func (l *live) changedLocked() {
	id, err := statID(l.path)
	if err != nil || id == l.seen {
		// A missing file is the moment between unlink and rename, or an
		// operator's mistake: keep serving what is mapped.
		return
	}
	reason := "file replaced"
	if l.compacted {
		reason = "file replaced by compaction"
	}
	l.compacted = false
	_ = l.reloadLocked(reason)
}

// watch polls the table's file every interval until ctx ends and reloads it
// when it was replaced.
func (l *live) watch(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			l.mu.Lock()
			l.changedLocked()
			l.mu.Unlock()
		}
	}
}

// compact folds the pending updates into a new file. It first picks up a
// replacement of the file not yet reloaded, so that the new file is not
// overwritten with the old one's contents.
func (l *live) compact(ctx context.Context, reason string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.changedLocked()
	pending := l.db.PendingUpdates()
	if pending == 0 {
		return nil
	}
	start := time.Now()
	l.log.Info("compaction started", "reason", reason, "table", l.path, "pending", pending)
	if err := l.db.Compact(ctx); err != nil {
		switch {
		case ctx.Err() != nil:
			l.log.Info("compaction cancelled; the updates stay pending", "reason", reason, "table", l.path)
		case errors.Is(err, format.ErrReplaced):
			// The replacement stays; the next compaction folds the
			// updates into it.
			l.log.Info("compaction given up: the table file was replaced meanwhile; the updates stay pending", "reason", reason, "table", l.path)
			l.changedLocked()
		default:
			l.log.Error("compaction failed; the updates stay pending", "reason", reason, "table", l.path, "error", err)
		}
		return err
	}
	// The compaction has switched to its own file already, but another
	// replacement may have landed right after its rename: the next check
	// maps whatever is at the path now, which costs one extra mapping at
	// worst.
	l.compacted = true
	info := l.db.Info()
	l.log.Info("compaction done", "reason", reason, "table", l.path, "folded", pending,
		"pending", l.db.PendingUpdates(), "size", info.Size, "ported", info.Counts.Ported,
		"duration", time.Since(start).Round(time.Millisecond))
	return nil
}

// startCompaction runs a compaction in the background unless one is
// running; it reports whether it started one.
func (l *live) startCompaction(ctx context.Context, reason string) bool {
	if !l.compacting.CompareAndSwap(false, true) {
		return false
	}
	l.wg.Go(func() {
		defer l.compacting.Store(false)
		_ = l.compact(ctx, reason) // logged
	})
	return true
}

// applied is called after each batch of updates: past the threshold it
// starts a background compaction.
func (l *live) applied(ctx context.Context) {
	if l.compactAt > 0 && l.db.PendingUpdates() >= l.compactAt {
		l.startCompaction(ctx, "threshold")
	}
}

// wait waits for a background compaction to end.
func (l *live) wait() { l.wg.Wait() }
