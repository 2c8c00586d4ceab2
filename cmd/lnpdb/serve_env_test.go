package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testredis"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// TestServeFromEnvironment: serve with no flags at all takes its table,
// keys and address from LNPDB_* variables; a flag outranks its variable.
func TestServeFromEnvironment(t *testing.T) {
	table := testdb.Build(t, lnpdb.Sample())
	keys := filepath.Join(t.TempDir(), "keys")
	key := strings.TrimSpace(mustRun(t, "key", "new", "--keys", keys))
	pathFile := filepath.Join(t.TempDir(), "keys-path")
	require.NoError(t, os.WriteFile(pathFile, []byte(keys+"\n"), 0o600))
	t.Setenv("LNPDB_DB", table)
	t.Setenv("LNPDB_KEYS_FILE", pathFile) // any flag's value may come from a file
	t.Setenv("LNPDB_ADDR", "127.0.0.1:0")
	t.Setenv("LNPDB_LOG_FORMAT", "xml")

	code, _, errs := runCmd(t, "serve")
	assert.Equal(t, 2, code, "LNPDB_LOG_FORMAT is read: %s", errs)
	assert.Contains(t, errs, "--log-format must be text or json")

	s := startServe(t, "--log-format", "json") // the flag outranks LNPDB_LOG_FORMAT
	base := s.await(t, &s.stdout, `serving the table on (http://127\.0\.0\.1:\d+)`)
	s.await(t, &s.stderr, `"table":"([^"]+)"`)
	code, body := call(t, "POST", base+"/api/v1/lrn", key, `{"phone_number":"12025550123"}`)
	assert.Equal(t, http.StatusOK, code, body)
	assert.NotContains(t, s.stdout.String(), "development API key", "keys came from LNPDB_KEYS_FILE")
}

// TestServeSecretTwiceRefused: a secret given both as LNPDB_X and as
// LNPDB_X_FILE is refused, naming the variables and not the value.
func TestServeSecretTwiceRefused(t *testing.T) {
	const secret = "postgres://u:never-shown@127.0.0.1:1/x"
	file := filepath.Join(t.TempDir(), "dsn")
	require.NoError(t, os.WriteFile(file, []byte(secret), 0o600))
	t.Setenv("LNPDB_UPDATES_LOG", secret)
	t.Setenv("LNPDB_UPDATES_LOG_FILE", file)
	code, out, errs := runCmd(t, "serve", "--addr", "127.0.0.1:0")
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "LNPDB_UPDATES_LOG and LNPDB_UPDATES_LOG_FILE")
	assert.NotContains(t, errs+out, "never-shown")
}

// TestServeRedisPasswordFromFile: a Redis that requires a password is
// reached with the password from LNPDB_REDIS_PASSWORD_FILE (the URL holds
// none), and the password is printed nowhere; without it Redis refuses the
// server, which /readyz says.
func TestServeRedisPasswordFromFile(t *testing.T) {
	srv := testredis.Start(t)
	const pw = "s3cret-redis-pw"
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	require.NoError(t, c.ConfigSet(context.Background(), "requirepass", pw).Err())
	c.Close()
	t.Cleanup(func() {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr(), Password: pw})
		_ = c.ConfigSet(context.Background(), "requirepass", "").Err()
		c.Close()
	})
	file := filepath.Join(t.TempDir(), "redis-password")
	require.NoError(t, os.WriteFile(file, []byte(pw+"\n"), 0o600))
	table := testdb.Build(t, lnpdb.Sample())

	t.Setenv("LNPDB_REDIS_PASSWORD_FILE", file)
	s := startServe(t, "--db", table, "--dev-key", "--addr", "127.0.0.1:0", "--redis", srv.URL(), "--log-format", "json")
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	code, checks, body := readyz(t, base, "")
	assert.Equal(t, http.StatusOK, code, body)
	assert.True(t, checks["redis"])
	require.Equal(t, 0, s.stop(t))
	assert.NotContains(t, s.stdout.String()+s.stderr.String(), pw)

	t.Setenv("LNPDB_REDIS_PASSWORD_FILE", "")
	os.Unsetenv("LNPDB_REDIS_PASSWORD_FILE")
	s = startServe(t, "--db", table, "--dev-key", "--addr", "127.0.0.1:0", "--redis", srv.URL(), "--redis-timeout", "200ms")
	base = s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	code, checks, body = readyz(t, base, "")
	assert.Equal(t, http.StatusServiceUnavailable, code, body)
	assert.False(t, checks["redis"])
}

// TestMalformedSecretNotPrinted: a malformed accounts DSN, update-log DSN
// or Redis URL, given in a *_FILE, is refused by serve and by the account
// commands without its password anywhere in what they print (net/url's
// error quotes the string it failed on).
func TestMalformedSecretNotPrinted(t *testing.T) {
	table := testdb.Build(t, lnpdb.Sample())
	serve := []string{"serve", "--db", table, "--dev-key", "--addr", "127.0.0.1:0"}
	for _, c := range []struct {
		env, value string
		args       []string
	}{
		{"LNPDB_ACCOUNTS_FILE", "postgres://u:pw-accounts@db:bad/lnpdb", []string{"serve", "--db", table, "--addr", "127.0.0.1:0"}},
		{"LNPDB_UPDATES_LOG_FILE", "postgres://u:pw-updates@db:bad/lnpdb", serve},
		{"LNPDB_REDIS_FILE", "redis://u:pw-redis@cache:bad/0", serve},
		{"LNPDB_ACCOUNTS_FILE", "postgres://u:pwpw/accounts@db:5432/lnpdb", []string{"account", "list"}},
		{"LNPDB_ACCOUNTS_FILE", "postgres://u:pw-key@db:bad/lnpdb", []string{"key", "list", "--account", "acct_x"}},
	} {
		t.Run(c.env+"/"+c.args[0], func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "secret")
			require.NoError(t, os.WriteFile(file, []byte(c.value+"\n"), 0o600))
			t.Setenv(c.env, file)
			code, out, errs := runCmd(t, c.args...)
			assert.NotEqual(t, 0, code, errs)
			assert.Contains(t, errs, "xxxxx", "the refusal names the string, redacted")
			assert.NotContains(t, out+errs, "pw", "the password is printed nowhere")
		})
	}
}
