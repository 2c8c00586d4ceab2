package root_test

import (
	"strings"
	"testing"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/clitest"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/root"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var runCmd = clitest.Run

// TestGroupHelp: --help of a command that only holds subcommands (journal,
// key, account…) exits 0 and lists them on stdout, wherever it stands.
func TestGroupHelp(t *testing.T) {
	for _, c := range root.Commands() {
		if c.Subs == nil {
			continue
		}
		for _, args := range [][]string{{c.Name, "--help"}, {"help", c.Name}, {c.Name, "-h"}} {
			code, out, errs := runCmd(t, args...)
			assert.Equal(t, 0, code, "%v: %s", args, errs)
			assert.Empty(t, errs, "%v", args)
			for _, s := range c.Subs {
				assert.Contains(t, out, "\n  "+s+" ", "%v lists %s", args, s)
			}
		}
	}
}

// TestKeyNewHelpListsBothForms: key new --help lists the flags of both its
// forms (a keys file, an account of the store), whatever else the command
// line holds.
func TestKeyNewHelpListsBothForms(t *testing.T) {
	for _, args := range [][]string{
		{"key", "new", "--help"},
		{"key", "new", "--accounts", "bolt:///nowhere", "--help"},
		{"key", "new", "--keys", "k.txt", "-h"},
		{"key", "--help", "new"},
		{"help", "key", "new"},
	} {
		code, out, errs := runCmd(t, args...)
		require.Equal(t, 0, code, "%v: %s", args, errs)
		for _, f := range []string{"--keys file", "--rpm int", "--accounts DSN", "--accounts-file file", "--account ID", "--label string"} {
			assert.Contains(t, out, f, "%v", args)
		}
	}
}

// TestFlagsHaveTwoDashes: help writes every flag --name, with the name of
// its value.
func TestFlagsHaveTwoDashes(t *testing.T) {
	code, out, _ := runCmd(t, "serve", "--help")
	require.Equal(t, 0, code)
	for _, want := range []string{"      --db file ", "      --addr host:port ", "      --watch interval ", "      --accounts-file file ", "      --dev-key "} {
		assert.Contains(t, out, want)
	}
	assert.NotRegexp(t, `(?m)^\s+-[a-z][a-z-]+ `, out, "no flag with one dash")
}

// TestSingleDashFlagsStillParse: the single-dash long flags lnpdb took
// before (-db FILE, -help, -version) still work; a value that starts with
// a dash is not taken for one.
func TestSingleDashFlagsStillParse(t *testing.T) {
	code, out, errs := runCmd(t, "version", "-help")
	assert.Equal(t, 0, code, errs)
	assert.Contains(t, out, "Usage:\n  lnpdb version")
	code, _, errs = runCmd(t, "inspect", "-db", "/no/such/table")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "/no/such/table")
	_, version, _ := runCmd(t, "version")
	for _, v := range []string{"--version", "-version"} {
		code, out, errs := runCmd(t, v)
		assert.Equal(t, 0, code, errs)
		assert.Equal(t, version, out, "%s prints what lnpdb version does", v)
	}
	code, _, errs = runCmd(t, "lookup", "--type", "-db", "1")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, `unknown --type "-db"`, "a flag's value is left alone")
	code, _, errs = runCmd(t, "lookup", "-enhanced", "-type", "cnam", "1")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--enhanced and --messaging apply to --type lrn only")
	code, _, errs = runCmd(t, "lookup", "-x", "1")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "unknown shorthand flag: 'x' in -x", "what is no flag's name is left alone")
}

// TestUsageErrorIsOneLine: a usage error is one line naming the command,
// then where its help is, and exit status 2.
func TestUsageErrorIsOneLine(t *testing.T) {
	for args, want := range map[string]string{
		"serve --bogus":        "lnpdb serve: unknown flag: --bogus\nRun 'lnpdb serve --help' for usage.\n",
		"gen --ported many x":  "lnpdb gen: invalid value \"many\" for --ported: not a whole number such as 10\nRun 'lnpdb gen --help' for usage.\n",
		"journal":              "lnpdb journal: the subcommands are check, recover\nRun 'lnpdb journal --help' for usage.\n",
		"journal repair":       "lnpdb journal: unknown subcommand \"repair\": the subcommands are check, recover\nRun 'lnpdb journal --help' for usage.\n",
		"serv":                 "lnpdb: unknown command \"serv\" (did you mean serve?)\nRun 'lnpdb --help' for usage.\n",
		"usage export --x":     "lnpdb usage: unknown flag: --x\nRun 'lnpdb usage export --help' for usage.\n",
		"compact extra --db t": "lnpdb compact: want --db FILE\nRun 'lnpdb compact --help' for usage.\n",
	} {
		code, out, errs := runCmd(t, strings.Fields(args)...)
		assert.Equal(t, 2, code, args)
		assert.Empty(t, out, args)
		assert.Equal(t, want, errs, args)
	}
}
