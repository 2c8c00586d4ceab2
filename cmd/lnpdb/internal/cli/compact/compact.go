package compact

import (
	"context"
	"fmt"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/format"
)

func Run(ctx context.Context, e *cliutil.Env, args []string) error {
	fs := cliutil.NewFlags(e, "compact", "")
	dbPath := fs.String("db", "", "table `file` to compact (required)")
	if err := cliutil.ParseArgs(e, fs, args, 0, "want --db FILE", dbPath); err != nil {
		return err
	}
	db, err := format.OpenWriter(*dbPath)
	if err != nil {
		return cliutil.WriterAdvice(err, "compact through the server's POST /admin/v1/compact, or stop it first")
	}
	defer db.Close()
	pending := db.PendingUpdates()
	start := time.Now()
	if err := db.Compact(ctx); err != nil {
		return err
	}
	info := db.Info()
	fmt.Fprintf(e.Stdout, "compacted %d pending numbers into %s (%s, %d ported) in %s\n",
		pending, info.Path, cliutil.HumanBytes(info.Size), info.Counts.Ported, time.Since(start).Round(time.Millisecond))
	return nil
}
