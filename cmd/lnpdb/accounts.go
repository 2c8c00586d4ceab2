package main

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"io"
	"os"
	"os/user"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/config"
)

// The operator's commands on the accounts store (see cmd/lnpdb/internal/access/billing).
// Each takes --accounts DSN; a store that does not open changes nothing.

// storeFlags are the flags every accounts command takes.
type storeFlags struct {
	e       *env
	fs      *flag.FlagSet
	dsn     *string
	schema  *string
	account *string
}

func newStoreFlags(e *env, name string, account bool) storeFlags {
	fs := newFlags(e, name, "")
	sf := storeFlags{e: e, fs: fs, dsn: new(string)}
	config.Secret(fs, sf.dsn, "accounts", "", "accounts store `DSN`: bolt:///path/accounts.db or postgres://…")
	sf.schema = fs.String("accounts-schema", "", "with --accounts postgres://…: the PostgreSQL `schema` holding the store's tables, as serve's --accounts-schema (default: the connection's search_path)")
	if account {
		sf.account = fs.String("account", "", "account `ID`")
	}
	return sf
}

// open checks the parsed flags and opens the store; needAccount requires
// --account.
func (sf storeFlags) open(ctx context.Context, needAccount bool) (billing.Store, error) {
	switch {
	case sf.fs.NArg() != 0:
		return nil, fmt.Errorf("%w: %s takes no arguments (got %q)", errUsage, sf.fs.Name(), sf.fs.Arg(0))
	case *sf.dsn == "":
		return nil, fmt.Errorf("%w: --accounts DSN is required (bolt:///path/accounts.db or postgres://…)", errUsage)
	case needAccount && *sf.account == "":
		return nil, fmt.Errorf("%w: --account ID is required", errUsage)
	}
	return billing.OpenIn(ctx, *sf.dsn, *sf.schema)
}

// cliAdmin returns the operator's operations on s (the admin API's and the
// console's, package billing), and ctx carrying this command's actor, so
// that the changes they make are audited as the OS user's on this host,
// via "cli".
func cliAdmin(ctx context.Context, s billing.Store) (context.Context, *billing.Admin, error) {
	adm, err := billing.NewAdmin(billing.AdminConfig{
		Store:     s,
		Authorize: func(string) (string, bool) { return "", false }, // a command serves no requests
		NewKey:    newStoreKey,
	})
	return billing.WithActor(ctx, cliActor()), adm, err
}

// cliActor is who runs this command: the OS user (and, under sudo, who
// ran sudo) on this host.
func cliActor() billing.Actor {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if name == "" {
		name = "uid " + strconv.Itoa(os.Getuid())
	}
	if su := os.Getenv("SUDO_USER"); su != "" && su != name {
		name += " (sudo by " + su + ")"
	}
	host, _ := os.Hostname()
	return billing.Actor{Key: name, Remote: host, Via: "cli", At: time.Now()}
}

// newStoreKey returns a new API key of the accounts store and its SHA-256.
func newStoreKey() (string, [32]byte) { k := auth.NewKey(); return k, auth.HashKey(k).Hash }

// subcommand returns the subcommand args start with, one of subs, and the
// args after it. Help asked for instead is printed to stdout and ends the
// command with status 0; anything else is a usage error.
func subcommand(e *env, args []string, usage string, subs ...string) (string, []string, error) {
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprintln(e.stdout, "usage: "+usage)
		fmt.Fprintf(e.stdout, "the subcommands are %s; lnpdb %s SUBCOMMAND --help lists its flags\n", strings.Join(subs, ", "), strings.Fields(usage)[1])
		return "", nil, flag.ErrHelp
	}
	if len(args) > 0 {
		for _, s := range subs {
			if args[0] == s {
				return s, args[1:], nil
			}
		}
	}
	fmt.Fprintln(e.stderr, "usage: "+usage)
	return "", nil, fmt.Errorf("%w: the subcommands are %s", errUsage, strings.Join(subs, ", "))
}

