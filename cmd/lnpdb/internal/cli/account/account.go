// Package account is lnpdb account create|list|show|suspend|activate: the accounts that pay for lookups, in the accounts store.
package account

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/spf13/cobra"
)

type options struct {
	e    *cliutil.Env
	sub  string // create, list, show, suspend or activate
	sf   *cliutil.StoreFlags
	name string // create's --name
}

// NewCmdAccount returns lnpdb account and its subcommands.
func NewCmdAccount(e *cliutil.Env) *cobra.Command {
	return cliutil.Group("account", "accounts that pay for lookups",
		newCmdSub(e, "create", "create an account: prints its ID"),
		newCmdSub(e, "list", "list the accounts, their balances and status"),
		newCmdSub(e, "show", "show an account, its keys and this month's usage"),
		newCmdSub(e, "suspend", "suspend an account: its keys are refused"),
		newCmdSub(e, "activate", "activate a suspended account"))
}

func newCmdSub(e *cliutil.Env, sub, short string) *cobra.Command {
	opts := &options{e: e, sub: sub}
	cmd := &cobra.Command{
		Use:   sub + " --accounts DSN",
		Short: short,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAccount(cmd.Context(), opts, args)
		},
	}
	opts.sf = cliutil.AddStoreFlags(cmd.Flags(), sub != "create" && sub != "list")
	if sub == "create" {
		cmd.Flags().StringVar(&opts.name, "name", "", "the account's `name` (a customer)")
	}
	return cmd
}

func runAccount(ctx context.Context, opts *options, args []string) error {
	e, sub, sf := opts.e, opts.sub, opts.sf
	ctx, s, adm, err := sf.OpenAdmin(ctx, args, sub != "create" && sub != "list")
	if err != nil {
		return err
	}
	defer s.Close()
	switch sub {
	case "create":
		a, err := adm.CreateAccount(ctx, opts.name)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.Stdout, a.ID)
		fmt.Fprintf(e.Stderr, "created account %s (%s); add a key with: lnpdb key new --accounts DSN --account %s\n", a.ID, a.Name, a.ID)
	case "list":
		accts, err := s.Accounts(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tSTATUS\tBALANCE\tLEASED\tCREDITED\tCREATED")
		for _, a := range accts {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Name, a.Status, a.Balance, a.Leased, a.Credited, a.Created.Format(time.RFC3339))
		}
		return tw.Flush()
	case "show":
		return showAccount(ctx, e.Stdout, s, sf.Account)
	case "suspend", "activate":
		st := billing.StatusSuspended
		if sub == "activate" {
			st = billing.StatusActive
		}
		a, err := adm.SetStatus(ctx, sf.Account, st)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.Stdout, "%s %s\n", a.ID, a.Status)
	}
	return nil
}

func showAccount(ctx context.Context, w io.Writer, s billing.Store, id string) error {
	a, err := s.Account(ctx, id)
	if err != nil {
		return err
	}
	now := time.Now()
	free, err := s.FreeLeft(ctx, id, billing.Month(now))
	if err != nil {
		return err
	}
	keys, err := s.Keys(ctx, id)
	if err != nil {
		return err
	}
	prices, err := s.Prices(ctx, id)
	if err != nil {
		return err
	}
	usage, err := s.Usage(ctx, id, billing.Month(now))
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "account\t%s\nname\t%s\nstatus\t%s\ncreated\t%s\n", a.ID, a.Name, a.Status, a.Created.Format(time.RFC3339))
	fmt.Fprintf(tw, "balance\t$%s (and $%s leased by serving processes)\ncredited\t$%s\nfree lookups left\t%d of %d in %s (not counting those leased)\n",
		a.Balance, a.Leased, a.Credited, free, billing.FreeTier, billing.Month(now))
	fmt.Fprintln(tw, "\nprices\t")
	for _, k := range billing.Kinds {
		fmt.Fprintf(tw, "  %s\t$%s\n", k, prices[k])
	}
	fmt.Fprintln(tw, "\nkeys\t")
	for _, k := range keys {
		state := "valid"
		if !k.Revoked.IsZero() {
			state = "revoked " + k.Revoked.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "  %s\t%q rpm=%d created %s, %s\n", k.ID, k.Label, k.Limit, k.Created.Format(time.RFC3339), state)
	}
	fmt.Fprintf(tw, "\nusage %s\t\n", billing.Month(now))
	for _, u := range usage {
		fmt.Fprintf(tw, "  %s %s\t%d lookups, %d free, $%s\n", u.Day, u.Kind, u.Lookups, u.Free, u.Amount)
	}
	return tw.Flush()
}
