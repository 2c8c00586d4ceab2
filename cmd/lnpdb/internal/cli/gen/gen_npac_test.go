package gen_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/clitest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGenShapeNPAC(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	code, out, errs := clitest.Run(t, "gen", "--shape", "npac", "--ported", "2000", dir)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "2000 subscription versions")
	for _, f := range []string{"SV.ACTIVE.dat", "NBP.ACTIVE.dat", "SPID.dat", "allutlzd.txt", "AllBlocksAugmentedReport.txt", "carriers.csv"} {
		_, err := os.Stat(filepath.Join(dir, f))
		assert.NoError(t, err, f)
	}
	_, err := os.Stat(filepath.Join(dir, "ported.csv"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	code, out, errs = clitest.Run(t, "build", "--db", filepath.Join(t.TempDir(), "t.lnpdb"), dir)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "SV.ACTIVE.dat")
	assert.Contains(t, out, "npac subscription versions: 2000 lines = 2000 read + 0 skipped + 0 header or blank")

	code, _, errs = clitest.Run(t, "gen", "--shape", "lerg", dir)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--shape is csv or npac")
}
