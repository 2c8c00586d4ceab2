package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/root"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// everyCommandLine is each command, and each subcommand with its command:
// what --help and a bad flag are tried on.
func everyCommandLine() [][]string {
	var lines [][]string
	for _, c := range root.Commands() {
		if c.Subs == nil {
			lines = append(lines, []string{c.Name})
			continue
		}
		for _, s := range c.Subs {
			lines = append(lines, []string{c.Name, s})
		}
	}
	return lines
}

// TestHelpGoesToStdout: -h and --help print the usage on stdout and exit
// 0, for the binary, every command and every subcommand.
func TestHelpGoesToStdout(t *testing.T) {
	for _, h := range []string{"-h", "--help"} {
		code, out, errs := runCmd(t, h)
		assert.Equal(t, 0, code)
		assert.Empty(t, errs)
		assert.Contains(t, out, "\n  lnpdb [command]\n")
		for _, line := range append(everyCommandLine(), []string{"account"}, []string{"usage"}) {
			args := append(line, h)
			code, out, errs := runCmd(t, args...)
			assert.Equal(t, 0, code, "%v: %s", args, errs)
			assert.Empty(t, errs, "%v", args)
			assert.Contains(t, out, "Usage:\n  lnpdb "+strings.Join(line, " "), "%v", args)
		}
	}
	code, out, _ := runCmd(t, "help", "serve")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "Usage:\n  lnpdb serve")
}

// TestBadFlagIsAUsageError: an unknown flag exits 2 with one line saying
// so and a pointer to the command's --help on stderr, and nothing on
// stdout, for every command and subcommand.
func TestBadFlagIsAUsageError(t *testing.T) {
	for _, line := range everyCommandLine() {
		args := append(line, "--no-such-flag")
		code, out, errs := runCmd(t, args...)
		assert.Equal(t, 2, code, "%v: %s", args, errs)
		assert.Empty(t, out, "%v", args)
		assert.Equal(t, "lnpdb "+line[0]+": unknown flag: --no-such-flag\nRun 'lnpdb "+strings.Join(line, " ")+" --help' for usage.\n", errs, "%v: one line and where help is", args)
	}
}

// TestServeHelpNamesEveryVariable: serve --help lists each flag's
// environment variable, and the file forms of the secrets.
func TestServeHelpNamesEveryVariable(t *testing.T) {
	code, out, _ := runCmd(t, "serve", "--help")
	require.Equal(t, 0, code)
	for _, want := range []string{
		"[env LNPDB_ADDR]", "[env LNPDB_DB]", "[env LNPDB_KEYS]", "[env LNPDB_ADMIN_KEYS]", "[env LNPDB_DB_URL_KEY_FILE]",
		"[env LNPDB_ACCOUNTS or LNPDB_ACCOUNTS_FILE]", "[env LNPDB_UPDATES_LOG or LNPDB_UPDATES_LOG_FILE]",
		"[env LNPDB_REDIS or LNPDB_REDIS_FILE]", "[env LNPDB_REDIS_PASSWORD or LNPDB_REDIS_PASSWORD_FILE]",
		"-accounts-file file", "-updates-log-file file", "-redis-password-file file",
	} {
		assert.Contains(t, out, want)
	}
}

// TestTableNamedByDB: every command names its table with --db; the old
// operand forms still work, with a note, and both at once are refused.
func TestTableNamedByDB(t *testing.T) {
	table := testdb.Build(t, lnpdb.Sample())
	for _, cmd := range []string{"inspect", "verify"} {
		code, out, errs := runCmd(t, cmd, "--db", table)
		assert.Equal(t, 0, code, errs)
		assert.Empty(t, errs)
		code, old, errs := runCmd(t, cmd, table)
		assert.Equal(t, 0, code, errs)
		assert.Contains(t, errs, "deprecated", cmd)
		if cmd == "inspect" {
			assert.Equal(t, out, old)
		}
		code, _, errs = runCmd(t, cmd, "--db", table, table)
		assert.Equal(t, 2, code, "%s: %s", cmd, errs)
		code, _, _ = runCmd(t, cmd)
		assert.Equal(t, 2, code)
	}
	out := filepath.Join(t.TempDir(), "o.lnpdb")
	code, _, errs := runCmd(t, "build", "-o", out, "../../testdata/sample")
	assert.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "-o FILE is deprecated")
	assert.FileExists(t, out)
	code, _, errs = runCmd(t, "build", "-o", out, "--db", out, "../../testdata/sample")
	assert.Equal(t, 2, code, errs)
	code, _, errs = runCmd(t, "pull", "http://127.0.0.1:1/t")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "want --db FILE URL")
}

