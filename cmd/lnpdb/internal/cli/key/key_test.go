package key_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/clitest"
)

func TestKeyNew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys")
	code, out, errOut := clitest.Run(t, "key", "new", "--keys", path)
	require.Equal(t, 0, code, errOut)
	first := strings.TrimSpace(out)
	assert.Regexp(t, `^lnp_[a-z2-7]{32}$`, first)

	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.NotContains(t, string(b), first, "only the hash is stored")
	assert.Contains(t, errOut, auth.HashKey(first).ID())

	// A file without a final newline still gets a line of its own.
	require.NoError(t, os.WriteFile(path, bytes.TrimRight(b, "\n"), 0o600))
	code, out, errOut = clitest.Run(t, "key", "new", "--keys", path, "--rpm", "1000")
	require.Equal(t, 0, code, errOut)
	second := strings.TrimSpace(out)

	ks, err := auth.LoadKeys(path)
	require.NoError(t, err)
	assert.Equal(t, 2, ks.Len())
	k, ok := ks.Authenticate(first)
	require.True(t, ok)
	assert.Equal(t, 0, k.Limit)
	k, ok = ks.Authenticate(second)
	require.True(t, ok)
	assert.Equal(t, 1000, k.Limit)
}

func TestKeyNewRefuses(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad")
	require.NoError(t, os.WriteFile(bad, []byte("not a key line\n"), 0o600))
	clitest.AssertRefused(t, []string{"key"}, []clitest.Refusal{
		{Args: nil, Code: 2, Want: "the subcommands are list, new, revoke"},
		{Args: []string{"list"}, Code: 2, Want: "--accounts DSN is required"},
		{Args: []string{"rotate"}, Code: 2, Want: `unknown subcommand "rotate"`},
		{Args: []string{"new"}, Code: 2, Want: "--keys FILE is required"},
		{Args: []string{"new", "--keys", bad}, Code: 1, Want: "does not parse"},
		{Args: []string{"new", "--keys", filepath.Join(t.TempDir(), "k"), "--rpm", "-1"}, Code: 2, Want: "--rpm"},
		{Args: []string{"new", "--keys", filepath.Join(t.TempDir(), "no", "such", "dir")}, Code: 1, Want: "no such file"},
	})
	b, _ := os.ReadFile(bad)
	assert.Equal(t, "not a key line\n", string(b), "a broken file is left as it was")
}

// TestKeyNewForms: key new takes the keys-file form with --keys on the
// command line, even when LNPDB_ACCOUNTS is set; the store's with
// --accounts, or with LNPDB_ACCOUNTS and no --keys; the store's flags are
// refused in the keys-file form.
func TestKeyNewForms(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.txt")
	code, _, errs := clitest.Run(t, "key", "new", "--keys", keys, "--label", "x")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--account and --label are an account's key's")

	t.Setenv("LNPDB_ACCOUNTS", "bolt://"+filepath.Join(dir, "accounts.db"))
	code, out, errs := clitest.Run(t, "key", "new", "--keys", keys)
	require.Equal(t, 0, code, errs)
	assert.FileExists(t, keys)
	assert.NotEmpty(t, out)
	code, _, errs = clitest.Run(t, "key", "new")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--account ID is required", "LNPDB_ACCOUNTS without --keys: the store's form")
	code, _, errs = clitest.Run(t, "key", "new", "--keys", keys, "--accounts", "bolt://"+filepath.Join(dir, "b.db"))
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "not both")
}
