// Package healthcheck is lnpdb healthcheck: exit 0 if a server's /api/v1/status says ok.
package healthcheck

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/config"
	"github.com/spf13/cobra"
)

type options struct {
	e       *cliutil.Env
	timeout time.Duration
}

// NewCmdHealthcheck returns lnpdb healthcheck.
func NewCmdHealthcheck(e *cliutil.Env) *cobra.Command {
	opts := &options{e: e}
	cmd := &cobra.Command{
		Use:   "healthcheck [URL]",
		Short: "exit 0 if a server's /api/v1/status says ok (for container health checks)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHealthcheck(cmd.Context(), opts, args)
		},
	}
	fs := cmd.Flags()
	fs.DurationVar(&opts.timeout, "timeout", 5*time.Second, "give up after this `duration`")
	return cmd
}

// runHealthcheck is lnpdb healthcheck [URL]: exit 0 when a server's
// /api/v1/status answers 200 with status "ok", 1 otherwise, saying why.
// Without a URL it asks the server that serve, run in the same
// environment, listens on: LNPDB_ADDR, or serve's default --addr. It
// is what a container's HEALTHCHECK or a supervisor runs where the image
// holds lnpdb and nothing else (no curl, no shell).
func runHealthcheck(ctx context.Context, opts *options, args []string) error {
	e := opts.e
	if len(args) > 1 {
		return fmt.Errorf("%w: want at most one URL", cliutil.ErrUsage)
	}
	url := cliutil.HealthURL(cliutil.DefaultAddr)
	if addr, ok := os.LookupEnv(config.EnvName("addr")); ok && addr != "" {
		url = cliutil.HealthURL(addr)
	}
	if len(args) == 1 {
		url = args[0]
	}
	ctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()
	if err := cliutil.CheckStatus(ctx, url); err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "%s: ok\n", url)
	return nil
}