// TestUsageExportMessages: usage export's errors say "usage" once, and
// --month defaults to the current month (UTC).
func TestUsageExportMessages(t *testing.T) {
	dsn := "bolt://" + filepath.Join(t.TempDir(), "accounts.db")
	code, _, errs := runCmd(t, "usage", "export", "--accounts", dsn, "--month", "2026-13")
	assert.Equal(t, 2, code)
	assert.NotContains(t, errs, "usage: usage:")
	assert.Contains(t, errs, "lnpdb usage: --month:")

	id := strings.TrimSpace(mustRun(t, "account", "create", "--accounts", dsn, "--name", "Acme"))
	require.NotEmpty(t, id)
	code, out, errs := runCmd(t, "usage", "export", "--accounts", dsn)
	require.Equal(t, 0, code, errs)
	assert.True(t, strings.HasPrefix(out, "account_id,day,kind,"), out)
	code, _, _ = runCmd(t, "usage", "export", "--help")
	assert.Equal(t, 0, code)
	_, help, _ := runCmd(t, "usage", "export", "--help")
	assert.Contains(t, help, `(default "`+time.Now().UTC().Format("2006-01")+`")`)
}

// TestCompletion: each shell's script is valid in that shell, and what it
// asks lnpdb (lnpdb __complete: the words that may follow) completes
// commands, subcommands and flags, files only where a flag takes a file.
func TestCompletion(t *testing.T) {
	scripts := map[string]string{}
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		code, out, errs := runCmd(t, "completion", sh)
		require.Equal(t, 0, code, errs)
		require.Contains(t, out, " __complete", sh)
		scripts[sh] = out
	}
	assert.Contains(t, scripts["powershell"], "Register-ArgumentCompleter")
	code, _, errs := runCmd(t, "completion", "tcsh")
	assert.Equal(t, 2, code, errs)

	for sh, syntax := range map[string][]string{"bash": {"-n"}, "zsh": {"-n"}, "fish": {"--no-execute"}} {
		bin, err := exec.LookPath(sh)
		if err != nil {
			t.Logf("%s not installed (Debian package %s): its script's syntax is not checked", sh, sh)
			continue
		}
		f := filepath.Join(t.TempDir(), "lnpdb."+sh)
		require.NoError(t, os.WriteFile(f, []byte(scripts[sh]), 0o644))
		out, err := exec.Command(bin, append(syntax, f)...).CombinedOutput()
		assert.NoError(t, err, "%s %v: %s", sh, syntax, out)
	}

	for _, c := range root.Commands() {
		_, out, _ := runCmd(t, "__complete", c.Name[:2])
		assert.Contains(t, out, c.Name+"\t", "command %s", c.Name)
		for _, s := range c.Subs {
			_, out, _ := runCmd(t, "__complete", c.Name, "")
			assert.Contains(t, out, s+"\t", "%s %s", c.Name, s)
		}
	}
	for words, want := range map[string][]string{
		"account cr":         {"create\t"},
		"serve --updates-lo": {"--updates-log\t", "--updates-log-file\t", "--updates-log-schema\t"},
		"usage export --mo":  {"--month\t"},
		"completion p":       {"powershell\t"},
		"key new --":         {"--keys\t", "--accounts\t", "--label\t", "--rpm\t"},
		"serve --watch ":     {"\n:4\n"},  // a value of its own: no files
		"serve --db ":        {"\n:0\n"},  // a file: the shell's own completion
		"build --temp-dir ":  {"\n:16\n"}, // a directory
	} {
		code, out, errs := runCmd(t, append([]string{"__complete"}, strings.Split(words, " ")...)...)
		require.Equal(t, 0, code, errs)
		for _, w := range want {
			assert.Contains(t, "\n"+out, w, words)
		}
	}
}
