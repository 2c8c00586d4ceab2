// Package wallet is lnpdb wallet credit: an account topped up.
package wallet

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/spf13/cobra"
)

type options struct {
	e               *cliutil.Env
	sf              *cliutil.StoreFlags
	amountText, ref string
}

// NewCmdWallet returns lnpdb wallet credit.
func NewCmdWallet(e *cliutil.Env) *cobra.Command {
	opts := &options{e: e}
	credit := &cobra.Command{
		Use:   "credit --accounts DSN --account ID --amount 25.00 --ref INVOICE-123",
		Short: "add a payment to an account's wallet, once per reference",
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCredit(cmd.Context(), opts, args)
		},
	}
	fs := credit.Flags()
	opts.sf = cliutil.AddStoreFlags(fs, true)
	fs.StringVar(&opts.amountText, "amount", "", "dollars to add, e.g. 25.00 (at most 6 decimals)")
	fs.StringVar(&opts.ref, "ref", "", "the payment's `reference` (an invoice number): the same ref is credited once")
	return cliutil.Group("wallet", "top up an account", credit)
}

func runCredit(ctx context.Context, opts *options, args []string) error {
	e, sf := opts.e, opts.sf
	// Check the amount before opening the store: bad input changes nothing.
	amount, err := billing.ParseAmount(opts.amountText)
	if err != nil {
		return fmt.Errorf("%w: --amount: %v", cliutil.ErrUsage, err)
	}
	if amount == 0 {
		return fmt.Errorf("%w: --amount must be more than 0", cliutil.ErrUsage)
	}
	if strings.TrimSpace(opts.ref) == "" {
		return fmt.Errorf("%w: --ref is required (a top-up is credited once per reference)", cliutil.ErrUsage)
	}
	ctx, s, adm, err := sf.OpenAdmin(ctx, args, true)
	if err != nil {
		return err
	}
	defer s.Close()
	c, err := adm.Credit(ctx, sf.Account, amount, opts.ref)
	if err != nil {
		return err
	}
	if c.Applied {
		fmt.Fprintf(e.Stdout, "credited $%s to %s (ref %s); balance $%s\n", c.Amount, c.AccountID, c.Ref, c.Balance)
	} else {
		fmt.Fprintf(e.Stdout, "ref %s was already credited ($%s on %s): nothing changed; balance $%s\n", c.Ref, c.Amount, c.Created.Format(time.RFC3339), c.Balance)
	}
	return nil
}
