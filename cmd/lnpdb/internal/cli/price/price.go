package price

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
)

func Run(ctx context.Context, e *cliutil.Env, args []string) error {
	sub, args, err := cliutil.Subcommand(e, args, "lnpdb price set|list --accounts DSN [--account ID] [--kind KIND --price DOLLARS]", "set", "list")
	if err != nil {
		return err
	}
	sf := cliutil.NewStoreFlags(e, "price "+sub, true)
	var kind, price *string
	if sub == "set" {
		kind = sf.FS.String("kind", "", "the billable `kind`: "+kindNames())
		price = sf.FS.String("price", "", "dollars per lookup, e.g. 0.0008 (without --account: the default for every account without its own)")
	}
	if err := cliutil.Parse(sf.E, sf.FS, args); err != nil {
		return err
	}
	var p billing.Micros
	if sub == "set" {
		if !billing.Kind(*kind).Valid() {
			return fmt.Errorf("%w: --kind must be one of %s", cliutil.ErrUsage, kindNames())
		}
		if p, err = billing.ParseAmount(*price); err != nil {
			return fmt.Errorf("%w: --price: %v", cliutil.ErrUsage, err)
		}
	}
	s, err := sf.Open(ctx, false)
	if err != nil {
		return err
	}
	defer s.Close()
	var prices billing.Prices
	if sub == "set" {
		ctx, adm, err := cliutil.Admin(ctx, s)
		if err != nil {
			return err
		}
		prices, err = adm.SetPrice(ctx, *sf.Account, billing.Kind(*kind), p)
		if err != nil {
			return err
		}
	} else if prices, err = s.Prices(ctx, *sf.Account); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tPRICE (USD)")
	for _, k := range billing.Kinds {
		fmt.Fprintf(tw, "%s\t%s\n", k, prices[k])
	}
	return tw.Flush()
}

func kindNames() string {
	names := make([]string, len(billing.Kinds))
	for i, k := range billing.Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}
