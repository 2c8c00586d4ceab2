// Package cliutil holds what the lnpdb commands (internal/cli/...) share:
// the streams a command writes to (Env), the usage and exit-status errors
// and how they end the process, the command that only groups
// subcommands, and small helpers more than one command uses.
package cliutil

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/config"
)

// Env is what a command may touch of the process: its streams. Tests run
// commands in-process with buffers in place of the real streams.
type Env struct {
	Stdout io.Writer
	Stderr io.Writer
	// Stdin is what a command reads for the file "-"; nil is os.Stdin.
	Stdin io.Reader
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

// Want checks a command's operands and required flags once its flags are
// parsed and set from the environment: args must be n operands (n < 0: at
// least one) and each required flag not empty, or it returns a usage error
// saying what the command wants.
func Want(args []string, n int, want string, required ...string) error {
	ok := len(args) == n || (n < 0 && len(args) > 0)
	for _, r := range required {
		ok = ok && r != ""
	}
	if !ok {
		return fmt.Errorf("%w: %s", ErrUsage, want)
	}
	return nil
}

// Group returns the command use that only holds subs (journal check|recover):
// run without one of them it is a usage error naming them.
func Group(use, short string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use + " SUBCOMMAND",
		Short: short,
		RunE: func(cmd *cobra.Command, args []string) error {
			var names []string
			for _, c := range cmd.Commands() {
				if c.IsAvailableCommand() {
					names = append(names, c.Name())
				}
			}
			if len(args) > 0 {
				return fmt.Errorf("%w: unknown subcommand %q: the subcommands are %s", ErrUsage, args[0], strings.Join(names, ", "))
			}
			return fmt.Errorf("%w: the subcommands are %s", ErrUsage, strings.Join(names, ", "))
		},
	}
	cmd.AddCommand(subs...)
	return cmd
}

// FlagError is the usage error for err, pflag's for a bad command line: a
// value that does not parse says the form its flag takes, as a bad
// LNPDB_ variable does (platform/config), rather than the parser's words.
func FlagError(err error) error {
	var bad *pflag.InvalidValueError
	if errors.As(err, &bad) {
		if want := config.Form(bad.GetFlag()); want != "" {
			err = fmt.Errorf("invalid value %q for --%s: not %s", bad.GetValue(), bad.GetFlag().Name, want)
		}
	}
	return fmt.Errorf("%w: %v", ErrUsage, err)
}

// Exit writes err, which cmd's run returned, on e.Stderr, and returns the
// process's exit status: 0 for nil, 2 for a usage error (ErrUsage: a bad
// flag or operand; a pointer to the command's --help follows), an
// ExitError's own, 1 for anything else. The message names the command
// ("lnpdb serve: ..."), its first word for a subcommand's.
func Exit(e *Env, cmd *cobra.Command, err error) int {
	if err == nil {
		return 0
	}
	name := "lnpdb"
	if cmd != nil {
		for c := cmd; c.HasParent(); c = c.Parent() {
			if !c.Parent().HasParent() {
				name += " " + c.Name()
			}
		}
	}
	var ee *ExitError
	switch {
	case errors.As(err, &ee):
		fmt.Fprintf(e.Stderr, "%s: %v\n", name, ee.Err)
		return ee.Code
	case errors.Is(err, ErrUsage):
		// The exit status says it is a usage error; the message need
		// not ("lnpdb usage: usage: ..." was the usage command's).
		fmt.Fprintf(e.Stderr, "%s: %s\n", name, strings.TrimPrefix(err.Error(), ErrUsage.Error()+": "))
		if cmd != nil {
			fmt.Fprintf(e.Stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		}
		return 2
	default:
		fmt.Fprintf(e.Stderr, "%s: %v\n", name, err)
		return 1
	}
}
