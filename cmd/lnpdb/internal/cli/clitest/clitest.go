// Package clitest runs lnpdb's command lines in-process for the tests of
// the commands and of the whole binary: the same root, parsing and exit
// statuses as the binary, with buffers for its streams.
package clitest

import (
	"bytes"
	"context"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/root"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/config"
)

// Run runs lnpdb with args and returns its exit status and what it wrote.
func Run(t testing.TB, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return RunIn(t, strings.NewReader(""), args...)
}

// RunIn is Run with stdin as the standard input.
func RunIn(t testing.TB, stdin io.Reader, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = root.Run(context.Background(), &cliutil.Env{Stdout: &out, Stderr: &errb, Stdin: stdin}, args)
	return code, out.String(), errb.String()
}

// Refusal is a command line lnpdb refuses: the exit status it ends with
// and what its stderr says.
type Refusal struct {
	Args []string
	Code int
	Want string
}

// AssertRefused runs each case's args after prefix and checks its exit
// status and stderr, and that it printed nothing on stdout.
func AssertRefused(t *testing.T, prefix []string, cases []Refusal) {
	t.Helper()
	for _, c := range cases {
		args := append(slices.Clip(prefix), c.Args...)
		code, out, errs := Run(t, args...)
		assert.Equal(t, c.Code, code, "%v: %s", args, errs)
		assert.Contains(t, errs, c.Want, "%v", args)
		assert.Empty(t, out, "%v: printed on a refusal", args)
	}
}

// ClearSettings unsets the LNPDB_* variables that set flags
// (platform/config), so that an operator's settings in the shell that runs
// the tests (LNPDB_ADDR, LNPDB_KEYS, …) do not change what the tests run;
// the LNPDB_TEST_* variables, which set no flag, stay. The processes the
// tests start inherit the cleared environment.
func ClearSettings() {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, config.Prefix) && !strings.HasPrefix(name, config.Prefix+"TEST_") {
			os.Unsetenv(name)
		}
	}
}

// Main is a command package's TestMain: its tests run with the settings
// cleared (ClearSettings).
func Main(m *testing.M) {
	ClearSettings()
	os.Exit(m.Run())
}
