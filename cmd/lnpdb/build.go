package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"
	_ "time/tzdata" // rate centers name IANA zones; do not depend on the host's zoneinfo

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/format/build"
)

func runBuild(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "build", "SRC_DIR")
	out := fs.String("db", "", "table `file` to write (default: us.lnpdb)")
	oldOut := fs.String("o", "", "the same as --db (deprecated: every command names its table with --db)")
	skip := fs.Bool("skip-bad-rows", false, "count bad rows and go on instead of failing")
	portedFormat := fs.String("ported-format", "", "read ported data as `csv` or npac (default: by file name)")
	maxMem := fs.Int64("max-memory-mib", build.DefaultMaxMemory>>20, "MiB of per-number rows held in memory while reading before they spill to temporary files (-1: never; 0: every row, slowly)")
	tempDir := fs.String("temp-dir", "", "`directory` for spill files (default: the output's directory)")
	if err := parseArgs(e, fs, args, 1, "want exactly one SRC_DIR"); err != nil {
		return err
	}
	if err := deprecatedDB(e, "build", out, *oldOut, "-o FILE"); err != nil {
		return err
	}
	if *out == "" {
		*out = "us.lnpdb"
	}
	src := fs.Arg(0)
	if st, err := os.Stat(src); err != nil || !st.IsDir() {
		return fmt.Errorf("source directory %s: not a directory", src)
	}
	rep, err := build.Build(ctx, os.DirFS(src), *out, build.Options{
		SkipBadRows:  *skip,
		PortedFormat: *portedFormat,
		Progress:     e.stderr,
		MaxMemory:    maxMemory(*maxMem),
		TempDir:      *tempDir,
	})
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "wrote\t%s\n", *out)
	for _, f := range rep.Files {
		fmt.Fprintf(w, "%s\t%s\n", f.Name, fileLine(f))
	}
	fmt.Fprintf(w, "skipped\t%d rows\n", rep.Skipped)
	for _, s := range rep.SkippedSample {
		fmt.Fprintf(w, "  \t%s\n", s)
	}
	if rep.Spilled > 0 {
		fmt.Fprintf(w, "spilled\t%d rows to temporary files\n", rep.Spilled)
	}
	fmt.Fprintf(w, "ported numbers\t%d\n", rep.Counts.Ported)
	fmt.Fprintf(w, "file size\t%d bytes (%s)\n", rep.FileSize, humanBytes(rep.FileSize))
	if rep.Counts.Ported > 0 {
		fmt.Fprintf(w, "per ported number\t%.2f bytes\n", rep.BytesPerPorted())
	}
	fmt.Fprintf(w, "time\t%s\n", rep.Duration.Round(time.Millisecond))
	if rss := peakRSS(); rss > 0 {
		fmt.Fprintf(w, "peak RSS\t%s\n", humanBytes(rss))
	}
	return w.Flush()
}

// fileLine is what a build did with a file: every line it read, as read,
// skipped, or header and blank, and why records were skipped.
func fileLine(f build.FileReport) string {
	s := fmt.Sprintf("%s: %d read, %d skipped", f.Kind, f.Read, f.Skipped)
	if f.Lines > 0 {
		s = fmt.Sprintf("%s: %d lines = %d read + %d skipped + %d header or blank", f.Kind, f.Lines, f.Read, f.Skipped, f.Header+f.Blank)
	}
	var why []string
	if f.Bad > 0 {
		why = append(why, fmt.Sprintf("%d bad", f.Bad))
	}
	for _, r := range f.Reasons {
		why = append(why, fmt.Sprintf("%d: %s", r.Count, r.Reason))
	}
	if f.Note != "" {
		why = append(why, f.Note)
	}
	if len(why) > 0 {
		s += " (" + strings.Join(why, "; ") + ")"
	}
	return s
}

