package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lnpdb/lnpdb/format"
)

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

func newLive(db *format.DB, log *slog.Logger, compactAt int) *live {
	l := &live{db: db, path: db.Path(), log: log, compactAt: compactAt}
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
	if err == nil {
		start := time.Now()
		err = l.db.Reload()
		if err == nil {
			l.seen = id
			releaseOldMapping()
			info := l.db.Info()
			l.log.Info("table reloaded", "reason", reason, "table", l.path,
				"version", info.Version, "built_at", info.BuiltAt.Format(time.RFC3339),
				"ported", info.Counts.Ported, "pending", l.db.PendingUpdates(),
				"duration", time.Since(start).Round(time.Microsecond))
			return nil
		}
	}
	// Remember the bad file so that the watcher does not retry it every
	// second; a new replacement (or SIGHUP) tries again.
	if id != (fileID{}) {
		l.seen = id
	}
	l.log.Error("table reload failed; the previous table keeps serving", "reason", reason, "table", l.path, "error", err)
	return err
}

// releaseOldMapping lets the garbage collector find the mapping just
// replaced, which it unmaps once no lookup in flight uses it: until then
// the replaced file, unlinked by the rename, still holds its disk space
// and page cache. Without a collection that could take as long as the
// server allocates little.
func releaseOldMapping() { go runtime.GC() }

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
	releaseOldMapping()
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
