// Command lnpdb builds, inspects, verifies and serves lnpdb routing tables.
//
// Usage:
//
//	lnpdb <command> [flags] [args]
//
// Run "lnpdb help" for the list of commands and "lnpdb <command> -h" for a
// command's flags. Each command is a package of internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // rate centers name IANA zones; do not depend on the host's zoneinfo

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/root"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(root.Run(ctx, &cliutil.Env{Stdout: os.Stdout, Stderr: os.Stderr}, os.Args[1:]))
}
