// Package key is lnpdb key new|list|revoke: API keys, in a keys file or of an account.
package key

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type options struct {
	e     *cliutil.Env
	sub   string // new, list or revoke
	sf    *cliutil.StoreFlags
	keys  string // new's --keys FILE: the keys-file form
	rpm   int
	label string
	keyID string // revoke's --key
}

// NewCmdKey returns lnpdb key new|list|revoke. key new has two forms: with
// --keys FILE it adds a key to a keys file, with --accounts DSN to an
// account of the store; list and revoke are the store's.
func NewCmdKey(e *cliutil.Env) *cobra.Command {
	return cliutil.Group("key", "API keys: in a keys file (--keys FILE) or of an account (--accounts DSN)",
		newCmdSub(e, "new", "make a key: print it, keep its hash", "--keys FILE [--rpm N], or key new --accounts DSN --account ID [--label TEXT] [--rpm N]"),
		newCmdSub(e, "list", "list an account's keys", "--accounts DSN --account ID"),
		newCmdSub(e, "revoke", "revoke a key of an account", "--accounts DSN --account ID --key ID"))
}

func newCmdSub(e *cliutil.Env, sub, short, use string) *cobra.Command {
	opts := &options{e: e, sub: sub}
	cmd := &cobra.Command{
		Use:   sub + " " + use,
		Short: short,
		RunE: func(cmd *cobra.Command, args []string) error {
			if sub == "new" && !storeForm(cmd.Flags(), opts) {
				return runKeysFile(opts, args)
			}
			return runStoreKey(cmd.Context(), opts, args)
		},
	}
	fs := cmd.Flags()
	opts.sf = cliutil.AddStoreFlags(fs, true)
	switch sub {
	case "new":
		fs.StringVar(&opts.keys, "keys", "", "keys `file` to add the key's hash to (created with mode 0600), instead of an account")
		fs.IntVar(&opts.rpm, "rpm", 0, "the key's own limit in requests per minute (default: the server's --rate-limit)")
		fs.StringVar(&opts.label, "label", "", "with --accounts: what the key is for")
	case "revoke":
		fs.StringVar(&opts.keyID, "key", "", "the key's `ID` (key_…, from key list)")
	}
	return cmd
}

// storeForm tells key new's store form from its keys-file form: the store's
// when --accounts is on the command line, or, without --keys there, in the
// environment.
func storeForm(fs *pflag.FlagSet, opts *options) bool {
	switch {
	case fs.Changed("accounts"), fs.Changed("accounts-file"):
		return true
	case fs.Changed("keys"):
		return false
	}
	return opts.sf.DSN != ""
}

// runKeysFile is key new --keys FILE.
func runKeysFile(opts *options, args []string) error {
	e := opts.e
	switch {
	case len(args) != 0:
		return fmt.Errorf("%w: key new takes no arguments", cliutil.ErrUsage)
	case opts.keys == "":
		return fmt.Errorf("%w: --keys FILE is required", cliutil.ErrUsage)
	case opts.rpm < 0:
		return fmt.Errorf("%w: --rpm must be positive", cliutil.ErrUsage)
	case opts.sf.Account != "" || opts.label != "":
		return fmt.Errorf("%w: --account and --label are an account's key's (--accounts DSN), not a keys file's", cliutil.ErrUsage)
	}
	key := auth.NewKey()
	k := auth.HashKey(key)
	k.Limit = opts.rpm
	if err := appendKey(opts.keys, k); err != nil {
		return err
	}
	fmt.Fprintln(e.Stdout, key)
	fmt.Fprintf(e.Stderr, "added key %s to %s; the key itself is shown only now and stored nowhere\n", k.ID(), opts.keys)
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
