package main

import (
	"context"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/buildinfo"
)

// runVersion prints the binary's identity (lnpdb version, lnpdb --version).
func runVersion(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "version", "")
	if err := parseArgs(e, fs, args, 0, "version takes no arguments"); err != nil {
		return err
	}
	return buildinfo.Read().Print(e.stdout)
}
