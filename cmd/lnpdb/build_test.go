package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/clitest"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/root"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runCmd runs the binary's commands in-process.
var runCmd = clitest.Run

func TestBuildInspectVerify(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "s.lnpdb")
	code, out, errs := runCmd(t, "build", "--db", table, "../../testdata/sample")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "carriers.csv")
	assert.Contains(t, out, "per ported number")
	assert.Empty(t, errs, "no progress output when stderr is not a terminal")

	code, out, errs = runCmd(t, "inspect", "--db", table)
	require.Equal(t, 0, code, errs)
	for _, s := range []string{"PORTED", "BLOCKS", "CNAMNAME", "zstd", "format version"} {
		assert.Contains(t, out, s)
	}

	code, out, errs = runCmd(t, "verify", "--db", table)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, ": ok")

	b, err := os.ReadFile(table)
	require.NoError(t, err)
	b[len(b)/2] ^= 0x40
	bad := filepath.Join(dir, "bad.lnpdb")
	require.NoError(t, os.WriteFile(bad, b, 0o644))
	code, _, errs = runCmd(t, "verify", "--db", bad)
	assert.Equal(t, 1, code, "verify exits 1 on corruption")
	assert.Contains(t, errs, "corrupt")
	assert.Contains(t, errs, bad, "the error names the file")
}

func TestBuildErrors(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := runCmd(t, "build", "--db", filepath.Join(dir, "x"))
	assert.Equal(t, 2, code, "usage error")
	assert.Contains(t, errs, "SRC_DIR")
	code, _, errs = runCmd(t, "build", "--db", filepath.Join(dir, "x"), filepath.Join(dir, "nope"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "not a directory")
	src := filepath.Join(dir, "src")
	require.NoError(t, os.Mkdir(src, 0o755))
	code, _, errs = runCmd(t, "build", "--db", filepath.Join(dir, "x"), src)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "carriers.csv is missing")
	code, _, _ = runCmd(t, "nosuch")
	assert.Equal(t, 2, code)
	code, _, _ = runCmd(t)
	assert.Equal(t, 2, code)
}

func TestBuildSpills(t *testing.T) {
	dir := t.TempDir()
	tmp := t.TempDir()
	table := filepath.Join(dir, "s.lnpdb")
	code, out, errs := runCmd(t, "build", "-max-memory-mib", "0", "-temp-dir", tmp, "--db", table, "../../testdata/sample")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "spilled", "a budget of 0 MiB sends every row through spill files")
	ents, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, ents, "spill files are gone")
	code, out, errs = runCmd(t, "verify", "--db", table)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, ": ok")

	code, out, errs = runCmd(t, "build", "--db", table, "../../testdata/sample")
	require.Equal(t, 0, code, errs)
	assert.NotContains(t, out, "spilled", "the sample fits the default budget")
}

// TestHelp: help lists every command once, by name, on stdout; no command
// or an unknown one is a usage error, its list on stderr.
func TestHelp(t *testing.T) {
	code, errs, stderr := runCmd(t, "help")
	require.Equal(t, 0, code)
	assert.Empty(t, stderr, "help asked for goes to stdout")
	last := ""
	for _, c := range root.Commands() {
		assert.Greater(t, c.Name, last, "commands by name, each once")
		last = c.Name
		assert.Contains(t, errs, "  "+c.Name+" ")
	}
	code, _, errs = runCmd(t)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "\n  lnpdb [command]\n")
	code, _, errs = runCmd(t, "nosuch")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, `unknown command "nosuch"`)
}

// refusal is a command line the binary refuses: the exit status it ends
// with and what its stderr says.
type refusal struct {
	args []string
	code int
	want string
}

// assertRefused is clitest.AssertRefused for the cases written as refusals.
func assertRefused(t *testing.T, prefix []string, cases []refusal) {
	t.Helper()
	for _, c := range cases {
		clitest.AssertRefused(t, prefix, []clitest.Refusal{{Args: c.args, Code: c.code, Want: c.want}})
	}
}
