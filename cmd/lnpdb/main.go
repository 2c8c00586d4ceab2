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
	"strings"
	"syscall"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/config"
)

// command is one subcommand of the binary. Each runs from its own file, so
// commands stay independent of each other.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *env, args []string) error
	// subs are the command's own subcommands (account create|list|…),
	// each with its own flags; nil when the command takes flags directly.
	subs []string
}

// env is what a command may touch of the process: its streams. Tests run
// commands in-process with buffers in place of the real streams.
type env struct {
	stdout io.Writer
	stderr io.Writer
	// flagSets, when not nil, collects every FlagSet newFlags makes: the
	// shell completion runs each command with -h to learn its flags.
	flagSets *[]*flag.FlagSet
}

// commands are the binary's subcommands, by name, in the order help lists
// them. They are set in init: completion reads them.
var commands []command

func init() { commands = commandTable }

var commandTable = []command{
	{"account", "accounts that pay for lookups: account create|list|show|suspend|activate --accounts DSN", runAccount, []string{"create", "list", "show", "suspend", "activate"}},
	{"apply", "apply NPAC update feeds (CSV: action,tn,lrn,spid,activated_at[,sv_type], or a latest-view file; .gz, .zst) to a table, each file all or nothing", runApply, nil},
	{"build", "build a table from a source directory: build --db FILE SRC_DIR", runBuild, nil},
	{"compact", "fold a table's pending updates into a new file, atomically", runCompact, nil},
	{"completion", "print a shell completion script: completion bash|zsh|fish", runCompletion, []string{"bash", "zsh", "fish"}},
	{"gen", "write a synthetic source directory of any size (for benchmarks and demos)", runGen, nil},
	{"healthcheck", "exit 0 if a server's /api/v1/status says ok (for container health checks): healthcheck [URL]", runHealthcheck, nil},
	{"inspect", "describe a table: sections, counts, sizes, checksums: inspect --db FILE", runInspect, nil},
	{"journal", "check a table's journal, or set a damaged one aside: journal check|recover --db FILE", runJournal, []string{"check", "recover"}},
	{"key", "API keys: key new --keys FILE [--rpm N], or key new|list|revoke --accounts DSN --account ID", runKey, []string{"new", "list", "revoke"}},
	{"lookup", "look numbers up in a table and print the REST response bodies", runLookup, nil},
	{"man", "print the manual page, every command and flag, in roff: man > lnpdb.1", runMan, nil},
	{"price", "prices per lookup: price set|list --accounts DSN [--account ID]", runPrice, []string{"set", "list"}},
	{"pull", "fetch a table over HTTP(S) if the origin has a new one, verify it and rename it in: pull --db FILE URL", runPull, nil},
	{"serve", "serve lookups over REST and GraphQL (no flags: the sample, with a dev key)", runServe, nil},
	{"usage", "the usage ledger: usage export --accounts DSN [--month 2026-11] --format csv", runUsage, []string{"export"}},
	{"verify", "check every checksum and record of a table (exit 1 if damaged): verify --db FILE", runVerify, nil},
	{"version", "print the binary's version, its build and the table format it reads", runVersion, nil},
	{"wallet", "top up an account: wallet credit --accounts DSN --account ID --amount 25.00 --ref INVOICE", runWallet, []string{"credit"}},
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

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help" || arg == "help"
}

func run(ctx context.Context, e *env, args []string) int {
	switch {
	case len(args) == 0:
		// No command is a usage error: the list goes to stderr.
		usage(e.stderr)
		return 2
	case args[0] == "--version" || args[0] == "-version":
		args = []string{"version"}
	case len(args) >= 2 && args[0] == "help":
		args = []string{args[1], "--help"} // lnpdb help serve
	case isHelp(args[0]):
		usage(e.stdout)
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
		// The exit status says it is a usage error; the message need
		// not ("lnpdb usage: usage: …" was the usage command's).
		fmt.Fprintf(e.stderr, "lnpdb %s: %s\n", c.name, strings.TrimPrefix(err.Error(), errUsage.Error()+": "))
		return 2
	default:
		fmt.Fprintf(e.stderr, "lnpdb %s: %v\n", c.name, err)
		return 1
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: lnpdb <command> [flags] [args]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nlnpdb <command> --help (or lnpdb help <command>) lists a command's flags; every flag may\nalso be set as LNPDB_<FLAG> in the environment, or LNPDB_<FLAG>_FILE naming a file holding it.")
}

// newFlags returns a FlagSet for a command that reports errors instead of
// exiting. Parse it with parse.
func newFlags(e *env, name, argsUsage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: lnpdb %s [flags] %s\n", name, argsUsage)
		fs.PrintDefaults()
	}
	if e.flagSets != nil {
		*e.flagSets = append(*e.flagSets, fs)
	}
	return fs
}

// parse parses args into fs, then sets the flags the command line left out
// from the environment (platform/config). Help (-h, --help) is printed to
// stdout and ends the command with status 0; a bad flag prints the usage to
// stderr and is a usage error (status 2).
func parse(e *env, fs *flag.FlagSet, args []string) error {
	config.Annotate(fs)
	fs.SetOutput(io.Discard) // the flag package's own report; ours follows
	usage := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = usage
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(e.stdout)
		fs.Usage()
		return err
	case err != nil:
		fs.SetOutput(e.stderr)
		fs.Usage()
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	fs.SetOutput(e.stderr)
	if err := config.Apply(fs, os.LookupEnv); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return nil
}

// parseArgs parses args into fs (see parse). When the operands left are not
// n of them (n < 0: at least one), or a required flag is empty, it prints
// the command's usage and returns a usage error saying what the command
// wants.
func parseArgs(e *env, fs *flag.FlagSet, args []string, n int, want string, required ...*string) error {
	if err := parse(e, fs, args); err != nil {
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
