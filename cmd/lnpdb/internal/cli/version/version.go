package version

import (
	"context"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/buildinfo"
)

// Run prints the binary's identity (lnpdb version, lnpdb --version).
func Run(ctx context.Context, e *cliutil.Env, args []string) error {
	fs := cliutil.NewFlags(e, "version", "")
	if err := cliutil.ParseArgs(e, fs, args, 0, "version takes no arguments"); err != nil {
		return err
	}
	return buildinfo.Read().Print(e.Stdout)
}
