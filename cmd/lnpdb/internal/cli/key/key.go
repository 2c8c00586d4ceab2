package key

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
)

func Run(ctx context.Context, e *cliutil.Env, args []string) error {
	if isStoreKeyCommand(args) {
		return runStoreKey(ctx, e, args)
	}
	if len(args) > 0 && cliutil.IsHelp(args[0]) {
		fmt.Fprintln(e.Stdout, "usage: lnpdb key new --keys FILE [--rpm N], or lnpdb key new|list|revoke --accounts DSN --account ID [flags]")
		return flag.ErrHelp
	}
	if len(args) == 0 || args[0] != "new" {
		fmt.Fprintln(e.Stderr, "usage: lnpdb key new --keys FILE [--rpm N]")
		return fmt.Errorf("%w: the only subcommand is new", cliutil.ErrUsage)
	}
	fs := cliutil.NewFlags(e, "key new", "")
	keysPath := fs.String("keys", "", "keys `file` to add the key's hash to (created with mode 0600)")
	rpm := fs.Int("rpm", 0, "the key's own limit in requests per minute (default: the server's --rate-limit)")
	if err := cliutil.Parse(e, fs, args[1:]); err != nil {
		return err
	}
	switch {
	case fs.NArg() != 0:
		return fmt.Errorf("%w: key new takes no arguments", cliutil.ErrUsage)
	case *keysPath == "":
		return fmt.Errorf("%w: --keys FILE is required", cliutil.ErrUsage)
	case *rpm < 0:
		return fmt.Errorf("%w: --rpm must be positive", cliutil.ErrUsage)
	}
	key := auth.NewKey()
	k := auth.HashKey(key)
	k.Limit = *rpm
	if err := appendKey(*keysPath, k); err != nil {
		return err
	}
	fmt.Fprintln(e.Stdout, key)
	fmt.Fprintf(e.Stderr, "added key %s to %s; the key itself is shown only now and stored nowhere\n", k.ID(), *keysPath)
	return nil
}

// appendKey adds k's line to the keys file at path, creating it 0600. An
// existing file must parse, so that a key is never added to a file the
// server would refuse.
func appendKey(path string, k auth.Key) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if len(old) > 0 {
		if _, err := auth.LoadKeys(path); err != nil {
			return fmt.Errorf("not adding to a keys file that does not parse: %w", err)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	line := fmt.Sprintf("%s # key %s, added %s\n", k.Line(), k.ID(), time.Now().UTC().Format(time.RFC3339))
	if len(old) > 0 && old[len(old)-1] != '\n' {
		line = "\n" + line
	}
	_, err = io.WriteString(f, line)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
