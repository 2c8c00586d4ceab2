package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/root"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// newKeyIn runs lnpdb key new --keys path and returns the key.
func newKeyIn(t *testing.T, path string) string {
	t.Helper()
	return strings.TrimSpace(mustRun(t, "key", "new", "--keys", path))
}

// TestServeReloadsKeysOnSIGHUP revokes and adds lookup and admin keys in a
// running server: SIGHUP puts the files in force without a restart, and a
// file that does not parse leaves the keys as they were.
func TestServeReloadsKeysOnSIGHUP(t *testing.T) {
	table := testdb.Build(t, lnpdb.Sample())
	dir := t.TempDir()
	keys, admins := filepath.Join(dir, "keys"), filepath.Join(dir, "admins")
	alice, bob := newKeyIn(t, keys), newKeyIn(t, keys)
	root := newKeyIn(t, admins)

	s := startServe(t, "--db", table, "--keys", keys, "--admin-keys", admins,
		"--addr", "127.0.0.1:0", "--watch", "0", "--access-log=false")
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	lookupAs := func(key string) int {
		code, body := call(t, "POST", base+"/api/v1/lrn", key, `{"phone_number":"12025550123"}`)
		if code != http.StatusOK {
			assert.Contains(t, body, `"code":"INVALID_API_KEY"`)
		}
		return code
	}
	compactAs := func(key string) int {
		code, _ := call(t, "POST", base+"/admin/v1/compact", key, "")
		return code
	}
	require.Equal(t, http.StatusOK, lookupAs(alice))
	require.Equal(t, http.StatusOK, lookupAs(bob))
	require.Equal(t, http.StatusAccepted, compactAs(root))

	// Revoke alice (the file is rewritten without her line), add carol;
	// replace the admin key.
	b, err := os.ReadFile(keys)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(b), "\n")
	require.NoError(t, os.WriteFile(keys, []byte(strings.Join(lines[1:], "")), 0o600))
	carol := newKeyIn(t, keys)
	require.NoError(t, os.Remove(admins))
	root2 := newKeyIn(t, admins)
	assert.Equal(t, http.StatusOK, lookupAs(alice), "nothing changes before SIGHUP")
	assert.Equal(t, http.StatusUnauthorized, lookupAs(carol))

	sighup(t)
	s.awaitCount(t, `msg="keys reloaded"`, 2)
	assert.Contains(t, s.stderr.String(), `msg="keys reloaded" reason=SIGHUP file=`+keys+` keys=2 added=1 removed=1`)
	assert.Equal(t, http.StatusUnauthorized, lookupAs(alice), "a revoked key stops working without a restart")
	assert.Equal(t, http.StatusOK, lookupAs(bob))
	assert.Equal(t, http.StatusOK, lookupAs(carol), "an added key starts working")
	assert.Equal(t, http.StatusUnauthorized, compactAs(root))
	assert.Equal(t, http.StatusAccepted, compactAs(root2))

	// A keys file caught broken is refused; the keys in force stay.
	require.NoError(t, os.WriteFile(keys, []byte("sha256:0123\n"), 0o600))
	sighup(t)
	s.await(t, &s.stderr, `msg="(keys reload failed); the previous keys stay in force"`)
	assert.Contains(t, s.stderr.String(), keys+":1: the hash must be 64 hex digits")
	assert.Equal(t, http.StatusOK, lookupAs(bob))
	assert.Equal(t, http.StatusOK, lookupAs(carol))
	assert.Equal(t, http.StatusUnauthorized, lookupAs(alice))
	assert.Equal(t, http.StatusAccepted, compactAs(root2))
	require.Equal(t, 0, s.stop(t))
}

func TestServeRefusesOneFileForBothKeySets(t *testing.T) {
	table := testdb.Build(t, lnpdb.Sample())
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	newKeyIn(t, keys)
	symlink, hardlink := filepath.Join(dir, "symlink"), filepath.Join(dir, "hardlink")
	require.NoError(t, os.Symlink(keys, symlink))
	require.NoError(t, os.Link(keys, hardlink))
	for _, admins := range []string{keys, dir + "/./keys", symlink, hardlink} {
		var out, errb bytes.Buffer
		code := root.Run(context.Background(), &cliutil.Env{Stdout: &out, Stderr: &errb},
			[]string{"serve", "--db", table, "--keys", keys, "--admin-keys", admins, "--addr", "127.0.0.1:0"})
		assert.Equal(t, 2, code, "%s: a usage error", admins)
		assert.Contains(t, errb.String(), "--keys and --admin-keys name the same file", admins)
	}
}
