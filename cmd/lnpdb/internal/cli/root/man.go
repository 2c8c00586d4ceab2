package root

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/buildinfo"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/config"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The manual page is generated from the command tree and each command's
// own flags (completionTable): a command or flag added is documented
// without anything else to change.

// newCmdMan returns lnpdb man, which prints lnpdb(1) in roff (man(7) macros): lnpdb man > lnpdb.1,
// or lnpdb man | man -l -.
func newCmdMan(e *cliutil.Env) *cobra.Command {
	return &cobra.Command{
		Use:   "man",
		Short: "print the manual page, every command and flag, in roff: man > lnpdb.1",
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cliutil.Want(args, 0, "man takes no arguments"); err != nil {
				return err
			}
			return writeMan(e.Stdout, completionTable(cmd.Root()), buildinfo.Read().Version)
		},
	}
}

// writeMan writes the page for table, naming version in its footer.
func writeMan(w io.Writer, table []compCmd, version string) error {
	b := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(b, format+"\n", args...) }
	p(`.TH LNPDB 1 "" %s "lnpdb manual"`, roffQuote("lnpdb "+version))
	p(".nh") // no hyphenation: flag names stay whole
	p(".ad l")
	p(".SH NAME")
	p(`lnpdb \- build, inspect, verify and serve number portability routing tables`)
	p(".SH SYNOPSIS")
	p(".B lnpdb")
	p(`.I command`)
	p(`.RI [ subcommand ]\ [ flags ]\ [ args ]`)
	p(".br")
	p(`.B lnpdb help`)
	p(`.I command`)
	p(".SH DESCRIPTION")
	p("%s", roffText("lnpdb builds a compact, checksummed table of number portability data (LRN, CNAM, messaging, trust) from source files and serves lookups from it over REST, GraphQL, SIP redirects, ENUM and Kamailio's pdb protocol. Each command below lists its flags; a flag is written --name value or --name=value."))
	p(".SH COMMANDS")
	for _, cc := range table {
		p(".SS %s", roffQuote("lnpdb "+strings.Join(cc.words, " ")))
		p("%s", roffText(cc.summary))
		if len(cc.flags) > 0 && len(cc.words) > 1 {
			p(".PP")
		}
		for _, f := range cc.flags {
			p(".TP")
			if f.arg != "" {
				p(".BI %s \" %s\"", roffFlag(f.name), roffEscape(f.arg))
			} else {
				p(".B %s", roffFlag(f.name))
			}
			usage := f.usage
			if f.value && f.def != "" {
				usage += " (default " + f.def + ")"
			}
			p("%s", roffText(usage))
		}
	}
	p(".SH ENVIRONMENT")
	p("%s", roffText("Every flag --some-name may also be set as "+config.Prefix+"SOME_NAME (upper case, - as _); one given on the command line wins. A secret flag also takes "+config.Prefix+"SOME_NAME"+config.FileSuffix+", naming a file that holds its value, as its --some-name-file flag does."))
	p(".SH EXIT STATUS")
	p(".TP\n.B 0\nsuccess, or help asked for")
	p(".TP\n.B 1\nfailure (a damaged table, an unreachable store, ...)")
	p(".TP\n.B 2\na usage error: an unknown command or flag, a missing or bad value")
	p(".SH SEE ALSO")
	p("%s", roffText("lnpdb help, lnpdb COMMAND --help, lnpdb completion bash|zsh|fish; docs/OPERATIONS.md and docs/CONTRACT.md in the source."))
	return b.Flush()
}

// roffEscape escapes s for a roff text line or macro argument: a backslash
// is \e, a hyphen \- (a minus, which man pages use in flags and which
// copies as -), and a character outside ASCII its Unicode escape \[uXXXX]
// (roff input is ASCII).
func roffEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\e`)
		case r == '-':
			b.WriteString(`\-`)
		case r > 0x7e || r < ' ' && r != '\n' && r != '\t':
			fmt.Fprintf(&b, `\[u%04X]`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// roffText is s as filled text: escaped, and each line that would start
// with a control character ('.' or ') guarded with \&.
func roffText(s string) string {
	lines := strings.Split(roffEscape(s), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

// roffFlag is a flag's name for .B and .BI.
func roffFlag(name string) string { return roffEscape(name) }

// roffQuote is s as one quoted macro argument.
func roffQuote(s string) string {
	return `"` + strings.ReplaceAll(roffEscape(s), `"`, `""`) + `"`
}

// compFlag is a flag as completion offers it.
type compFlag struct {
	name, usage string
	value       bool   // takes a value (not a bool flag)
	file        bool   // the value is a file or directory
	arg         string // the value's name in the usage (`file`, `DSN`); "" for a bool flag
	def         string // the default, as -h prints it
}

// compCmd is a command, or a command and one of its subcommands.
type compCmd struct {
	words   []string // "serve", or "account", "create"
	summary string
	flags   []compFlag
}

// completionTable returns every command and subcommand under root with
// its flags.
func completionTable(root *cobra.Command) []compCmd {
	var table []compCmd
	learn := func(c *cobra.Command, words ...string) compCmd {
		cc := compCmd{words: words, summary: c.Short}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || f.Name == "help" {
				return
			}
			kind, usage := pflag.UnquoteUsage(f)
			cf := compFlag{name: "--" + f.Name, usage: usage, value: f.NoOptDefVal == "", arg: kind, def: f.DefValue}
			cf.file = cf.value && (kind == "file" || kind == "directory" || strings.HasSuffix(f.Name, "-file"))
			cc.flags = append(cc.flags, cf)
		})
		slices.SortFunc(cc.flags, func(a, b compFlag) int { return strings.Compare(a.name, b.name) })
		return cc
	}
	for _, c := range root.Commands() {
		if !c.IsAvailableCommand() || c.Name() == "help" {
			continue
		}
		if !c.HasAvailableSubCommands() {
			table = append(table, learn(c, c.Name()))
			continue
		}
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				table = append(table, learn(sub, c.Name(), sub.Name()))
			}
		}
	}
	return table
}
