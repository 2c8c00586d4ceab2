// Package usage is lnpdb usage export: the usage ledger.
package usage

import (
	"context"
	"encoding/csv"
	"fmt"
	"strconv"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/spf13/cobra"
)

type options struct {
	e             *cliutil.Env
	sf            *cliutil.StoreFlags
	month, format string
}

// NewCmdUsage returns lnpdb usage export.
func NewCmdUsage(e *cliutil.Env) *cobra.Command {
	opts := &options{e: e}
	export := &cobra.Command{
		Use:   "export --accounts DSN [--month YYYY-MM] [--format csv] [--account ID]",
		Short: "write a month of the usage ledger, a row per account, day and kind",
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExport(cmd.Context(), opts, args)
		},
	}
	fs := export.Flags()
	opts.sf = cliutil.AddStoreFlags(fs, true)
	fs.StringVar(&opts.month, "month", time.Now().UTC().Format("2006-01"), "the `month` to export, YYYY-MM (UTC; default: the current month)")
	fs.StringVar(&opts.format, "format", "csv", "output `format`: csv")
	return cliutil.Group("usage", "the usage ledger", export)
}

func runExport(ctx context.Context, opts *options, args []string) error {
	e, sf := opts.e, opts.sf
	if opts.format != "csv" {
		return fmt.Errorf("%w: --format must be csv", cliutil.ErrUsage)
	}
	if _, err := billing.ParseMonth(opts.month); err != nil {
		return fmt.Errorf("%w: --month: %v", cliutil.ErrUsage, err)
	}
	s, err := sf.Open(ctx, args, false)
	if err != nil {
		return err
	}
	defer s.Close()
	rows, err := s.Usage(ctx, sf.Account, opts.month)
	if err != nil {
		return err
	}
	w := csv.NewWriter(e.Stdout)
	_ = w.Write([]string{"account_id", "day", "kind", "lookups", "free", "amount_micros", "amount_usd"})
	for _, u := range rows {
		_ = w.Write([]string{u.AccountID, u.Day, string(u.Kind), strconv.FormatInt(u.Lookups, 10), strconv.FormatInt(u.Free, 10), strconv.FormatInt(int64(u.Amount), 10), u.Amount.String()})
	}
	w.Flush()
	return w.Error()
}
