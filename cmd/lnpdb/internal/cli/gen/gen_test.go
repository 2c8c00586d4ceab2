package gen_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/clitest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "src")
	code, out, errs := clitest.Run(t, "gen", "--seed", "3", "--ported", "2000", "--codes", "60", "--carriers", "20",
		"--messaging-share", "0.5", "--cnam", "0.1", "--trust", "0", dir)
	require.Equal(t, 0, code, errs)
	assert.Empty(t, errs, "no progress output when stderr is not a terminal")
	assert.Contains(t, out, "wrote "+dir+": 20 carriers")
	assert.Contains(t, out, "60 codes")
	assert.Contains(t, out, "2000 ported")
	assert.Contains(t, out, "0 trust")
	for _, f := range []string{"carriers.csv", "ratecenters.csv", "blocks.csv", "ported.csv", "messaging.csv", "cnam.csv", "trust.csv"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	b, err := os.ReadFile(filepath.Join(dir, "trust.csv"))
	require.NoError(t, err)
	assert.Equal(t, "tn,spam_type,complaint_count,first_reported,last_reported\n", string(b), "--trust 0 writes only the header")

	// The same flags write the same bytes: --messaging, the flag's former
	// name, still works (with a warning) for a release; LNPDB_MESSAGING,
	// lookup's bool, is not read by gen.
	t.Setenv("LNPDB_MESSAGING", "true")
	again := filepath.Join(t.TempDir(), "src")
	code, _, errs = clitest.Run(t, "gen", "-seed=3", "-ported=2000", "-codes=60", "-carriers=20", "-messaging=0.5", "-cnam=0.1", "-trust=0", again)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "--messaging is deprecated and will be removed: use --messaging-share")
	for _, f := range []string{"ported.csv", "blocks.csv", "messaging.csv"} {
		x, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		y, err := os.ReadFile(filepath.Join(again, f))
		require.NoError(t, err)
		assert.Equal(t, x, y, f)
	}
}

func TestGenUsage(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no OUT_DIR", []string{"gen"}, 2, "OUT_DIR"},
		{"two dirs", []string{"gen", dir, dir}, 2, "OUT_DIR"},
		{"unknown flag", []string{"gen", "--bogus", dir}, 2, "bogus"},
		{"not a number", []string{"gen", "--ported", "many", dir}, 2, "invalid value"},
		{"negative", []string{"gen", "--ported", "-5", dir}, 2, "negative"},
		{"share above 1", []string{"gen", "--cnam", "2", dir}, 2, "between 0 and 1"},
		{"too many for the codes", []string{"gen", "--codes", "1", "--ported", "20000", dir}, 1, "raise --codes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := clitest.Run(t, tc.args...)
			assert.Equal(t, tc.code, code, errs)
			assert.Contains(t, errs, tc.msg)
		})
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "failed runs write nothing")
}