// maxMemory turns the --max-memory-mib flag into BuildOptions.MaxMemory.
func maxMemory(mib int64) int64 {
	if mib < 0 {
		return -1
	}
	return max(1, mib<<20) // 0 MiB spills everything, where 0 bytes would mean the default
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// deprecatedDB accepts a table named the old way (old: the flag's or the
// operand's value, oldForm: how it was written) in place of --db, with a
// note on stderr; both at once are a usage error.
func deprecatedDB(e *env, name string, db *string, old, oldForm string) error {
	switch {
	case old == "":
		return nil
	case *db != "":
		return fmt.Errorf("%w: give the table once, as --db FILE (%s is the deprecated form)", errUsage, oldForm)
	}
	fmt.Fprintf(e.stderr, "lnpdb %s: %s is deprecated and will be removed: name the table with --db FILE\n", name, oldForm)
	*db = old
	return nil
}

// openArg opens the table named by --db (or, deprecated, by the one
// operand) read-only.
func openArg(e *env, name string, args []string) (*format.DB, error) {
	fs := newFlags(e, name, "")
	path := fs.String("db", "", "the table `file`")
	if err := parse(e, fs, args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 1, fs.NArg() == 0 && *path == "":
		fs.Usage()
		return nil, fmt.Errorf("%w: want --db FILE", errUsage)
	case fs.NArg() == 1:
		if err := deprecatedDB(e, name, path, fs.Arg(0), "the table as an operand"); err != nil {
			return nil, err
		}
	}
	// The table file alone: a damaged journal is not a damaged table
	// (lnpdb journal check covers the journal), and inspecting changes
	// nothing.
	db, err := format.Open(*path, format.IgnoreJournal())
	return db, namingFile(*path, err)
}

// namingFile returns err naming the file at path, unless it does already
// or is nil.
func namingFile(path string, err error) error {
	if err == nil || strings.Contains(err.Error(), path) {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

func runInspect(ctx context.Context, e *env, args []string) error {
	db, err := openArg(e, "inspect", args)
	if err != nil {
		return err
	}
	defer db.Close()
	info := db.Info()
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "file\t%s\n", info.Path)
	fmt.Fprintf(w, "format version\t%d\n", info.Version)
	fmt.Fprintf(w, "size\t%d bytes (%s)\n", info.Size, humanBytes(info.Size))
	fmt.Fprintf(w, "built\t%s\n", info.BuiltAt.Format(time.RFC3339))
	c := info.Counts
	fmt.Fprintf(w, "counts\tcarriers %d, rate centers %d, LRNs %d, codes %d, thousands-blocks %d\n", c.Carriers, c.RateCenters, c.LRNs, c.Codes, c.ThousandsBlocks)
	fmt.Fprintf(w, "\tported %d, messaging %d, CNAM %d, trust %d\n", c.Ported, c.Messaging, c.CNAM, c.Trust)
	if c.Ported > 0 {
		fmt.Fprintf(w, "per ported number\t%.2f bytes\n", float64(info.Size)/float64(c.Ported))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "SECTION\tENCODING\tOFFSET\tLENGTH\tXXHASH64")
	for _, s := range info.Sections {
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%016x\n", s.ID, s.Encoding, s.Offset, s.Length, s.Checksum)
	}
	return w.Flush()
}

func runVerify(ctx context.Context, e *env, args []string) error {
	db, err := openArg(e, "verify", args)
	if err != nil {
		if errors.Is(err, format.ErrCorrupt) || errors.Is(err, format.ErrFormat) {
			return &exitError{code: 1, err: err}
		}
		return err
	}
	defer db.Close()
	start := time.Now()
	if err := db.Verify(); err != nil {
		return &exitError{code: 1, err: namingFile(db.Info().Path, err)}
	}
	info := db.Info()
	fmt.Fprintf(e.stdout, "%s: ok (%d sections, %s, %d ported numbers, verified in %s)\n",
		info.Path, len(info.Sections), humanBytes(info.Size), info.Counts.Ported, time.Since(start).Round(time.Millisecond))
	return nil
}
