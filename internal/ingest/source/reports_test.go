package source

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const numberingDir = "../../../testdata/numbering"

func TestReadNumberingReports(t *testing.T) {
	for _, name := range []string{"allutlzd.txt", "AllBlocksAugmentedReport.txt"} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(numberingDir, name))
			require.NoError(t, err)
			assert.True(t, IsNumberingReport(b[:bytesIndexLine(b)]), "header recognised")
			got := checkGoldenIn(t, ReadNumberingReport, numberingDir, name)
			require.NotEmpty(t, got.Records)
			assert.Empty(t, got.Rejected)
		})
	}
	codes, err := readAll(ReadNumberingReport, "State\tNPA-NXX\tOcn\tCompany\tRateCenter\tEffectiveDate\tUse\n"+
		"co\t303555\tab1c\tX\tDENVER\t2024-01-02\tas\n", Options{})
	require.NoError(t, err)
	assert.Equal(t, []NumberingRecord{{NPA: 303, NXX: 555, X: -1, OCN: "AB1C", Company: "X", State: "CO", RateCenter: "DENVER", EffectiveAt: 1704153600, Status: "AS", Line: 2}}, codes)

	for _, tt := range []struct{ body, column, reason string }{
		{"State,NPA-NXX,OCN,RateCenter\nCO,303-55,AB1C,DENVER\n", "npa-nxx", "not an NPA-NXX"},
		{"State,NPA-NXX,OCN,RateCenter\nCO,303-911,AB1C,DENVER\n", "npa-nxx", "NXX 911"},
		{"State,NPA-NXX,OCN,RateCenter\nCO,303-555,AB1,DENVER\n", "ocn", "not 4 letters and digits"},
		{"State,NPA-NXX,OCN,RateCenter\nCOL,303-555,AB1C,DENVER\n", "state", "not 2 letters"},
		{"State,NPA-NXX,OCN,RateCenter\nCO,303-555,AB1C,\n", "ratecenter", "empty"},
		{"State,NPA,NXX,X,OCN,RateCenter\nCO,303,555,x,AB1C,DENVER\n", "x", "not a digit"},
		{"State,NPA-NXX,OCN,RateCenter,Effective Date\nCO,303-555,AB1C,DENVER,13/45/2020\n", "effective_date", "not MM/DD/YYYY"},
		{"State,NPA-NXX,OCN,RateCenter,Effective Date\nCO,303-555,AB1C,DENVER,01/01/2110\n", "effective_date", "after 2105"},
		{"State,NPA-NXX,OCN,RateCenter,Effective Date\nCO,303-555,AB1C,DENVER,1969-12-31\n", "effective_date", "before 1970"},
	} {
		_, err := readAll(ReadNumberingReport, tt.body, Options{})
		requireRowError(t, err, 2, tt.column, tt.reason)
	}
	_, err = readAll(ReadNumberingReport, "State,NPA-NXX,Company\nCO,303-555,X\n", Options{})
	var ce *ColumnError
	require.ErrorAs(t, err, &ce)
	assert.False(t, IsNumberingReport([]byte("tn,lrn,spid,activated_at")))
}

func bytesIndexLine(b []byte) int {
	for i, c := range b {
		if c == '\r' || c == '\n' {
			return i
		}
	}
	return len(b)
}

func FuzzReadNumberingReport(f *testing.F) {
	for _, name := range []string{"allutlzd.txt", "AllBlocksAugmentedReport.txt"} {
		b, err := os.ReadFile(filepath.Join(numberingDir, name))
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte("State,NPA,NXX,X,OCN,RateCenter,Use\nCO,303,555,1,AB1C,DENVER,AS\nCO,303,556,,,,UA\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = ReadNumberingReport(bytesReader(data), "f.csv", Options{SkipBadRows: true}, func(v *NumberingRecord) error {
			require.True(t, v.X >= -1 && v.X <= 9)
			if v.Status == "" || v.Status == StatusAssigned {
				checkCode(t, v.OCN)
				checkUpper(t, v.State, 2)
				require.NotEmpty(t, v.RateCenter)
				checkTime(t, v.EffectiveAt)
			}
			return nil
		})
	})
}
