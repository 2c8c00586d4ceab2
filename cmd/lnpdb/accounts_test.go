package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/clitest"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/root"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testpg"
)

// TestMain lets the multi-process tests run this binary as lnpdb itself:
// with its command line (asLnpdbEnv), or with serve's arguments as JSON
// (serveEnv, which also stops on SIGTERM).
func TestMain(m *testing.M) {
	if os.Getenv(asLnpdbEnv) != "" {
		main()
	}
	if js := os.Getenv(serveEnv); js != "" {
		var args []string
		if err := json.Unmarshal([]byte(js), &args); err != nil {
			fmt.Fprintln(os.Stderr, serveEnv+":", err)
			os.Exit(2)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := root.Run(ctx, &cliutil.Env{Stdout: os.Stdout, Stderr: os.Stderr}, args)
		stop()
		os.Exit(code)
	}
	clitest.ClearSettings()
	code := testpg.Main(m)
	stopBrowser()
	os.Exit(code)
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := runCmd(t, args...)
	require.Equal(t, 0, code, "lnpdb %v: %s", args, errOut)
	return out
}

// dsns runs test with a bolt and a PostgreSQL store.
func dsns(t *testing.T, test func(t *testing.T, dsn string)) {
	t.Run("bolt", func(t *testing.T) { test(t, "bolt://"+filepath.Join(t.TempDir(), "accounts.db")) })
	t.Run("postgres", func(t *testing.T) { test(t, testpg.New(t)) })
}

func TestAccountCommands(t *testing.T) {
	dsns(t, func(t *testing.T, dsn string) {
		id := strings.TrimSpace(mustRun(t, "account", "create", "--accounts", dsn, "--name", "Acme Telecom"))
		assert.Regexp(t, `^acct_[a-z2-7]{16}$`, id)
		other := strings.TrimSpace(mustRun(t, "account", "create", "--accounts", dsn, "--name", "Beta"))

		list := mustRun(t, "account", "list", "--accounts", dsn)
		assert.Contains(t, list, id)
		assert.Contains(t, list, "Acme Telecom")
		assert.Contains(t, list, other)

		// Keys.
		key := strings.TrimSpace(mustRun(t, "key", "new", "--accounts", dsn, "--account", id, "--label", "prod", "--rpm", "600"))
		assert.Regexp(t, `^lnp_[a-z2-7]{32}$`, key)
		keys := mustRun(t, "key", "list", "--accounts", dsn, "--account", id)
		assert.Contains(t, keys, "prod")
		assert.Contains(t, keys, "600")
		assert.NotContains(t, keys, key, "the key itself is stored nowhere")
		keyID := strings.Fields(strings.Split(keys, "\n")[1])[0]
		assert.Contains(t, mustRun(t, "key", "revoke", "--accounts", dsn, "--account", id, "--key", keyID), keyID+" revoked")

		// Wallet: idempotent on --ref.
		assert.Contains(t, mustRun(t, "wallet", "credit", "--accounts", dsn, "--account", id, "--amount", "25.00", "--ref", "INVOICE-123"), "credited $25.00")
		assert.Contains(t, mustRun(t, "wallet", "credit", "--accounts", dsn, "--account", id, "--amount", "25.00", "--ref", "INVOICE-123"), "nothing changed")
		mustRun(t, "wallet", "credit", "--accounts", dsn, "--account", id, "--amount", "0.5", "--ref", "INVOICE-124")

		// Prices: a default, then the account's own.
		mustRun(t, "price", "set", "--accounts", dsn, "--kind", "cnam", "--price", "0.004")
		out := mustRun(t, "price", "set", "--accounts", dsn, "--account", id, "--kind", "lrn", "--price", "0.0008")
		assert.Regexp(t, `lrn\s+0\.0008\n`, out)
		assert.Regexp(t, `cnam\s+0\.004\n`, out)
		assert.Regexp(t, `lrn\s+0\.001\n`, mustRun(t, "price", "list", "--accounts", dsn, "--account", other))

		show := mustRun(t, "account", "show", "--accounts", dsn, "--account", id)
		assert.Contains(t, show, "$25.50")
		assert.Regexp(t, `free lookups left\s+10 of 10`, show)
		assert.Contains(t, show, "revoked")

		assert.Contains(t, mustRun(t, "account", "suspend", "--accounts", dsn, "--account", id), "suspended")
		assert.Contains(t, mustRun(t, "account", "list", "--accounts", dsn), "suspended")
		assert.Contains(t, mustRun(t, "account", "activate", "--accounts", dsn, "--account", id), "active")

		s, err := billing.Open(context.Background(), dsn)
		require.NoError(t, err)
		a, err := s.Account(context.Background(), id)
		s.Close()
		require.NoError(t, err)
		assert.Equal(t, billing.Micros(25_500_000), a.Balance)
	})
}

// The account, key, wallet and price commands record their changes in the
// audit log, as the OS user on this host via "cli", as the console's and
// the admin API's are.
func TestAccountCommandsAudited(t *testing.T) {
	t.Setenv("SUDO_USER", "")
	u, err := user.Current()
	require.NoError(t, err)
	host, err := os.Hostname()
	require.NoError(t, err)
	dsns(t, func(t *testing.T, dsn string) {
		id := strings.TrimSpace(mustRun(t, "account", "create", "--accounts", dsn, "--name", "Acme"))
		mustRun(t, "key", "new", "--accounts", dsn, "--account", id, "--label", "prod", "--rpm", "60")
		keys := mustRun(t, "key", "list", "--accounts", dsn, "--account", id)
		keyID := strings.Fields(strings.Split(keys, "\n")[1])[0]
		mustRun(t, "key", "revoke", "--accounts", dsn, "--account", id, "--key", keyID)
		mustRun(t, "wallet", "credit", "--accounts", dsn, "--account", id, "--amount", "5", "--ref", "INV-1")
		mustRun(t, "price", "set", "--accounts", dsn, "--kind", "cnam", "--price", "0.004")
		mustRun(t, "price", "set", "--accounts", dsn, "--account", id, "--kind", "lrn", "--price", "0.0008")
		mustRun(t, "price", "list", "--accounts", dsn, "--account", id) // reads: not audited
		mustRun(t, "account", "suspend", "--accounts", dsn, "--account", id)
		mustRun(t, "account", "activate", "--accounts", dsn, "--account", id)

		s, err := billing.Open(context.Background(), dsn)
		require.NoError(t, err)
		defer s.Close()
		log, err := s.Audit(context.Background(), "", 0, 0)
		require.NoError(t, err)
		var actions []string
		for i := len(log) - 1; i >= 0; i-- {
			e := log[i]
			actions = append(actions, e.Action+" "+e.Account)
			assert.Equal(t, "cli", e.Via)
			assert.Equal(t, u.Username, e.Key)
			assert.Equal(t, host, e.Remote)
		}
		assert.Equal(t, []string{
			billing.AuditCreate + " " + id, billing.AuditNewKey + " " + id, billing.AuditRevoke + " " + id,
			billing.AuditCredit + " " + id, billing.AuditPrice + " ", billing.AuditPrice + " " + id,
			billing.AuditSuspend + " " + id, billing.AuditActivate + " " + id,
		}, actions)
	})
}

// key list shows when each key was last used, as the store records it
// ("-": never).
func TestKeyListLastUsed(t *testing.T) {
	dsns(t, func(t *testing.T, dsn string) {
		id := strings.TrimSpace(mustRun(t, "account", "create", "--accounts", dsn, "--name", "Acme"))
		mustRun(t, "key", "new", "--accounts", dsn, "--account", id, "--label", "used")
		mustRun(t, "key", "new", "--accounts", dsn, "--account", id, "--label", "idle")
		s, err := billing.Open(context.Background(), dsn)
		require.NoError(t, err)
		keys, err := s.Keys(context.Background(), id)
		require.NoError(t, err)
		require.Len(t, keys, 2)
		used := keys[0]
		if used.Label != "used" {
			used = keys[1]
		}
		at := time.Date(2026, 11, 20, 8, 30, 0, 0, time.UTC)
		require.NoError(t, s.KeysUsed(context.Background(), map[string]time.Time{used.ID: at}))
		s.Close()

		lines := strings.Split(strings.TrimSpace(mustRun(t, "key", "list", "--accounts", dsn, "--account", id)), "\n")
		require.Len(t, lines, 3)
		assert.Regexp(t, `LAST USED\s+REVOKED$`, lines[0])
		for _, l := range lines[1:] {
			if strings.Contains(l, "used") {
				assert.Regexp(t, `\s2026-11-20T08:30:00Z\s+-$`, l)
			} else {
				assert.Regexp(t, `Z\s+-\s+-$`, l, "never used, not revoked")
			}
		}
	})
}

// TestAccountCommandsRefuse: bad input and unusable stores get a clear
// error and change nothing.
func TestAccountCommandsRefuse(t *testing.T) {
	dsn := "bolt://" + filepath.Join(t.TempDir(), "accounts.db")
	id := strings.TrimSpace(mustRun(t, "account", "create", "--accounts", dsn, "--name", "Acme"))
	mustRun(t, "wallet", "credit", "--accounts", dsn, "--account", id, "--amount", "1", "--ref", "A")
	missing := filepath.Join(t.TempDir(), "never-created.db")
	assertRefused(t, nil, []refusal{
		{[]string{"account"}, 2, "the subcommands are activate, create, list, show, suspend"},
		{[]string{"account", "list"}, 2, "--accounts DSN is required"},
		{[]string{"account", "list", "--accounts", "mysql://x"}, 1, "scheme must be bolt or postgres"},
		{[]string{"account", "list", "--accounts", "postgres://127.0.0.1:1/x?connect_timeout=2"}, 1, "accounts store"},
		{[]string{"account", "create", "--accounts", dsn}, 1, "name"},
		{[]string{"account", "show", "--accounts", dsn}, 2, "--account ID is required"},
		{[]string{"account", "show", "--accounts", dsn, "--account", "acct_nope"}, 1, "not found"},
		{[]string{"wallet", "credit", "--accounts", dsn, "--account", id, "--amount", "-5", "--ref", "B"}, 2, "negative"},
		{[]string{"wallet", "credit", "--accounts", dsn, "--account", id, "--amount", "five", "--ref", "B"}, 2, "not a number"},
		{[]string{"wallet", "credit", "--accounts", dsn, "--account", id, "--amount", "1.0000001", "--ref", "B"}, 2, "6 decimals"},
		{[]string{"wallet", "credit", "--accounts", dsn, "--account", id, "--amount", "0", "--ref", "B"}, 2, "more than 0"},
		{[]string{"wallet", "credit", "--accounts", dsn, "--account", id, "--amount", "2"}, 2, "--ref is required"},
		{[]string{"wallet", "credit", "--accounts", dsn, "--account", id, "--amount", "2", "--ref", "A"}, 1, "conflict"},
		{[]string{"wallet", "credit", "--accounts", dsn, "--account", "acct_nope", "--amount", "2", "--ref", "C"}, 1, "not found"},
		{[]string{"wallet", "credit", "--accounts", "bolt://" + missing, "--account", id, "--amount", "x", "--ref", "C"}, 2, "--amount"},
		{[]string{"price", "set", "--accounts", dsn, "--kind", "sms", "--price", "1"}, 2, "--kind must be one of"},
		{[]string{"price", "set", "--accounts", dsn, "--kind", "lrn", "--price", "-1"}, 2, "negative"},
		{[]string{"usage", "export", "--accounts", dsn, "--month", "2026-13"}, 2, "YYYY-MM"},
		{[]string{"usage", "export", "--accounts", dsn, "--month", "2026-11", "--format", "xlsx"}, 2, "csv"},
		{[]string{"key", "revoke", "--accounts", dsn, "--account", id}, 2, "--key ID is required"},
		{[]string{"key", "new", "--accounts", dsn, "--account", "acct_nope"}, 1, "not found"},
	})
	_, err := os.Stat(missing)
	assert.True(t, os.IsNotExist(err), "a refused command created the store")
	s, err := billing.Open(context.Background(), dsn)
	require.NoError(t, err)
	defer s.Close()
	a, err := s.Account(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, billing.Micros(1_000_000), a.Balance, "refused credits changed the balance")
	p, _ := s.Prices(context.Background(), id)
	assert.Equal(t, billing.DefaultPrices[billing.KindLRN], p[billing.KindLRN])
}

func TestUsageExport(t *testing.T) {
	dsns(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s, err := billing.Open(ctx, dsn)
		require.NoError(t, err)
		a, err := s.CreateAccount(ctx, "Acme", time.Now())
		require.NoError(t, err)
		_, _, err = s.Credit(ctx, a.ID, 1_000_000, "I", time.Now())
		require.NoError(t, err)
		h := auth.HashKey("k").Hash
		_, err = s.AddKey(ctx, billing.KeyRecord{AccountID: a.ID, Hash: h}, time.Now())
		require.NoError(t, err)
		nov := func() time.Time { return time.Date(2026, 11, 5, 10, 0, 0, 0, time.UTC) }
		e, err := billing.NewEngine(ctx, billing.EngineConfig{Store: s, Now: nov})
		require.NoError(t, err)
		for range 12 {
			require.NoError(t, deliverCharge(ctx, e, h, billing.KindLRN, false))
		}
		require.NoError(t, deliverCharge(ctx, e, h, billing.KindCNAM, false))
		require.NoError(t, e.Close(ctx))
		s.Close()

		out := mustRun(t, "usage", "export", "--accounts", dsn, "--month", "2026-11", "--format", "csv")
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		require.NoError(t, err)
		assert.Equal(t, [][]string{
			{"account_id", "day", "kind", "lookups", "free", "amount_micros", "amount_usd"},
			{a.ID, "2026-11-05", "lrn", "12", "10", "2000", "0.002"},
			{a.ID, "2026-11-05", "cnam", "1", "0", "3000", "0.003"},
		}, recs)
		out = mustRun(t, "usage", "export", "--accounts", dsn, "--month", "2026-10")
		assert.Equal(t, "account_id,day,kind,lookups,free,amount_micros,amount_usd\n", out)
	})
}

