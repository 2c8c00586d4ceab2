package journal

import (
	"context"
	"fmt"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/format"
)

func Run(ctx context.Context, e *cliutil.Env, args []string) error {
	if len(args) == 0 || (args[0] != "check" && args[0] != "recover") {
		fmt.Fprintln(e.Stderr, "usage: lnpdb journal check|recover --db FILE")
		return fmt.Errorf("%w: want check or recover", cliutil.ErrUsage)
	}
	verb := args[0]
	fs := cliutil.NewFlags(e, "journal "+verb, "")
	dbPath := fs.String("db", "", "the table `file` whose journal (FILE.journal) to "+verb)
	if err := cliutil.ParseArgs(e, fs, args[1:], 0, "want --db FILE", dbPath); err != nil {
		return err
	}
	var (
		rep format.JournalReport
		err error
	)
	if verb == "check" {
		rep, err = format.CheckJournal(*dbPath)
	} else {
		rep, err = format.RecoverJournal(*dbPath)
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
		fmt.Fprintf(out, "to keep what verifies and set the damaged journal aside, stop the server and run: lnpdb journal recover --db %s\n", *dbPath)
		return &cliutil.ExitError{Code: 1, Err: fmt.Errorf("journal damaged")}
	default:
		fmt.Fprintf(out, "was damaged: %v\n", rep.Damage)
		fmt.Fprintf(out, "set aside as %s (unchanged)\n", rep.SetAsideAs)
		fmt.Fprintf(out, "kept: %d committed batches, %d updates; lost: %d bytes, %d updates\n", rep.Batches, rep.Updates, rep.LostBytes, rep.LostUpdates)
		return nil
	}
}
