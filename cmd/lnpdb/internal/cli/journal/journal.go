// Package journal is lnpdb journal check|recover: a table's journal checked, or a damaged one set aside.
package journal

import (
	"fmt"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/format"
	"github.com/spf13/cobra"
)

type options struct {
	e    *cliutil.Env
	verb string // check or recover
	db   string
}

// NewCmdJournal returns lnpdb journal check|recover.
func NewCmdJournal(e *cliutil.Env) *cobra.Command {
	return cliutil.Group("journal", "check a table's journal, or set a damaged one aside",
		newCmdVerb(e, "check", "check a table's journal: exit 1 if damaged"),
		newCmdVerb(e, "recover", "keep what verifies of a damaged journal and set the rest aside"))
}

func newCmdVerb(e *cliutil.Env, verb, short string) *cobra.Command {
	opts := &options{e: e, verb: verb}
	cmd := &cobra.Command{
		Use:   verb + " --db FILE",
		Short: short,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runJournal(opts, args)
		},
	}
	cmd.Flags().StringVar(&opts.db, "db", "", "the table `file` whose journal (FILE.journal) to "+verb)
	return cmd
}

func runJournal(opts *options, args []string) error {
	e, verb := opts.e, opts.verb
	if err := cliutil.Want(args, 0, "want --db FILE", opts.db); err != nil {
		return err
	}
	var (
		rep format.JournalReport
		err error
	)
	if verb == "check" {
		rep, err = format.CheckJournal(opts.db)
	} else {
		rep, err = format.RecoverJournal(opts.db)
	}
	if err != nil {
		return cliutil.WriterAdvice(err, "stop it first")
	}
	out := e.Stdout
	fmt.Fprintf(out, "journal %s: %d bytes\n", rep.Path, rep.Size)
	switch {
	case rep.Damage == nil:
		fmt.Fprintf(out, "ok: %d committed batches, %d updates replay\n", rep.Batches, rep.Updates)
		if rep.TornBytes > 0 {
			fmt.Fprintf(out, "an incomplete last batch (%d bytes, %d whole update records) was never acknowledged and is dropped at the next open\n", rep.TornBytes, rep.TornUpdates)
		}
		return nil
	case verb == "check":
		fmt.Fprintf(out, "DAMAGED: %v\n", rep.Damage)
		fmt.Fprintf(out, "recoverable: %d committed batches (%d updates) still verify; %d bytes (%d updates, as far as their commit records tell) do not\n",
			rep.Batches, rep.Updates, rep.LostBytes, rep.LostUpdates)
		fmt.Fprintf(out, "to keep what verifies and set the damaged journal aside, stop the server and run: lnpdb journal recover --db %s\n", opts.db)
		return &cliutil.ExitError{Code: 1, Err: fmt.Errorf("journal damaged")}
	default:
		fmt.Fprintf(out, "was damaged: %v\n", rep.Damage)
		fmt.Fprintf(out, "set aside as %s (unchanged)\n", rep.SetAsideAs)
		fmt.Fprintf(out, "kept: %d committed batches, %d updates; lost: %d bytes, %d updates\n", rep.Batches, rep.Updates, rep.LostBytes, rep.LostUpdates)
		return nil
	}
}