// deliverCharge charges a lookup whose answer is delivered.
func deliverCharge(ctx context.Context, e *billing.Engine, h [32]byte, kind billing.Kind, addon bool) error {
	hold, err := e.Charge(ctx, h, kind, addon)
	if err == nil {
		hold.Settle(true)
	}
	return err
}

// TestAccountsSchema: --accounts-schema (or LNPDB_ACCOUNTS_SCHEMA) puts the
// accounts store in a schema of its own: two schemas of one database are
// two stores, and serve takes the same option.
func TestAccountsSchema(t *testing.T) {
	dsn := testpg.New(t)
	id := strings.TrimSpace(mustRun(t, "account", "create", "--accounts", dsn, "--accounts-schema", "billing_a", "--name", "Acme"))
	assert.Contains(t, mustRun(t, "account", "list", "--accounts", dsn, "--accounts-schema", "billing_a"), id)
	t.Setenv("LNPDB_ACCOUNTS_SCHEMA", "billing_b")
	assert.NotContains(t, mustRun(t, "account", "list", "--accounts", dsn), id, "billing_b is another store")
	s, err := billing.OpenIn(context.Background(), dsn, "billing_a")
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Account(context.Background(), id)
	assert.NoError(t, err)

	t.Setenv("LNPDB_ACCOUNTS_SCHEMA", "")
	bolt := "bolt://" + filepath.Join(t.TempDir(), "accounts.db")
	assertRefused(t, nil, []refusal{
		{[]string{"account", "list", "--accounts", dsn, "--accounts-schema", "Bad-Name"}, 1, "lowercase"},
		{[]string{"account", "list", "--accounts", bolt, "--accounts-schema", "a"}, 1, "no schema"},
		{[]string{"serve", "--accounts", bolt, "--accounts-schema", "a"}, 2, "--accounts-schema is for"},
		{[]string{"serve", "--accounts", dsn, "--accounts-schema", "pg_x"}, 2, "--accounts-schema"},
		{[]string{"serve", "--dev-key", "--updates-log-schema", "a"}, 2, "--updates-log, which is missing"},
		{[]string{"serve", "--dev-key", "--updates-log", dsn, "--updates-log-schema", "A"}, 2, "--updates-log-schema"},
	})
}
