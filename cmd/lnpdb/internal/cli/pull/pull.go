package pull

import (
	"context"
	"fmt"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/distribute"
)

func Run(ctx context.Context, e *cliutil.Env, args []string) error {
	fs := cliutil.NewFlags(e, "pull", "URL")
	dbPath := fs.String("db", "", "the table `file` to install the fetched table as")
	keyFile := fs.String("key-file", "", "`file` holding the key to send as a bearer token (an admin key of an lnpdb origin's GET /admin/v1/table)")
	maxBytes := fs.Int64("max-bytes", 0, "refuse a table larger than `n` bytes, received or decompressed, before writing it (0: the size its header declares)")
	timeout := fs.Duration("timeout", distribute.DefaultTimeout, "give up a fetch that takes longer than `duration` in all")
	if err := cliutil.ParseArgs(e, fs, args, -1, "want --db FILE URL"); err != nil {
		return err
	}
	switch {
	case fs.NArg() == 2: // the deprecated pull URL FILE
		if err := cliutil.DeprecatedDB(e, "pull", dbPath, fs.Arg(1), "pull URL FILE"); err != nil {
			return err
		}
	case fs.NArg() != 1 || *dbPath == "":
		fs.Usage()
		return fmt.Errorf("%w: want --db FILE URL", cliutil.ErrUsage)
	}
	url, path := fs.Arg(0), *dbPath
	if *maxBytes < 0 || *timeout <= 0 {
		return fmt.Errorf("%w: --max-bytes must be 0 or more, --timeout positive", cliutil.ErrUsage)
	}
	key, err := cliutil.ReadKeyFile(*keyFile)
	if err != nil {
		return err
	}
	start := time.Now()
	res, err := distribute.Pull(ctx, url, path, distribute.Options{Key: key, Progress: e.Stderr, MaxBytes: *maxBytes, Timeout: *timeout})
	if err != nil {
		return err
	}
	if res.NotModified {
		fmt.Fprintf(e.Stdout, "%s is current (the origin's table is unchanged, ETag %s)\n", path, res.ETag)
		return nil
	}
	fmt.Fprintf(e.Stdout, "installed %s: built %s, %d bytes, %d ported; received %d bytes in %s\n",
		path, res.Info.BuiltAt.Format(time.RFC3339), res.Info.Size, res.Info.Counts.Ported,
		res.Bytes, time.Since(start).Round(time.Millisecond))
	return nil
}
