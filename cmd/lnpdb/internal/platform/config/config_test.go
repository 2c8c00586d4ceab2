package config

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type settings struct {
	addr, dsn string
	watch     time.Duration
	log       bool
}

func newSet() (*pflag.FlagSet, *settings) {
	s := &settings{}
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&s.addr, "addr", "127.0.0.1:8080", "`host:port` to listen on")
	Secret(fs, &s.dsn, "updates-log", "", "PostgreSQL `DSN`")
	fs.DurationVar(&s.watch, "watch", time.Second, "interval")
	fs.BoolVar(&s.log, "access-log", true, "log requests")
	Annotate(fs)
	return fs, s
}

// parse parses args and applies env as the environment.
func parse(t *testing.T, env map[string]string, args ...string) (*settings, error) {
	t.Helper()
	fs, s := newSet()
	require.NoError(t, fs.Parse(args))
	err := Apply(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	return s, err
}

func writeSecret(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func TestEnvName(t *testing.T) {
	assert.Equal(t, "LNPDB_UPDATES_LOG", EnvName("updates-log"))
	assert.Equal(t, "LNPDB_DB", EnvName("db"))
	assert.Equal(t, "LNPDB_REDIS_PASSWORD_FILE", EnvName("redis-password-file"))
}

func TestDefaultsWithoutEnvironment(t *testing.T) {
	s, err := parse(t, nil)
	require.NoError(t, err)
	assert.Equal(t, settings{addr: "127.0.0.1:8080", watch: time.Second, log: true}, *s)
}

func TestEnvOverridesDefault(t *testing.T) {
	s, err := parse(t, map[string]string{"LNPDB_ADDR": "0.0.0.0:9000", "LNPDB_WATCH": "5s", "LNPDB_ACCESS_LOG": "false", "LNPDB_UPDATES_LOG": "postgres://u:pw@db/x"})
	require.NoError(t, err)
	assert.Equal(t, settings{addr: "0.0.0.0:9000", dsn: "postgres://u:pw@db/x", watch: 5 * time.Second, log: false}, *s)
}

func TestFlagOverridesEnv(t *testing.T) {
	file := writeSecret(t, "postgres://from-flag-file\n")
	s, err := parse(t, map[string]string{"LNPDB_ADDR": "0.0.0.0:9000", "LNPDB_UPDATES_LOG": "postgres://from-env"},
		"--addr", "127.0.0.1:0", "--updates-log-file", file)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:0", s.addr)
	assert.Equal(t, "postgres://from-flag-file", s.dsn, "a secret's file flag outranks its variable")

	s, err = parse(t, map[string]string{"LNPDB_UPDATES_LOG_FILE": file}, "--updates-log", "postgres://from-flag")
	require.NoError(t, err)
	assert.Equal(t, "postgres://from-flag", s.dsn, "a flag outranks a variable's file")
}

func TestFileReadAndTrimmed(t *testing.T) {
	s, err := parse(t, map[string]string{"LNPDB_UPDATES_LOG_FILE": writeSecret(t, "  postgres://u:pw@db/x \r\n\n")})
	require.NoError(t, err)
	assert.Equal(t, "postgres://u:pw@db/x", s.dsn)

	// Every flag has a file form in the environment, not only secrets.
	s, err = parse(t, map[string]string{"LNPDB_ADDR_FILE": writeSecret(t, "0.0.0.0:1234\n")})
	require.NoError(t, err)
	assert.Equal(t, "0.0.0.0:1234", s.addr)

	_, err = parse(t, map[string]string{"LNPDB_UPDATES_LOG_FILE": writeSecret(t, " \n")})
	assert.ErrorContains(t, err, "is empty")
	_, err = parse(t, map[string]string{"LNPDB_UPDATES_LOG_FILE": filepath.Join(t.TempDir(), "absent")})
	assert.ErrorContains(t, err, "LNPDB_UPDATES_LOG_FILE")
}

func TestBothFormsAreAnError(t *testing.T) {
	file := writeSecret(t, "postgres://a")
	_, err := parse(t, map[string]string{"LNPDB_UPDATES_LOG": "postgres://b", "LNPDB_UPDATES_LOG_FILE": file})
	assert.ErrorIs(t, err, ErrConflict)
	assert.ErrorContains(t, err, "LNPDB_UPDATES_LOG and LNPDB_UPDATES_LOG_FILE")

	_, err = parse(t, nil, "--updates-log", "postgres://b", "--updates-log-file", file)
	assert.ErrorIs(t, err, ErrConflict)
	assert.ErrorContains(t, err, "--updates-log and --updates-log-file")

	_, err = parse(t, map[string]string{"LNPDB_ADDR": "x:1", "LNPDB_ADDR_FILE": file})
	assert.ErrorIs(t, err, ErrConflict)
}

func TestBadValueNamesTheVariable(t *testing.T) {
	_, err := parse(t, map[string]string{"LNPDB_WATCH": "soon"})
	assert.ErrorContains(t, err, "LNPDB_WATCH")
}

// TestSecretNeverPrinted: neither the help nor an error shows a secret's
// value, wherever it came from.
func TestSecretNeverPrinted(t *testing.T) {
	const pw = "hunter2-never-shown"
	fs, _ := newSet()
	var help bytes.Buffer
	fs.SetOutput(&help)
	require.NoError(t, fs.Parse([]string{"--updates-log", "postgres://u:" + pw + "@db/x"}))
	require.NoError(t, Apply(fs, func(string) (string, bool) { return "", false }))
	fs.PrintDefaults()
	assert.NotContains(t, help.String(), pw)
	assert.Contains(t, help.String(), "[env LNPDB_UPDATES_LOG or LNPDB_UPDATES_LOG_FILE]")
	assert.Contains(t, help.String(), "[env LNPDB_ADDR]")
	assert.Contains(t, help.String(), "-updates-log-file file")

	file := writeSecret(t, pw)
	_, err := parse(t, map[string]string{"LNPDB_UPDATES_LOG": pw, "LNPDB_UPDATES_LOG_FILE": file, "LNPDB_ADDR": pw, "LNPDB_ADDR_FILE": file})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), pw)
}

