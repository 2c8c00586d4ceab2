package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/updatelog"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/ingest/feed"
	"github.com/lnpdb/lnpdb/internal/ingest/progress"
)

// applyBatch bounds how many updates share one fsync: large enough to make
// feeds of millions of rows fast, small enough to bound memory.
const applyBatch = 10000

func runApply(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "apply", "FEED...")
	dbPath := fs.String("db", "", "table `file` to update (required)")
	alone := fs.Bool("outside-log", false, "apply to a table that follows a shared update log, on this node alone")
	if err := parseArgs(e, fs, args, -1, "want --db FILE and at least one FEED.csv", dbPath); err != nil {
		return err
	}
	// A node that follows a shared log answers as the others only while
	// every update reaches it through the log.
	if _, err := os.Stat(updatelog.StatePath(*dbPath)); err == nil && !*alone {
		return fmt.Errorf("%s follows a shared update log (%s): post the feed to any node's /admin/v1/updates so that every node applies it, or pass --outside-log to apply it to this table alone",
			*dbPath, updatelog.StatePath(*dbPath))
	}
	db, err := format.Open(*dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	start := time.Now()
	total := 0
	for _, feed := range fs.Args() {
		n, err := applyFeed(ctx, e, db, feed)
		total += n
		if err != nil {
			return fmt.Errorf("%s: %w (the %d updates before it were applied)", feed, err, total)
		}
	}
	fmt.Fprintf(e.stdout, "applied %d updates in %s; %d numbers pending compaction\n", total, time.Since(start).Round(time.Millisecond), db.PendingUpdates())
	return nil
}

func applyFeed(ctx context.Context, e *env, db *format.DB, path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var size int64
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	bar := progress.New(e.stderr, filepath.Base(path), size)
	defer bar.Done()
	batch := make([]format.Update, 0, applyBatch)
	applied := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := db.Apply(batch); err != nil {
			return err
		}
		applied += len(batch)
		batch = batch[:0]
		return ctx.Err()
	}
	// The same feed readers as the server's POST /admin/v1/updates: CSV, or
	// an NPAC latest-view file, told apart by their first line.
	err = feed.ReadAny(&barReader{r: f, bar: bar}, filepath.Base(path), func(u format.Update) error {
		batch = append(batch, u)
		if len(batch) == applyBatch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	return applied, err
}

type barReader struct {
	r   io.Reader
	bar *progress.Bar
}

func (b *barReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.bar.Add(int64(n))
	return n, err
}

func runCompact(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "compact", "")
	dbPath := fs.String("db", "", "table `file` to compact (required)")
	if err := parseArgs(e, fs, args, 0, "want --db FILE", dbPath); err != nil {
		return err
	}
	db, err := format.Open(*dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	pending := db.PendingUpdates()
	start := time.Now()
	if err := db.Compact(ctx); err != nil {
		return err
	}
	info := db.Info()
	fmt.Fprintf(e.stdout, "compacted %d pending numbers into %s (%s, %d ported) in %s\n",
		pending, info.Path, humanBytes(info.Size), info.Counts.Ported, time.Since(start).Round(time.Millisecond))
	return nil
}
