// Package apply is lnpdb apply: NPAC update feeds applied to a table, each file all or nothing.
package apply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/updatelog"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/format/build"
	"github.com/lnpdb/lnpdb/internal/core/atomicfile"
	"github.com/lnpdb/lnpdb/internal/core/vfs"
	"github.com/lnpdb/lnpdb/internal/ingest/feed"
	"github.com/lnpdb/lnpdb/internal/ingest/progress"
	"github.com/spf13/cobra"
)

// Batch bounds how many updates share one fsync of the staged
// journal: large enough to make feeds of millions of rows fast, small
// enough to bound what a batch holds in memory.
const Batch = 10000

type options struct {
	e     *cliutil.Env
	db    string
	alone bool
}

// NewCmdApply returns lnpdb apply.
func NewCmdApply(e *cliutil.Env) *cobra.Command {
	opts := &options{e: e}
	cmd := &cobra.Command{
		Use:   "apply --db FILE FEED...",
		Short: "apply NPAC update feeds (CSV: action,tn,lrn,spid,activated_at[,sv_type], or a latest-view file; .gz, .zst) to a table, each file all or nothing",
		RunE: func(cmd *cobra.Command, args []string) error {
			return runApply(cmd.Context(), opts, args)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.db, "db", "", "table `file` to update (required)")
	fs.BoolVar(&opts.alone, "outside-log", false, "apply to a table that follows a shared update log, on this node alone")
	return cmd
}

func runApply(ctx context.Context, opts *options, args []string) error {
	e := opts.e
	if err := cliutil.Want(args, -1, "want --db FILE and at least one FEED (CSV or NPAC latest view, plain, .gz or .zst)", opts.db); err != nil {
		return err
	}
	// A node that follows a shared log answers as the others only while
	// every update reaches it through the log.
	if _, err := os.Stat(updatelog.StatePath(opts.db)); err == nil && !opts.alone {
		return fmt.Errorf("%s follows a shared update log (%s): post the feed to any node's /admin/v1/updates so that every node applies it, or pass --outside-log to apply it to this table opts.alone",
			opts.db, updatelog.StatePath(opts.db))
	}
	// Opened as it is, and held open to the end: the table and its
	// journal are checked, what the table cannot resolve is set aside, on
	// the real files, before any feed is staged; and the table's writer's
	// lock is held until the last feed's journal is in place, so that no
	// server or other apply appends to the journal this one replaces.
	db, err := format.OpenWriter(opts.db)
	if err != nil {
		return cliutil.WriterAdvice(err, "post the feed to the server's POST /admin/v1/updates, or stop it first")
	}
	defer db.Close()
	removeStaleStages(opts.db)
	start := time.Now()
	total, pending := 0, 0
	for _, feed := range args {
		n, p, err := applyFeed(ctx, e, opts.db, feed)
		if err != nil {
			return fmt.Errorf("%s: %w (nothing of this feed was applied; the %d updates of the feeds before it were)", feed, err, total)
		}
		total, pending = total+n, p
	}
	fmt.Fprintf(e.Stdout, "applied %s in %s; %s pending compaction\n", cliutil.Counted(total, "update", "updates"), time.Since(start).Round(time.Millisecond), cliutil.Counted(pending, "number", "numbers"))
	return nil
}

// stagePrefix is how the directories applyFeed stages a feed in, beside
// the table, start.
func stagePrefix(table string) string { return "." + filepath.Base(table) + ".apply-" }

// removeStaleStages removes what a killed apply left: its staging
// directories, whose journal copies were never committed.
func removeStaleStages(table string) {
	dir := filepath.Dir(table)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, en := range entries {
		if en.IsDir() && strings.HasPrefix(en.Name(), stagePrefix(table)) {
			os.RemoveAll(filepath.Join(dir, en.Name()))
		}
	}
}

// applyFeed applies one feed file to the table at table as one durable
// unit, whatever its size: a kill or an error at any moment leaves either
// all of the feed or none of it.
//
// The feed is applied to a stage: a directory beside the table holding a
// hard link to the table file (which no update writes) and a copy of its
// journal. There it goes through the format's batch path in batches of
// Batch, each checked and fsync'd to the staged journal; then the
// staged journal replaces the table's in one atomic write (atomicfile:
// temporary file, fsync, rename, directory fsync). Until that rename the
// table's own journal is untouched. Memory holds one batch and the pending
// updates' overlay, which any apply builds (an NPAC latest-view file is
// also held whole by its reader, to order it); disk, a second copy of the
// journal while the feed is applied.
func applyFeed(ctx context.Context, e *cliutil.Env, table, path string) (applied, pending int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	var size int64
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	bar := progress.New(e.Stderr, filepath.Base(path), size)
	defer bar.Done()
	// Compressed as build reads a source file: by the name's suffix.
	r, closeZ, err := build.Decompress(path, &barReader{r: f, bar: bar})
	if err != nil {
		return 0, 0, err
	}
	defer closeZ()

	stage, err := os.MkdirTemp(filepath.Dir(table), stagePrefix(table))
	if err != nil {
		return 0, 0, fmt.Errorf("staging the feed: %w", err)
	}
	defer os.RemoveAll(stage)
	staged := filepath.Join(stage, filepath.Base(table))
	if err := os.Link(table, staged); err != nil {
		abs, aerr := filepath.Abs(table)
		if aerr != nil {
			return 0, 0, fmt.Errorf("staging the feed: %w", err)
		}
		if serr := os.Symlink(abs, staged); serr != nil {
			return 0, 0, fmt.Errorf("staging the feed: %w (a link: %v)", err, serr)
		}
	}
	journal := format.JournalPath(table)
	if err := copyPlain(journal, format.JournalPath(staged)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, 0, fmt.Errorf("staging the feed: %w", err)
	}
	db, err := format.OpenWriter(staged)
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()

	batch := make([]format.Update, 0, Batch)
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
	err = feed.ReadAny(r, filepath.Base(path), func(u format.Update) error {
		batch = append(batch, u)
		if len(batch) == Batch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return 0, 0, err
	}
	pending = db.PendingUpdates()
	if err := db.Close(); err != nil {
		return 0, 0, err
	}
	if applied == 0 {
		return 0, pending, nil
	}
	// The commit: every batch is in the staged journal, fsync'd; it takes
	// the table's journal's place whole.
	err = atomicfile.Write(vfs.Default, journal, func(dst vfs.File) error {
		return copyInto(dst, format.JournalPath(staged))
	}, atomicfile.Options{})
	if errors.Is(err, atomicfile.ErrDirSync) {
		return applied, pending, fmt.Errorf("the feed is applied, but a power loss may still undo it: %w", err)
	}
	if err != nil {
		return 0, 0, err
	}
	return applied, pending, nil
}

// copyPlain copies the file src to dst, which it creates.
func copyPlain(src, dst string) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if err := copyInto(out, src); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// copyInto copies the file src into w.
func copyInto(w io.Writer, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	_, err = io.Copy(w, in)
	return err
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
