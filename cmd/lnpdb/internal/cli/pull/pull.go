// Package pull is lnpdb pull: a table fetched over HTTP(S) when the origin has a new one.
package pull

import (
	"context"
	"fmt"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/distribute"
	"github.com/spf13/cobra"
)

type options struct {
	e           *cliutil.Env
	db, keyFile string
	maxBytes    int64
	timeout     time.Duration
}

// NewCmdPull returns lnpdb pull.
func NewCmdPull(e *cliutil.Env) *cobra.Command {
	opts := &options{e: e}
	cmd := &cobra.Command{
		Use:   "pull --db FILE URL",
		Short: "fetch a table over HTTP(S) if the origin has a new one, verify it and rename it in",
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPull(cmd.Context(), opts, args)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.db, "db", "", "the table `file` to install the fetched table as")
	fs.StringVar(&opts.keyFile, "key-file", "", "`file` holding the key to send as a bearer token (an admin key of an lnpdb origin's GET /admin/v1/table)")
	fs.Int64Var(&opts.maxBytes, "max-bytes", 0, "refuse a table larger than `n` bytes, received or decompressed, before writing it (0: the size its header declares)")
	fs.DurationVar(&opts.timeout, "timeout", distribute.DefaultTimeout, "give up a fetch that takes longer than `duration` in all")
	return cmd
}

func runPull(ctx context.Context, opts *options, args []string) error {
	e := opts.e
	if err := cliutil.Want(args, -1, "want --db FILE URL"); err != nil {
		return err
	}
	switch {
	case len(args) == 2: // the deprecated pull URL FILE
		if err := cliutil.DeprecatedDB(e, "pull", &opts.db, args[1], "pull URL FILE"); err != nil {
			return err
		}
	case len(args) != 1 || opts.db == "":
		return fmt.Errorf("%w: want --db FILE URL", cliutil.ErrUsage)
	}
	url, path := args[0], opts.db
	if opts.maxBytes < 0 || opts.timeout <= 0 {
		return fmt.Errorf("%w: --max-bytes must be 0 or more, --timeout positive", cliutil.ErrUsage)
	}
	key, err := cliutil.ReadKeyFile(opts.keyFile)
	if err != nil {
		return err
	}
	start := time.Now()
	res, err := distribute.Pull(ctx, url, path, distribute.Options{Key: key, Progress: e.Stderr, MaxBytes: opts.maxBytes, Timeout: opts.timeout})
	if err != nil {
		return err
	}
	if res.NotModified {
		fmt.Fprintf(e.Stdout, "%s is current (the origin's table is unchanged, ETag %s)\n", path, res.ETag)
		return nil
	}
	fmt.Fprintf(e.Stdout, "installed %s: built %s, %d bytes, %d ported; received %d bytes in %s\n",
		path, res.Info.BuiltAt.Format(time.RFC3339), res.Info.Size, res.Info.Counts.Ported,
		res.Bytes, time.Since(start).Round(time.Millisecond))
	return nil
}
