package usage

import (
	"context"
	"encoding/csv"
	"fmt"
	"strconv"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
)

func Run(ctx context.Context, e *cliutil.Env, args []string) error {
	_, args, err := cliutil.Subcommand(e, args, "lnpdb usage export --accounts DSN [--month YYYY-MM] [--format csv] [--account ID]", "export")
	if err != nil {
		return err
	}
	sf := cliutil.NewStoreFlags(e, "usage export", true)
	month := sf.FS.String("month", time.Now().UTC().Format("2006-01"), "the `month` to export, YYYY-MM (UTC; default: the current month)")
	format := sf.FS.String("format", "csv", "output format: csv")
	if err := cliutil.Parse(sf.E, sf.FS, args); err != nil {
		return err
	}
	if *format != "csv" {
		return fmt.Errorf("%w: --format must be csv", cliutil.ErrUsage)
	}
	if _, err := billing.ParseMonth(*month); err != nil {
		return fmt.Errorf("%w: --month: %v", cliutil.ErrUsage, err)
	}
	s, err := sf.Open(ctx, false)
	if err != nil {
		return err
	}
	defer s.Close()
	rows, err := s.Usage(ctx, *sf.Account, *month)
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
