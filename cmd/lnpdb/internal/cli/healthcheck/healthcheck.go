package healthcheck

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/config"
)

// Run is lnpdb healthcheck [URL]: exit 0 when a server's
// /api/v1/status answers 200 with status "ok", 1 otherwise, saying why.
// Without a URL it asks the server that serve, run in the same
// environment, listens on: LNPDB_ADDR, or serve's default --addr. It
// is what a container's HEALTHCHECK or a supervisor runs where the image
// holds lnpdb and nothing else (no curl, no shell).
func Run(ctx context.Context, e *cliutil.Env, args []string) error {
	fs := cliutil.NewFlags(e, "healthcheck", "[URL]")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this `duration`")
	if err := cliutil.Parse(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return fmt.Errorf("%w: want at most one URL", cliutil.ErrUsage)
	}
	url := cliutil.HealthURL(cliutil.DefaultAddr)
	if addr, ok := os.LookupEnv(config.EnvName("addr")); ok && addr != "" {
		url = cliutil.HealthURL(addr)
	}
	if fs.NArg() == 1 {
		url = fs.Arg(0)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := cliutil.CheckStatus(ctx, url); err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "%s: ok\n", url)
	return nil
}