func runAccount(ctx context.Context, e *env, args []string) error {
	sub, args, err := subcommand(e, args, "lnpdb account create|list|show|suspend|activate --accounts DSN [flags]", "create", "list", "show", "suspend", "activate")
	if err != nil {
		return err
	}
	sf := newStoreFlags(e, "account "+sub, sub != "create" && sub != "list")
	var name *string
	if sub == "create" {
		name = sf.fs.String("name", "", "the account's `name` (a customer)")
	}
	if err := parse(sf.e, sf.fs, args); err != nil {
		return err
	}
	s, err := sf.open(ctx, sf.account != nil)
	if err != nil {
		return err
	}
	defer s.Close()
	ctx, adm, err := cliAdmin(ctx, s)
	if err != nil {
		return err
	}
	switch sub {
	case "create":
		a, err := adm.CreateAccount(ctx, *name)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, a.ID)
		fmt.Fprintf(e.stderr, "created account %s (%s); add a key with: lnpdb key new --accounts DSN --account %s\n", a.ID, a.Name, a.ID)
	case "list":
		accts, err := s.Accounts(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tSTATUS\tBALANCE\tLEASED\tCREDITED\tCREATED")
		for _, a := range accts {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Name, a.Status, a.Balance, a.Leased, a.Credited, a.Created.Format(time.RFC3339))
		}
		return tw.Flush()
	case "show":
		return showAccount(ctx, e.stdout, s, *sf.account)
	case "suspend", "activate":
		st := billing.StatusSuspended
		if sub == "activate" {
			st = billing.StatusActive
		}
		a, err := adm.SetStatus(ctx, *sf.account, st)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s %s\n", a.ID, a.Status)
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

// runStoreKey is lnpdb key new|list|revoke --accounts DSN --account ID.
func runStoreKey(ctx context.Context, e *env, args []string) error {
	sub, args, err := subcommand(e, args, "lnpdb key new|list|revoke --accounts DSN --account ID [flags]", "new", "list", "revoke")
	if err != nil {
		return err
	}
	sf := newStoreFlags(e, "key "+sub, true)
	var label, keyID *string
	var rpm *int
	switch sub {
	case "new":
		label = sf.fs.String("label", "", "what the key is for")
		rpm = sf.fs.Int("rpm", 0, "the key's own limit in requests per minute (default: the server's --rate-limit)")
	case "revoke":
		keyID = sf.fs.String("key", "", "the key's `ID` (key_…, from key list)")
	}
	if err := parse(sf.e, sf.fs, args); err != nil {
		return err
	}
	switch {
	case rpm != nil && *rpm < 0:
		return fmt.Errorf("%w: --rpm must not be negative", errUsage)
	case keyID != nil && *keyID == "":
		return fmt.Errorf("%w: --key ID is required", errUsage)
	}
	s, err := sf.open(ctx, true)
	if err != nil {
		return err
	}
	defer s.Close()
	ctx, adm, err := cliAdmin(ctx, s)
	if err != nil {
		return err
	}
	switch sub {
	case "new":
		k, key, err := adm.NewKey(ctx, *sf.account, *label, *rpm)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, key)
		fmt.Fprintf(e.stderr, "added key %s to account %s; the key itself is shown only now and stored nowhere\n", k.ID, k.AccountID)
	case "list":
		keys, err := s.Keys(ctx, *sf.account)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tLABEL\tRPM\tCREATED\tLAST USED\tREVOKED")
		for _, k := range keys {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", k.ID, billing.Escaped(k.Label), k.Limit, k.Created.Format(time.RFC3339), timeOrDash(k.LastUsed), timeOrDash(k.Revoked))
		}
		return tw.Flush()
	case "revoke":
		k, err := adm.RevokeKey(ctx, *sf.account, *keyID)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s revoked %s\n", k.ID, k.Revoked.Format(time.RFC3339))
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

func runWallet(ctx context.Context, e *env, args []string) error {
	_, args, err := subcommand(e, args, "lnpdb wallet credit --accounts DSN --account ID --amount 25.00 --ref INVOICE-123", "credit")
	if err != nil {
		return err
	}
	sf := newStoreFlags(e, "wallet credit", true)
	amountText := sf.fs.String("amount", "", "dollars to add, e.g. 25.00 (at most 6 decimals)")
	ref := sf.fs.String("ref", "", "the payment's `reference` (an invoice number): the same ref is credited once")
	if err := parse(sf.e, sf.fs, args); err != nil {
		return err
	}
	// Check the amount before opening the store: bad input changes nothing.
	amount, err := billing.ParseAmount(*amountText)
	if err != nil {
		return fmt.Errorf("%w: --amount: %v", errUsage, err)
	}
	if amount == 0 {
		return fmt.Errorf("%w: --amount must be more than 0", errUsage)
	}
	if strings.TrimSpace(*ref) == "" {
		return fmt.Errorf("%w: --ref is required (a top-up is credited once per reference)", errUsage)
	}
	s, err := sf.open(ctx, true)
	if err != nil {
		return err
	}
	defer s.Close()
	ctx, adm, err := cliAdmin(ctx, s)
	if err != nil {
		return err
	}
	c, err := adm.Credit(ctx, *sf.account, amount, *ref)
	if err != nil {
		return err
	}
	if c.Applied {
		fmt.Fprintf(e.stdout, "credited $%s to %s (ref %s); balance $%s\n", c.Amount, c.AccountID, c.Ref, c.Balance)
	} else {
		fmt.Fprintf(e.stdout, "ref %s was already credited ($%s on %s): nothing changed; balance $%s\n", c.Ref, c.Amount, c.Created.Format(time.RFC3339), c.Balance)
	}
	return nil
}

func runPrice(ctx context.Context, e *env, args []string) error {
	sub, args, err := subcommand(e, args, "lnpdb price set|list --accounts DSN [--account ID] [--kind KIND --price DOLLARS]", "set", "list")
	if err != nil {
		return err
	}
	sf := newStoreFlags(e, "price "+sub, true)
	var kind, price *string
	if sub == "set" {
		kind = sf.fs.String("kind", "", "the billable `kind`: "+kindNames())
		price = sf.fs.String("price", "", "dollars per lookup, e.g. 0.0008 (without --account: the default for every account without its own)")
	}
	if err := parse(sf.e, sf.fs, args); err != nil {
		return err
	}
	var p billing.Micros
	if sub == "set" {
		if !billing.Kind(*kind).Valid() {
			return fmt.Errorf("%w: --kind must be one of %s", errUsage, kindNames())
		}
		if p, err = billing.ParseAmount(*price); err != nil {
			return fmt.Errorf("%w: --price: %v", errUsage, err)
		}
	}
	s, err := sf.open(ctx, false)
	if err != nil {
		return err
	}
	defer s.Close()
	var prices billing.Prices
	if sub == "set" {
		ctx, adm, err := cliAdmin(ctx, s)
		if err != nil {
			return err
		}
		prices, err = adm.SetPrice(ctx, *sf.account, billing.Kind(*kind), p)
		if err != nil {
			return err
		}
	} else if prices, err = s.Prices(ctx, *sf.account); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
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

func runUsage(ctx context.Context, e *env, args []string) error {
	_, args, err := subcommand(e, args, "lnpdb usage export --accounts DSN [--month YYYY-MM] [--format csv] [--account ID]", "export")
	if err != nil {
		return err
	}
	sf := newStoreFlags(e, "usage export", true)
	month := sf.fs.String("month", time.Now().UTC().Format("2006-01"), "the `month` to export, YYYY-MM (UTC; default: the current month)")
	format := sf.fs.String("format", "csv", "output format: csv")
	if err := parse(sf.e, sf.fs, args); err != nil {
		return err
	}
	if *format != "csv" {
		return fmt.Errorf("%w: --format must be csv", errUsage)
	}
	if _, err := billing.ParseMonth(*month); err != nil {
		return fmt.Errorf("%w: --month: %v", errUsage, err)
	}
	s, err := sf.open(ctx, false)
	if err != nil {
		return err
	}
	defer s.Close()
	rows, err := s.Usage(ctx, *sf.account, *month)
	if err != nil {
		return err
	}
	w := csv.NewWriter(e.stdout)
	_ = w.Write([]string{"account_id", "day", "kind", "lookups", "free", "amount_micros", "amount_usd"})
	for _, u := range rows {
		_ = w.Write([]string{u.AccountID, u.Day, string(u.Kind), strconv.FormatInt(u.Lookups, 10), strconv.FormatInt(u.Free, 10), strconv.FormatInt(int64(u.Amount), 10), u.Amount.String()})
	}
	w.Flush()
	return w.Error()
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
