// Package verify is lnpdb verify: every checksum and record of a table checked.
package verify

import (
	"context"
	"errors"
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

// NewCmdVerify returns lnpdb verify.
func NewCmdVerify(e *cliutil.Env) *cobra.Command {
	opts := &options{e: e}
	cmd := &cobra.Command{
		Use:   "verify --db FILE",
		Short: "check every checksum and record of a table (exit 1 if damaged)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVerify(cmd.Context(), opts, args)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.db, "db", "", "the table `file`")
	return cmd
}

func runVerify(ctx context.Context, opts *options, args []string) error {
	e := opts.e
	db, err := cliutil.OpenArg(e, "verify", opts.db, args)
	if err != nil {
		if errors.Is(err, format.ErrCorrupt) || errors.Is(err, format.ErrFormat) {
			return &cliutil.ExitError{Code: 1, Err: err}
		}
		return err
	}
	defer db.Close()
	start := time.Now()
	if err := db.Verify(); err != nil {
		return &cliutil.ExitError{Code: 1, Err: cliutil.NamingFile(db.Info().Path, err)}
	}
	info := db.Info()
	fmt.Fprintf(e.Stdout, "%s: ok (%d sections, %s, %d ported numbers, verified in %s)\n",
		info.Path, len(info.Sections), cliutil.HumanBytes(info.Size), info.Counts.Ported, time.Since(start).Round(time.Millisecond))
	return nil
}
