package cliutil

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/config"
	"github.com/spf13/pflag"
)

// StoreFlags are the flags every accounts command takes.
type StoreFlags struct {
	DSN, Schema string
	// Account is --account's ID, for the commands that take it.
	Account string
}

// AddStoreFlags defines the accounts store's flags on fs, and --account ID
// when account is true.
func AddStoreFlags(fs *pflag.FlagSet, account bool) *StoreFlags {
	sf := &StoreFlags{}
	config.Secret(fs, &sf.DSN, "accounts", "", "accounts store `DSN`: bolt:///path/accounts.db or postgres://…")
	fs.StringVar(&sf.Schema, "accounts-schema", "", "with --accounts postgres://…: the PostgreSQL `schema` holding the store's tables, as serve's --accounts-schema (default: the connection's search_path)")
	if account {
		fs.StringVar(&sf.Account, "account", "", "account `ID`")
	}
	return sf
}

// Open checks the operands and the flags and opens the store; needAccount
// requires --account.
func (sf *StoreFlags) Open(ctx context.Context, args []string, needAccount bool) (billing.Store, error) {
	switch {
	case len(args) != 0:
		return nil, fmt.Errorf("%w: takes no arguments (got %q)", ErrUsage, args[0])
	case sf.DSN == "":
		return nil, fmt.Errorf("%w: --accounts DSN is required (bolt:///path/accounts.db or postgres://…)", ErrUsage)
	case needAccount && sf.Account == "":
		return nil, fmt.Errorf("%w: --account ID is required", ErrUsage)
	}
	return billing.OpenIn(ctx, sf.DSN, sf.Schema)
}

// OpenAdmin opens the store (Open) and returns, with it, the operator's
// operations on it and ctx carrying this command's actor (Admin). The
// caller closes the store.
func (sf *StoreFlags) OpenAdmin(ctx context.Context, args []string, needAccount bool) (context.Context, billing.Store, *billing.Admin, error) {
	s, err := sf.Open(ctx, args, needAccount)
	if err != nil {
		return ctx, nil, nil, err
	}
	ctx, adm, err := Admin(ctx, s)
	if err != nil {
		s.Close()
		return ctx, nil, nil, err
	}
	return ctx, s, adm, nil
}

// Admin returns the operator's operations on s (the admin API's and the
// console's, package billing), and ctx carrying this command's actor, so
// that the changes they make are audited as the OS user's on this host,
// via "cli".
func Admin(ctx context.Context, s billing.Store) (context.Context, *billing.Admin, error) {
	adm, err := billing.NewAdmin(billing.AdminConfig{
		Store:     s,
		Authorize: func(string) (string, bool) { return "", false }, // a command serves no requests
		NewKey:    NewStoreKey,
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

// NewStoreKey returns a new API key of the accounts store and its SHA-256.
func NewStoreKey() (string, [32]byte) { k := auth.NewKey(); return k, auth.HashKey(k).Hash }