// TestApplyNamesTheForm: a variable that does not parse is refused naming
// the form its flag takes, not the flag package's "parse error".
func TestApplyNamesTheForm(t *testing.T) {
	_, err := parse(t, map[string]string{"LNPDB_WATCH": "5", "LNPDB_ACCESS_LOG": "sometimes"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `LNPDB_WATCH: "5" is not a duration such as 5s`)
	assert.Contains(t, err.Error(), `LNPDB_ACCESS_LOG: "sometimes" is not true or false`)
	assert.NotContains(t, err.Error(), "parse error")
}

// TestUnknown: an LNPDB_ variable no flag reads is named; the flags'
// variables, a secret's _FILE form and other variables are not.
func TestUnknown(t *testing.T) {
	fs, _ := newSet()
	got := Unknown(fs, []string{"LNPDB_ADRR=x", "LNPDB_ADDR=y", "LNPDB_UPDATES_LOG_FILE=/f", "LNPDB_WATCH=1s", "HOME=/root", "LNPDB_ADDR_FILE=z",
		"LNPDB_KEY=lnp_x", "LNPDB_TEST_CONTAINER_IMAGE=1"}) // the README's curl key and a test's switch set no flag
	assert.Equal(t, []string{"LNPDB_ADDR_FILE", "LNPDB_ADRR"}, got)
}

// TestAlias: the former name sets the flag and warns once; its variable
// is not read (it may mean something else to another command), the new
// name's is.
func TestAlias(t *testing.T) {
	newAliased := func() (*pflag.FlagSet, *float64, *bytes.Buffer) {
		var share float64
		var warn bytes.Buffer
		fs := pflag.NewFlagSet("gen", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Float64Var(&share, "messaging-share", 0.1, "share")
		Alias(fs, "messaging", "messaging-share", &warn)
		Annotate(fs)
		return fs, &share, &warn
	}
	fs, share, warn := newAliased()
	require.NoError(t, fs.Parse([]string{"--messaging", "0.5", "--messaging", "0.25"}))
	assert.Equal(t, 0.25, *share)
	assert.Equal(t, 1, bytes.Count(warn.Bytes(), []byte("deprecated")), warn.String())
	assert.Contains(t, warn.String(), "--messaging-share")

	fs, share, _ = newAliased()
	require.NoError(t, fs.Parse(nil))
	env := map[string]string{"LNPDB_MESSAGING": "true", "LNPDB_MESSAGING_SHARE": "0.75"}
	require.NoError(t, Apply(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok }))
	assert.Equal(t, 0.75, *share)
	assert.Equal(t, []string{"LNPDB_MESSAGING"}, Unknown(fs, []string{"LNPDB_MESSAGING=true"}), "the former name reads no variable")
}

// TestCommandLineFlagsAreNotSettings: --help and --version, the command
// line's own flags, take no variable: LNPDB_HELP is not read (and is
// named as unknown), and their usage names none.
func TestCommandLineFlagsAreNotSettings(t *testing.T) {
	fs, _ := newSet()
	help := fs.BoolP("help", "h", false, "help for serve")
	fs.Bool("version", false, "version")
	Annotate(fs)
	require.NoError(t, fs.Parse(nil))
	require.NoError(t, Apply(fs, func(k string) (string, bool) { return "true", k == "LNPDB_HELP" || k == "LNPDB_VERSION" }))
	assert.False(t, *help)
	assert.Equal(t, "help for serve", fs.Lookup("help").Usage)
	assert.Equal(t, []string{"LNPDB_HELP"}, Unknown(fs, []string{"LNPDB_HELP=1"}))
}
