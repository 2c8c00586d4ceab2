package verify

import (
	"context"
	"errors"
	"fmt"
	"time"
	_ "time/tzdata" // rate centers name IANA zones; do not depend on the host's zoneinfo

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/format"
)

func Run(ctx context.Context, e *cliutil.Env, args []string) error {
	db, err := cliutil.OpenArg(e, "verify", args)
	if err != nil {
		if errors.Is(err, format.ErrCorrupt) || errors.Is(err, format.ErrFormat) {
			return &cliutil.ExitError{Code: 1, Err: err}
		}
		return err
	}
	defer db.Close()
	start := time.Now()
	if err := db.Verify(); err != nil {
		return &cliutil.ExitError{Code: 1, Err: cliutil.NamingFile(db.Info().Path, err)}
	}
	info := db.Info()
	fmt.Fprintf(e.Stdout, "%s: ok (%d sections, %s, %d ported numbers, verified in %s)\n",
		info.Path, len(info.Sections), cliutil.HumanBytes(info.Size), info.Counts.Ported, time.Since(start).Round(time.Millisecond))
	return nil
}
