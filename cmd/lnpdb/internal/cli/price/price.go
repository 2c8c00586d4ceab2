// Package price is lnpdb price set|list: prices per lookup.
package price

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/spf13/cobra"
)

type options struct {
	e           *cliutil.Env
	sub         string // set or list
	sf          *cliutil.StoreFlags
	kind, price string
}

// NewCmdPrice returns lnpdb price set|list.
func NewCmdPrice(e *cliutil.Env) *cobra.Command {
	return cliutil.Group("price", "prices per lookup",
		newCmdSub(e, "set", "set the price of a kind of lookup, for an account or the default"),
		newCmdSub(e, "list", "list the prices, an account's or the defaults"))
}

func newCmdSub(e *cliutil.Env, sub, short string) *cobra.Command {
	opts := &options{e: e, sub: sub}
	cmd := &cobra.Command{
		Use:   sub + " --accounts DSN [--account ID]",
		Short: short,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPrice(cmd.Context(), opts, args)
		},
	}
	fs := cmd.Flags()
	opts.sf = cliutil.AddStoreFlags(fs, true)
	if sub == "set" {
		cmd.Use += " --kind KIND --price DOLLARS"
		fs.StringVar(&opts.kind, "kind", "", "the billable `kind`: "+kindNames())
		fs.StringVar(&opts.price, "price", "", "dollars per lookup, e.g. 0.0008 (without --account: the default for every account without its own)")
	}
	return cmd
}

func runPrice(ctx context.Context, opts *options, args []string) error {
	e, sub, sf := opts.e, opts.sub, opts.sf
	var err error
	var p billing.Micros
	if sub == "set" {
		if !billing.Kind(opts.kind).Valid() {
			return fmt.Errorf("%w: --kind must be one of %s", cliutil.ErrUsage, kindNames())
		}
		if p, err = billing.ParseAmount(opts.price); err != nil {
			return fmt.Errorf("%w: --price: %v", cliutil.ErrUsage, err)
		}
	}
	s, err := sf.Open(ctx, args, false)
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
		prices, err = adm.SetPrice(ctx, sf.Account, billing.Kind(opts.kind), p)
		if err != nil {
			return err
		}
	} else if prices, err = s.Prices(ctx, sf.Account); err != nil {
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
