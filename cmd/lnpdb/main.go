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
	"sort"
	"syscall"
)

// command is one subcommand of the binary. Each lives in its own file and
// registers itself from init, so commands stay independent of each other.
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

var commands = map[string]command{}

func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("lnpdb: command registered twice: " + c.name)
	}
	commands[c.name] = c
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
	c, ok := commands[args[0]]
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
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-9s %s\n", n, commands[n].summary)
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
