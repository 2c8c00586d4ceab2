package key

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
)

// runStoreKey is lnpdb key new|list|revoke --accounts DSN --account ID.
func runStoreKey(ctx context.Context, opts *options, args []string) error {
	e, sub, sf := opts.e, opts.sub, opts.sf
	if opts.keys != "" {
		return fmt.Errorf("%w: give --keys FILE or --accounts DSN, not both", cliutil.ErrUsage)
	}
	switch {
	case opts.rpm < 0:
		return fmt.Errorf("%w: --rpm must not be negative", cliutil.ErrUsage)
	case sub == "revoke" && opts.keyID == "":
		return fmt.Errorf("%w: --key ID is required", cliutil.ErrUsage)
	}
	ctx, s, adm, err := sf.OpenAdmin(ctx, args, true)
	if err != nil {
		return err
	}
	defer s.Close()
	switch sub {
	case "new":
		k, key, err := adm.NewKey(ctx, sf.Account, opts.label, opts.rpm)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.Stdout, key)
		fmt.Fprintf(e.Stderr, "added key %s to account %s; the key itself is shown only now and stored nowhere\n", k.ID, k.AccountID)
	case "list":
		keys, err := s.Keys(ctx, sf.Account)
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
		k, err := adm.RevokeKey(ctx, sf.Account, opts.keyID)
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
