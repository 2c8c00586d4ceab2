package wallet

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
)

func Run(ctx context.Context, e *cliutil.Env, args []string) error {
	_, args, err := cliutil.Subcommand(e, args, "lnpdb wallet credit --accounts DSN --account ID --amount 25.00 --ref INVOICE-123", "credit")
	if err != nil {
		return err
	}
	sf := cliutil.NewStoreFlags(e, "wallet credit", true)
	amountText := sf.FS.String("amount", "", "dollars to add, e.g. 25.00 (at most 6 decimals)")
	ref := sf.FS.String("ref", "", "the payment's `reference` (an invoice number): the same ref is credited once")
	if err := cliutil.Parse(sf.E, sf.FS, args); err != nil {
		return err
	}
	// Check the amount before opening the store: bad input changes nothing.
	amount, err := billing.ParseAmount(*amountText)
	if err != nil {
		return fmt.Errorf("%w: --amount: %v", cliutil.ErrUsage, err)
	}
	if amount == 0 {
		return fmt.Errorf("%w: --amount must be more than 0", cliutil.ErrUsage)
	}
	if strings.TrimSpace(*ref) == "" {
		return fmt.Errorf("%w: --ref is required (a top-up is credited once per reference)", cliutil.ErrUsage)
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
	c, err := adm.Credit(ctx, *sf.Account, amount, *ref)
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
