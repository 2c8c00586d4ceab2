// Package build is lnpdb build: a table built from a source directory.
package build

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/format/build"
	"github.com/spf13/cobra"
)

type options struct {
	e                         *cliutil.Env
	out, oldOut, portedFormat string
	tempDir                   string
	skip                      bool
	maxMem                    int64
}

// NewCmdBuild returns lnpdb build.
func NewCmdBuild(e *cliutil.Env) *cobra.Command {
	opts := &options{e: e}
	cmd := &cobra.Command{
		Use:   "build --db FILE SRC_DIR",
		Short: "build a table from a source directory",
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBuild(cmd.Context(), opts, args)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.out, "db", "", "table `file` to write (default: us.lnpdb)")
	fs.StringVarP(&opts.oldOut, "o", "o", "", "the same as --db (deprecated: every command names its table with --db)")
	_ = fs.MarkHidden("o")
	fs.BoolVar(&opts.skip, "skip-bad-rows", false, "count bad rows and go on instead of failing")
	fs.StringVar(&opts.portedFormat, "ported-format", "", "read ported data as `csv` or npac (default: by file name)")
	fs.Int64Var(&opts.maxMem, "max-memory-mib", build.DefaultMaxMemory>>20, "MiB of per-number rows held in memory while reading before they spill to temporary files (-1: never; 0: every row, slowly)")
	fs.StringVar(&opts.tempDir, "temp-dir", "", "`directory` for spill files (default: the output's directory)")
	return cmd
}

func runBuild(ctx context.Context, opts *options, args []string) error {
	e := opts.e
	if err := cliutil.Want(args, 1, "want exactly one SRC_DIR"); err != nil {
		return err
	}
	if err := cliutil.DeprecatedDB(e, "build", &opts.out, opts.oldOut, "-o FILE"); err != nil {
		return err
	}
	if opts.out == "" {
		opts.out = "us.lnpdb"
	}
	src := args[0]
	if st, err := os.Stat(src); err != nil || !st.IsDir() {
		return fmt.Errorf("source directory %s: not a directory", src)
	}
	rep, err := build.Build(ctx, os.DirFS(src), opts.out, build.Options{
		SkipBadRows:  opts.skip,
		PortedFormat: opts.portedFormat,
		Progress:     e.Stderr,
		MaxMemory:    maxMemory(opts.maxMem),
		TempDir:      opts.tempDir,
	})
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "wrote\t%s\n", opts.out)
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
	fmt.Fprintf(w, "file size\t%d bytes (%s)\n", rep.FileSize, cliutil.HumanBytes(rep.FileSize))
	if rep.Counts.Ported > 0 {
		fmt.Fprintf(w, "per ported number\t%.2f bytes\n", rep.BytesPerPorted())
	}
	fmt.Fprintf(w, "time\t%s\n", rep.Duration.Round(time.Millisecond))
	if rss := peakRSS(); rss > 0 {
		fmt.Fprintf(w, "peak RSS\t%s\n", cliutil.HumanBytes(rss))
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
