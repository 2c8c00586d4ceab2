// Package compact is lnpdb compact: a table's pending updates folded into a new file.
package compact

import (
	"context"
	"fmt"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/format"
	"github.com/spf13/cobra"
)

type options struct {
	e  *cliutil.Env
	db string
}

// NewCmdCompact returns lnpdb compact.
func NewCmdCompact(e *cliutil.Env) *cobra.Command {
	opts := &options{e: e}
	cmd := &cobra.Command{
		Use:   "compact --db FILE",
		Short: "fold a table's pending updates into a new file, atomically",
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompact(cmd.Context(), opts, args)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.db, "db", "", "table `file` to compact (required)")
	return cmd
}

func runCompact(ctx context.Context, opts *options, args []string) error {
	e := opts.e
	if err := cliutil.Want(args, 0, "want --db FILE", opts.db); err != nil {
		return err
	}
	db, err := format.OpenWriter(opts.db)
	if err != nil {
		return cliutil.WriterAdvice(err, "compact through the server's POST /admin/v1/compact, or stop it first")
	}
	defer db.Close()
	pending := db.PendingUpdates()
	start := time.Now()
	if err := db.Compact(ctx); err != nil {
		return err
	}
	info := db.Info()
	fmt.Fprintf(e.Stdout, "compacted %d pending numbers into %s (%s, %d ported) in %s\n",
		pending, info.Path, cliutil.HumanBytes(info.Size), info.Counts.Ported, time.Since(start).Round(time.Millisecond))
	return nil
}
