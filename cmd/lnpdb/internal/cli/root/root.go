// Package root is the lnpdb binary's command line: the table of its
// commands (each a package of internal/cli) and the dispatch to them.
package root

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/account"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/apply"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/build"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/compact"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/gen"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/healthcheck"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/inspect"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/journal"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/key"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/lookup"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/price"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/pull"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/serve"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/usage"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/verify"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/version"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/wallet"
)

// Command is one subcommand of the binary. Each runs from its own package, so
// commands stay independent of each other.
type Command struct {
	Name    string
	Summary string
	Run     func(ctx context.Context, env *cliutil.Env, args []string) error
	// Subs are the command's own subcommands (account create|list|…),
	// each with its own flags; nil when the command takes flags directly.
	Subs []string
}

// Commands are the binary's subcommands, by name, in the order help lists
// them. They are set in init: completion reads them.
var Commands []Command

func init() { Commands = commandTable }

var commandTable = []Command{
	{"account", "accounts that pay for lookups: account create|list|show|suspend|activate --accounts DSN", account.Run, []string{"create", "list", "show", "suspend", "activate"}},
	{"apply", "apply NPAC update feeds (CSV: action,tn,lrn,spid,activated_at[,sv_type], or a latest-view file; .gz, .zst) to a table, each file all or nothing", apply.Run, nil},
	{"build", "build a table from a source directory: build --db FILE SRC_DIR", build.Run, nil},
	{"compact", "fold a table's pending updates into a new file, atomically", compact.Run, nil},
	{"completion", "print a shell completion script: completion bash|zsh|fish", runCompletion, []string{"bash", "zsh", "fish"}},
	{"gen", "write a synthetic source directory of any size (for benchmarks and demos)", gen.Run, nil},
	{"healthcheck", "exit 0 if a server's /api/v1/status says ok (for container health checks): healthcheck [URL]", healthcheck.Run, nil},
	{"inspect", "describe a table: sections, counts, sizes, checksums: inspect --db FILE", inspect.Run, nil},
	{"journal", "check a table's journal, or set a damaged one aside: journal check|recover --db FILE", journal.Run, []string{"check", "recover"}},
	{"key", "API keys: key new --keys FILE [--rpm N], or key new|list|revoke --accounts DSN --account ID", key.Run, []string{"new", "list", "revoke"}},
	{"lookup", "look numbers up in a table and print the REST response bodies", lookup.Run, nil},
	{"man", "print the manual page, every command and flag, in roff: man > lnpdb.1", runMan, nil},
	{"price", "prices per lookup: price set|list --accounts DSN [--account ID]", price.Run, []string{"set", "list"}},
	{"pull", "fetch a table over HTTP(S) if the origin has a new one, verify it and rename it in: pull --db FILE URL", pull.Run, nil},
	{"serve", "serve lookups over REST and GraphQL (no flags: the sample, with a dev key)", serve.Run, nil},
	{"usage", "the usage ledger: usage export --accounts DSN [--month 2026-11] --format csv", usage.Run, []string{"export"}},
	{"verify", "check every checksum and record of a table (exit 1 if damaged): verify --db FILE", verify.Run, nil},
	{"version", "print the binary's version, its build and the table format it reads", version.Run, nil},
	{"wallet", "top up an account: wallet credit --accounts DSN --account ID --amount 25.00 --ref INVOICE", wallet.Run, []string{"credit"}},
}

// findCommand returns the command called name.
func findCommand(name string) (Command, bool) {
	for _, c := range Commands {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

func Run(ctx context.Context, e *cliutil.Env, args []string) int {
	switch {
	case len(args) == 0:
		// No command is a usage error: the list goes to stderr.
		printUsage(e.Stderr)
		return 2
	case args[0] == "--version" || args[0] == "-version":
		args = []string{"version"}
	case len(args) >= 2 && args[0] == "help":
		args = []string{args[1], "--help"} // lnpdb help serve
	case cliutil.IsHelp(args[0]):
		printUsage(e.Stdout)
		return 0
	}
	c, ok := findCommand(args[0])
	if !ok {
		fmt.Fprintf(e.Stderr, "lnpdb: unknown command %q\n\n", args[0])
		printUsage(e.Stderr)
		return 2
	}
	err := c.Run(ctx, e, args[1:])
	var ee *cliutil.ExitError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ee):
		fmt.Fprintf(e.Stderr, "lnpdb %s: %v\n", c.Name, ee.Err)
		return ee.Code
	case errors.Is(err, cliutil.ErrUsage):
		// The exit status says it is a usage error; the message need
		// not ("lnpdb usage: usage: …" was the usage command's).
		fmt.Fprintf(e.Stderr, "lnpdb %s: %s\n", c.Name, strings.TrimPrefix(err.Error(), cliutil.ErrUsage.Error()+": "))
		return 2
	default:
		fmt.Fprintf(e.Stderr, "lnpdb %s: %v\n", c.Name, err)
		return 1
	}
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: lnpdb <command> [flags] [args]\n\ncommands:")
	for _, c := range Commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.Name, c.Summary)
	}
	fmt.Fprintln(w, "\nlnpdb <command> --help (or lnpdb help <command>) lists a command's flags; every flag may\nalso be set as LNPDB_<FLAG> in the environment, or LNPDB_<FLAG>_FILE naming a file holding it.")
}
