// Package completion is lnpdb completion bash|zsh|fish|powershell: the
// shell completion scripts cobra writes for the command tree. They
// complete commands, subcommands and flags, and ask lnpdb itself
// (lnpdb __complete) what a word may be, so that a command or flag added
// is completed without anything else to change.
package completion

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
)

// NewCmdCompletion returns lnpdb completion and a subcommand per shell.
func NewCmdCompletion(e *cliutil.Env) *cobra.Command {
	shell := func(name, install string, write func(root *cobra.Command, w io.Writer) error) *cobra.Command {
		return &cobra.Command{
			Use:   name,
			Short: "print the " + name + " completion script",
			Long:  "Print the " + name + " completion script of lnpdb. To install it:\n\n  " + install,
			RunE: func(cmd *cobra.Command, args []string) error {
				if err := cliutil.Want(args, 0, "completion takes only the shell's name"); err != nil {
					return err
				}
				return write(cmd.Root(), e.Stdout)
			},
		}
	}
	return cliutil.Group("completion", "print a shell completion script",
		shell("bash", "source <(lnpdb completion bash), or save it as /etc/bash_completion.d/lnpdb (bash-completion 2)",
			func(root *cobra.Command, w io.Writer) error { return root.GenBashCompletionV2(w, true) }),
		shell("zsh", `lnpdb completion zsh > "${fpath[1]}/_lnpdb" (then start a new shell)`,
			func(root *cobra.Command, w io.Writer) error { return root.GenZshCompletion(w) }),
		shell("fish", "lnpdb completion fish > ~/.config/fish/completions/lnpdb.fish",
			func(root *cobra.Command, w io.Writer) error { return root.GenFishCompletion(w, true) }),
		shell("powershell", "lnpdb completion powershell | Out-String | Invoke-Expression (add it to $PROFILE to keep it)",
			func(root *cobra.Command, w io.Writer) error { return root.GenPowerShellCompletionWithDesc(w) }))
}
