// Package root is the lnpdb binary's command line: the root command, to
// which each command (a package of internal/cli) adds itself, and how
// the process runs it.
package root

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/account"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/apply"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/build"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/compact"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/completion"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/gen"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/healthcheck"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/inspect"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/journal"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/key"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/lookup"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/man"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/price"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/pull"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/serve"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/usage"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/verify"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/version"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/wallet"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/buildinfo"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/config"
)

// NewCmdRoot returns the lnpdb command with every command under it,
// writing to e's streams.
func NewCmdRoot(e *cliutil.Env) *cobra.Command {
	root := &cobra.Command{
		Use:   "lnpdb",
		Short: "build, inspect, verify and serve number portability routing tables",
		Long: `lnpdb builds a compact, checksummed table of number portability data (LRN,
CNAM, messaging, trust) from source files and serves lookups from it over
REST, GraphQL, SIP redirects, ENUM and Kamailio's pdb protocol.

Every flag --some-name may also be set as LNPDB_SOME_NAME in the environment
(upper case, - as _); one given on the command line wins. A secret flag also
takes LNPDB_SOME_NAME_FILE, naming a file that holds its value, as its
--some-name-file flag does.

Exit status: 0 on success or when help is asked for; 1 on failure (a damaged
table, an unreachable store, ...); 2 for a usage error (an unknown command or
flag, a missing or bad value).`,
		Version:       versionText(),
		SilenceErrors: true, // Exit reports them
		SilenceUsage:  true,
		// An operand of lnpdb itself is a command it does not have.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q", args[0])
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
			}
			return fmt.Errorf("%w: %s", cliutil.ErrUsage, msg)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			// No command is a usage error: the list goes to stderr.
			cmd.SetOut(e.Stderr)
			_ = cmd.Usage()
			return fmt.Errorf("%w: want a command", cliutil.ErrUsage)
		},
		// The flags the command line left out are set from the
		// environment (platform/config), before any command runs.
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if err := config.Apply(cmd.Flags(), os.LookupEnv); err != nil {
				return fmt.Errorf("%w: %v", cliutil.ErrUsage, err)
			}
			return nil
		},
	}
	root.InitDefaultVersionFlag()
	root.SetOut(e.Stdout)
	root.SetErr(e.Stderr)
	root.SetVersionTemplate("{{.Version}}")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cliutil.FlagError(err) })
	root.CompletionOptions.DisableDefaultCmd = true // lnpdb completion is its own
	root.AddCommand(
		account.NewCmdAccount(e),
		apply.NewCmdApply(e),
		build.NewCmdBuild(e),
		compact.NewCmdCompact(e),
		completion.NewCmdCompletion(e),
		gen.NewCmdGen(e),
		healthcheck.NewCmdHealthcheck(e),
		inspect.NewCmdInspect(e),
		journal.NewCmdJournal(e),
		key.NewCmdKey(e),
		lookup.NewCmdLookup(e),
		man.NewCmdMan(e),
		price.NewCmdPrice(e),
		pull.NewCmdPull(e),
		serve.NewCmdServe(e),
		usage.NewCmdUsage(e),
		verify.NewCmdVerify(e),
		version.NewCmdVersion(e),
		wallet.NewCmdWallet(e),
	)
	annotate(root)
	return root
}

// annotate ends the usage of every flag of c and the commands under it
// with the environment variables it reads, so that --help lists them,
// and says what completes the flag's value.
func annotate(c *cobra.Command) {
	// --help defined now rather than as the command runs: a command line
	// is then read alike wherever it stands (key --help new).
	c.InitDefaultHelpFlag()
	config.Annotate(c.Flags())
	// What the completion scripts offer for a flag's value: files for a
	// file's, directories for a directory's, nothing for any other.
	c.Flags().VisitAll(func(f *pflag.Flag) {
		kind, _ := pflag.UnquoteUsage(f)
		switch {
		case f.NoOptDefVal != "": // a bool: no value
		case kind == "directory":
			_ = c.MarkFlagDirname(f.Name)
		case kind == "file" || strings.HasSuffix(f.Name, "-file"):
			_ = c.MarkFlagFilename(f.Name)
		default:
			_ = c.RegisterFlagCompletionFunc(f.Name, cobra.NoFileCompletions)
		}
	})
	for _, sub := range c.Commands() {
		annotate(sub)
	}
}

// versionText is what lnpdb --version prints: lnpdb version's output.
func versionText() string {
	var b bytes.Buffer
	_ = buildinfo.Read().Print(&b)
	return b.String()
}

// Run runs the command line args (os.Args[1:]) and returns the process's
// exit status (cliutil.Exit).
func Run(ctx context.Context, e *cliutil.Env, args []string) int {
	root := NewCmdRoot(e)
	root.SetArgs(doubleDash(root, args))
	cmd, err := root.ExecuteContextC(ctx)
	return cliutil.Exit(e, cmd, err)
}

// doubleDash returns args with the single-dash long flags Go's flag
// package took (-db FILE, -help), which lnpdb parsed before it used
// pflag, written with two dashes: scripts written for them keep working.
// Only names of the command's flags are rewritten: a value that starts
// with a dash is left alone.
func doubleDash(root *cobra.Command, args []string) []string {
	cmd, _, err := root.Find(args)
	if err != nil {
		cmd = root
	}
	lookup := func(name string) *pflag.Flag {
		if f := cmd.Flags().Lookup(name); f != nil {
			return f
		}
		return cmd.InheritedFlags().Lookup(name)
	}
	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") || len(a) < 3 {
			continue
		}
		long := strings.HasPrefix(a, "--")
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := lookup(name)
		if f == nil {
			continue
		}
		if !long {
			out[i] = "-" + a
		}
		if !hasValue && f.NoOptDefVal == "" {
			i++ // the flag's value, whatever it looks like
		}
	}
	return out
}

// Command is a command of lnpdb as its help lists it.
type Command struct {
	Name, Summary string
	Subs          []string // its subcommands; nil when it has none
}

// Commands returns lnpdb's commands (not help), by name.
func Commands() []Command {
	var cs []Command
	for _, c := range NewCmdRoot(&cliutil.Env{Stdout: io.Discard, Stderr: io.Discard}).Commands() {
		if !c.IsAvailableCommand() || c.Name() == "help" {
			continue
		}
		cmd := Command{Name: c.Name(), Summary: c.Short}
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() {
				cmd.Subs = append(cmd.Subs, s.Name())
			}
		}
		cs = append(cs, cmd)
	}
	return cs
}
