// Command lnpdb builds, inspects, verifies and serves lnpdb routing tables.
//
// Usage:
//
//	lnpdb <command> [flags] [args]
//
// Run "lnpdb help" for the list of commands and "lnpdb <command> -h" for a
// command's flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// command is one subcommand of the binary. Each runs from its own file, so
// commands stay independent of each other.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *env, args []string) error
}

// env is what a command may touch of the process: its streams. Tests run
// commands in-process with buffers in place of the real streams.
type env struct {
	stdout io.Writer
	stderr io.Writer
}

// commands are the binary's subcommands, by name, in the order help lists
// them.
var commands = []command{
	{"account", "accounts that pay for lookups: account create|list|show|suspend|activate --accounts DSN", runAccount},
	{"apply", "apply an NPAC update feed (CSV: action,tn,lrn,spid,activated_at) to a table", runApply},
	{"build", "build a table from a source directory", runBuild},
	{"compact", "fold a table's pending updates into a new file, atomically", runCompact},
	{"gen", "write a synthetic source directory of any size (for benchmarks and demos)", runGen},
	{"inspect", "describe a table: sections, counts, sizes, checksums", runInspect},
	{"journal", "check a table's journal, or set a damaged one aside: journal check|recover --db FILE", runJournal},
	{"key", "API keys: key new --keys FILE [--rpm N], or key new|list|revoke --accounts DSN --account ID", runKey},
	{"lookup", "look numbers up in a table and print the REST response bodies", runLookup},
	{"price", "prices per lookup: price set|list --accounts DSN [--account ID]", runPrice},
	{"pull", "fetch a table over HTTP(S) if the origin has a new one, verify it and rename it in: pull URL FILE", runPull},
	{"serve", "serve lookups over REST and GraphQL (no flags: the sample, with a dev key)", runServe},
	{"usage", "the usage ledger: usage export --accounts DSN --month 2026-11 --format csv", runUsage},
	{"verify", "check every checksum and record of a table (exit 1 if damaged)", runVerify},
	{"wallet", "top up an account: wallet credit --accounts DSN --account ID --amount 25.00 --ref INVOICE", runWallet},
}

// findCommand returns the command called name.
func findCommand(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// errUsage marks an error whose message is a usage complaint: exit status 2.
var errUsage = errors.New("usage")

// exitError carries a specific exit status (e.g. verify's 1 on corruption).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, &env{stdout: os.Stdout, stderr: os.Stderr}, os.Args[1:]))
}

func run(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(e.stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := findCommand(args[0])
	if !ok {
		fmt.Fprintf(e.stderr, "lnpdb: unknown command %q\n\n", args[0])
		usage(e.stderr)
		return 2
	}
	err := c.run(ctx, e, args[1:])
	var ee *exitError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ee):
		fmt.Fprintf(e.stderr, "lnpdb %s: %v\n", c.name, ee.err)
		return ee.code
	case errors.Is(err, errUsage):
		fmt.Fprintf(e.stderr, "lnpdb %s: %v\n", c.name, err)
		return 2
	default:
		fmt.Fprintf(e.stderr, "lnpdb %s: %v\n", c.name, err)
		return 1
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: lnpdb <command> [flags] [args]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
}

// newFlags returns a FlagSet for a command that reports errors instead of
// exiting, and prints its usage to the command's stderr.
func newFlags(e *env, name, argsUsage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "usage: lnpdb %s [flags] %s\n", name, argsUsage)
		fs.PrintDefaults()
	}
	return fs
}

// parseArgs parses args into fs. When the operands left are not n of them
// (n < 0: at least one), or a required flag is empty, it prints the
// command's usage and returns a usage error saying what the command wants.
func parseArgs(fs *flag.FlagSet, args []string, n int, want string, required ...*string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	ok := fs.NArg() == n || (n < 0 && fs.NArg() > 0)
	for _, r := range required {
		ok = ok && *r != ""
	}
	if !ok {
		fs.Usage()
		return fmt.Errorf("%w: %s", errUsage, want)
	}
	return nil
}
