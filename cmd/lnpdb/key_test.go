package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/auth"
)

func TestKeyNew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys")
	code, out, errOut := runCmd(t, "key", "new", "--keys", path)
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
	code, out, errOut = runCmd(t, "key", "new", "--keys", path, "--rpm", "1000")
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
	assertRefused(t, []string{"key"}, []refusal{
		{nil, 2, "the subcommands are list, new, revoke"},
		{[]string{"list"}, 2, "--accounts DSN is required"},
		{[]string{"rotate"}, 2, `unknown subcommand "rotate"`},
		{[]string{"new"}, 2, "--keys FILE is required"},
		{[]string{"new", "--keys", bad}, 1, "does not parse"},
		{[]string{"new", "--keys", filepath.Join(t.TempDir(), "k"), "--rpm", "-1"}, 2, "--rpm"},
		{[]string{"new", "--keys", filepath.Join(t.TempDir(), "no", "such", "dir")}, 1, "no such file"},
	})
	b, _ := os.ReadFile(bad)
	assert.Equal(t, "not a key line\n", string(b), "a broken file is left as it was")
}
