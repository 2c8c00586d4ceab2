// Package version is lnpdb version: the binary's version and build.
package version

import (
	"context"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/buildinfo"
	"github.com/spf13/cobra"
)

type options struct {
	e *cliutil.Env
}

// NewCmdVersion returns lnpdb version.
func NewCmdVersion(e *cliutil.Env) *cobra.Command {
	opts := &options{e: e}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "print the binary's version, its build and the table format it reads",
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVersion(cmd.Context(), opts, args)
		},
	}
	return cmd
}

// runVersion prints the binary's identity (lnpdb version, lnpdb --version).
func runVersion(ctx context.Context, opts *options, args []string) error {
	e := opts.e
	if err := cliutil.Want(args, 0, "version takes no arguments"); err != nil {
		return err
	}
	return buildinfo.Read().Print(e.Stdout)
}
