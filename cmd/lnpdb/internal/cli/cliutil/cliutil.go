// Package cliutil holds what the lnpdb commands (internal/cli/...) share:
// the streams a command writes to (Env), flag parsing with the
// environment's settings (platform/config), the usage and exit-status
// errors, and small helpers more than one command uses.
package cliutil

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/config"
)

// Env is what a command may touch of the process: its streams. Tests run
// commands in-process with buffers in place of the real streams.
type Env struct {
	Stdout io.Writer
	Stderr io.Writer
	// FlagSets, when not nil, collects every FlagSet NewFlags makes: the
	// shell completion runs each command with -h to learn its flags.
	FlagSets *[]*flag.FlagSet
}

// ErrUsage marks an error whose message is a usage complaint: exit status 2.
var ErrUsage = errors.New("usage")

// ExitError carries a specific exit status (e.g. verify's 1 on corruption).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }

func (e *ExitError) Unwrap() error { return e.Err }

// IsHelp reports whether arg asks for help.
func IsHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help" || arg == "help"
}

// NewFlags returns a FlagSet for a command that reports errors instead of
// exiting. Parse it with Parse.
func NewFlags(e *Env, name, argsUsage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: lnpdb %s [flags] %s\n", name, argsUsage)
		fs.PrintDefaults()
	}
	if e.FlagSets != nil {
		*e.FlagSets = append(*e.FlagSets, fs)
	}
	return fs
}

// Parse parses args into fs, then sets the flags the command line left out
// from the environment (platform/config). Help (-h, --help) is printed to
// stdout and ends the command with status 0; a bad flag prints the usage to
// stderr and is a usage error (status 2).
func Parse(e *Env, fs *flag.FlagSet, args []string) error {
	config.Annotate(fs)
	fs.SetOutput(io.Discard) // the flag package's own report; ours follows
	usage := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = usage
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(e.Stdout)
		fs.Usage()
		return err
	case err != nil:
		fs.SetOutput(e.Stderr)
		fs.Usage()
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	fs.SetOutput(e.Stderr)
	if err := config.Apply(fs, os.LookupEnv); err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return nil
}

// ParseArgs parses args into fs (see Parse). When the operands left are not
// n of them (n < 0: at least one), or a required flag is empty, it prints
// the command's usage and returns a usage error saying what the command
// wants.
func ParseArgs(e *Env, fs *flag.FlagSet, args []string, n int, want string, required ...*string) error {
	if err := Parse(e, fs, args); err != nil {
		return err
	}
	ok := fs.NArg() == n || (n < 0 && fs.NArg() > 0)
	for _, r := range required {
		ok = ok && *r != ""
	}
	if !ok {
		fs.Usage()
		return fmt.Errorf("%w: %s", ErrUsage, want)
	}
	return nil
}

// Subcommand returns the subcommand args start with, one of subs, and the
// args after it. Help asked for instead is printed to stdout and ends the
// command with status 0; anything else is a usage error.
func Subcommand(e *Env, args []string, usage string, subs ...string) (string, []string, error) {
	if len(args) > 0 && IsHelp(args[0]) {
		fmt.Fprintln(e.Stdout, "usage: "+usage)
		fmt.Fprintf(e.Stdout, "the subcommands are %s; lnpdb %s SUBCOMMAND --help lists its flags\n", strings.Join(subs, ", "), strings.Fields(usage)[1])
		return "", nil, flag.ErrHelp
	}
	if len(args) > 0 {
		for _, s := range subs {
			if args[0] == s {
				return s, args[1:], nil
			}
		}
	}
	fmt.Fprintln(e.Stderr, "usage: "+usage)
	return "", nil, fmt.Errorf("%w: the subcommands are %s", ErrUsage, strings.Join(subs, ", "))
}
