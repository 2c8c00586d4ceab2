package source

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

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
	fuzzReader(f, ReadNumberingReport, nil, func(t *testing.T, v *NumberingRecord) int {
		require.True(t, v.X >= -1 && v.X <= 9)
		require.True(t, utf8.ValidString(v.Company) && utf8.ValidString(v.RateCenter), "decoded to UTF-8")
		if v.Status == "" || v.Status == StatusAssigned {
			if v.OCN != "" {
				checkCode(t, v.OCN)
			}
			checkUpper(t, v.State, 2)
			require.NotEmpty(t, v.RateCenter)
			checkTime(t, v.EffectiveAt)
		}
		return v.Line
	})
}

// TestNumberingReportAsPublished reads rows in the current reports' layout
// (NANPA's CoCodeAssignment_Utilized_AllStates_Public: tab-separated,
// Latin-1, 12 columns ending in In Service and File Updated …): a quote
// that does not close is text of its field and swallows no line, a
// Latin-1 company name is decoded, MULT names no holder, and every line is
// accounted for.
func TestNumberingReportAsPublished(t *testing.T) {
	const header = "State\tNPA-NXX\tOCN\tCompany\tRateCenter\tEffectiveDate\tUse\tAssignDate\tInitial/Growth\tPooled Code\tIn Service\tFile Updated 11/27/2026\r\n"
	body := header +
		"CO\t303-555\t0001\t\"OPEN CO\tDENVER\t01/15/1997\tAS\t12/01/1996\tI\tN\tY\t\r\n" +
		"CO\t303-556\t0002\tTELEF\xd3NICA\tDENVER\t01/15/1997\tAS\t12/01/1996\tI\tN\tY\t\r\n" +
		"CO\t303-557\tMULT\tMULTIPLE OCN LISTING\tDENVER\t01/15/1997\tAS\t12/01/1996\tI\tY\tY\t\r\n" +
		"\r\n" +
		"CO\t303-558\t\"0003\"\t\"A, \"\"B\"\" CO\"\tDENVER\t\t\t\t\t\t\t\r\n"
	var count Count
	var got []NumberingRecord
	err := ReadNumberingReport(strings.NewReader(body), "f.txt", Options{Count: &count}, func(v *NumberingRecord) error {
		got = append(got, *v)
		return nil
	})
	require.NoError(t, err)
	at := int64(853286400) // 1997-01-15
	assert.Equal(t, []NumberingRecord{
		{NPA: 303, NXX: 555, X: -1, OCN: "0001", Company: `"OPEN CO`, State: "CO", RateCenter: "DENVER", EffectiveAt: at, Status: "AS", Line: 2},
		{NPA: 303, NXX: 556, X: -1, OCN: "0002", Company: "TELEFÓNICA", State: "CO", RateCenter: "DENVER", EffectiveAt: at, Status: "AS", Line: 3},
		{NPA: 303, NXX: 557, X: -1, OCN: "", Company: "MULTIPLE OCN LISTING", State: "CO", RateCenter: "DENVER", EffectiveAt: at, Status: "AS", Line: 4},
		{NPA: 303, NXX: 558, X: -1, OCN: "0003", Company: `A, "B" CO`, State: "CO", RateCenter: "DENVER", Line: 6},
	}, got)
	assert.Equal(t, Count{Lines: 6, Header: 1, Blank: 1, Rows: 4}, count)

	// Comma-separated: a quote that does not close takes the rest of its
	// line, not the lines after it.
	csvBody := "State,NPA,NXX,X,OCN,Rate Center,Assigned To\n" +
		"CO,303,555,2,0001,DENVER,\"OPEN\n" +
		"CO,303,555,3,\"0002\",DENVER,\"X, Y\"\n" +
		"CO,303,555,4,0002,\"DEN\nCO,303,555,5,0002,DENVER,Z\n"
	count = Count{}
	got = got[:0]
	var skipped []*RowError
	err = ReadNumberingReport(strings.NewReader(csvBody), "f.csv", Options{Count: &count, SkipBadRows: true, OnSkip: func(e *RowError) { skipped = append(skipped, e) }},
		func(v *NumberingRecord) error { got = append(got, *v); return nil })
	require.NoError(t, err)
	require.Len(t, got, 4)
	assert.Equal(t, []int{2, 3, 4, 5}, []int{got[0].Line, got[1].Line, got[2].Line, got[3].Line})
	assert.Equal(t, "OPEN", got[0].Company)
	assert.Equal(t, "X, Y", got[1].Company)
	assert.Equal(t, "DEN", got[2].RateCenter)
	assert.Equal(t, "Z", got[3].Company)
	assert.Empty(t, skipped)
	assert.Equal(t, Count{Lines: 5, Header: 1, Rows: 4}, count)
}
