package key

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/config"
)

// runStoreKey is lnpdb key new|list|revoke --accounts DSN --account ID.
func runStoreKey(ctx context.Context, e *cliutil.Env, args []string) error {
	sub, args, err := cliutil.Subcommand(e, args, "lnpdb key new|list|revoke --accounts DSN --account ID [flags]", "new", "list", "revoke")
	if err != nil {
		return err
	}
	sf := cliutil.NewStoreFlags(e, "key "+sub, true)
	var label, keyID *string
	var rpm *int
	switch sub {
	case "new":
		label = sf.FS.String("label", "", "what the key is for")
		rpm = sf.FS.Int("rpm", 0, "the key's own limit in requests per minute (default: the server's --rate-limit)")
	case "revoke":
		keyID = sf.FS.String("key", "", "the key's `ID` (key_…, from key list)")
	}
	if err := cliutil.Parse(sf.E, sf.FS, args); err != nil {
		return err
	}
	switch {
	case rpm != nil && *rpm < 0:
		return fmt.Errorf("%w: --rpm must not be negative", cliutil.ErrUsage)
	case keyID != nil && *keyID == "":
		return fmt.Errorf("%w: --key ID is required", cliutil.ErrUsage)
	}
	s, err := sf.Open(ctx, true)
	if err != nil {
		return err
	}
	defer s.Close()
	ctx, adm, err := cliutil.Admin(ctx, s)
	if err != nil {
		return err
	}
	switch sub {
	case "new":
		k, key, err := adm.NewKey(ctx, *sf.Account, *label, *rpm)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.Stdout, key)
		fmt.Fprintf(e.Stderr, "added key %s to account %s; the key itself is shown only now and stored nowhere\n", k.ID, k.AccountID)
	case "list":
		keys, err := s.Keys(ctx, *sf.Account)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tLABEL\tRPM\tCREATED\tLAST USED\tREVOKED")
		for _, k := range keys {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", k.ID, billing.Escaped(k.Label), k.Limit, k.Created.Format(time.RFC3339), timeOrDash(k.LastUsed), timeOrDash(k.Revoked))
		}
		return tw.Flush()
	case "revoke":
		k, err := adm.RevokeKey(ctx, *sf.Account, *keyID)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.Stdout, "%s revoked %s\n", k.ID, k.Revoked.Format(time.RFC3339))
	}
	return nil
}

// timeOrDash writes t in RFC 3339, or "-" for the zero time (never).
func timeOrDash(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// isStoreKeyCommand tells lnpdb key's store form (--accounts, list,
// revoke) from the keys-file form: key new takes the store form when
// --accounts is given, on the command line or (without --keys there) in the
// environment.
func isStoreKeyCommand(args []string) bool {
	if len(args) > 0 && (args[0] == "list" || args[0] == "revoke") {
		return true
	}
	keys := false
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "accounts", "accounts-file":
			return true
		case "keys":
			keys = true
		}
	}
	return !keys && envSet("accounts")
}

// envSet reports whether flag's variable, or its file form, is set.
func envSet(flag string) bool {
	_, v := os.LookupEnv(config.EnvName(flag))
	_, f := os.LookupEnv(config.EnvName(flag) + config.FileSuffix)
	return v || f
}
