package build_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/format/build"
)

// reportWorld is a source directory built from NANPA's current code report
// layout (CoCodeAssignment_Utilized_AllStates_Public: tab-separated,
// Latin-1, 12 columns) and a ported.csv, as an operator has them.
func reportWorld(ported string, badRows bool) fstest.MapFS {
	const header = "State\tNPA-NXX\tOCN\tCompany\tRateCenter\tEffectiveDate\tUse\tAssignDate\tInitial/Growth\tPooled Code\tIn Service\tFile Updated 11/27/2026\r\n"
	fsys := fstest.MapFS{
		"ratecenters.csv": {Data: []byte("state,rate_center,lata,city,county,zip_code,timezone\nCO,DENVER,656,Denver,Denver,80202,America/Denver\n")},
		"CoCodeAssignment_Utilized_AllStates_Public.txt": {Data: []byte(header +
			"CO\t303-555\t0001\tTELEF\xd3NICA\tDENVER\t01/15/1997\tAS\t12/01/1996\tI\tN\tY\t\r\n" +
			"CO\t303-556\tMULT\tMULTIPLE OCN LISTING\tDENVER\t01/15/1997\tAS\t12/01/1996\tI\tY\tY\t\r\n" +
			"CO\t303-557\t\t\tDENVER\t\tUA\t\t\t\t\t\r\n" +
			"CO\t303-558\t00X\tBAD OCN CO\tDENVER\t01/15/1997\tAS\t12/01/1996\tI\tN\tY\t\r\n" +
			"CO\t303-559\t0001\t\"OPEN QUOTE CO\tDENVER\t01/15/1997\tAS\t12/01/1996\tI\tN\tY\t\r\n" +
			"\r\n")},
		"ported.csv": {Data: []byte(ported)},
	}
	if !badRows {
		fsys["CoCodeAssignment_Utilized_AllStates_Public.txt"] = &fstest.MapFile{Data: []byte(header +
			"CO\t303-555\t0001\tTELEF\xd3NICA\tDENVER\t01/15/1997\tAS\t12/01/1996\tI\tN\tY\t\r\n")}
	}
	return fsys
}

// TestEveryLineReported: with --skip-bad-rows a quote that never closes is
// one bad row, the rows after it are read, and every file's lines are
// read + skipped + header or blank; each reason a record was skipped is
// counted apart (a bad OCN is not "not assigned"); a Latin-1 company is
// answered decoded; MULT makes no carrier.
func TestEveryLineReported(t *testing.T) {
	ported := "tn,lrn,spid,activated_at\n" +
		"\"3035550100,3035550000,0001,\n" +
		"3035550101,3035550000,0001,\n" +
		"3035590102,3035550000,0001,\n"
	out := filepath.Join(t.TempDir(), "t.lnpdb")
	rep, err := build.Build(context.Background(), reportWorld(ported, true), out, build.Options{SkipBadRows: true})
	require.NoError(t, err)
	files := map[string]build.FileReport{}
	for _, f := range rep.Files {
		files[f.Name] = f
		if f.Lines > 0 {
			assert.Equal(t, f.Lines, f.Header+f.Blank+f.Read+f.Skipped, "%s: every line accounted for", f.Name)
		}
	}
	p := files["ported.csv"]
	assert.Equal(t, build.FileReport{Name: "ported.csv", Kind: build.KindPorted, Lines: 4, Header: 1, Read: 2, Skipped: 1, Bad: 1}, p)
	assert.Contains(t, rep.SkippedSample[len(rep.SkippedSample)-1], `ported.csv:2: extraneous or missing " in quoted-field`)

	n := files["CoCodeAssignment_Utilized_AllStates_Public.txt"]
	assert.Equal(t, build.KindNumbering, n.Kind)
	assert.Equal(t, 7, n.Lines)
	assert.Equal(t, 1, n.Header)
	assert.Equal(t, 1, n.Blank)
	assert.Equal(t, 2, n.Read, "303-555 and 303-559")
	assert.Equal(t, 3, n.Skipped)
	assert.Equal(t, 1, n.Bad, "the bad OCN")
	require.Len(t, n.Reasons, 2)
	assert.Contains(t, n.Reasons[0].Reason, "OCN MULT")
	assert.Equal(t, 1, n.Reasons[0].Count)
	assert.Contains(t, n.Reasons[1].Reason, "not assigned")
	assert.Equal(t, 1, n.Reasons[1].Count)

	db, err := format.Open(out)
	require.NoError(t, err)
	defer db.Close()
	r, err := db.Get(3035550101, format.FieldPorted)
	require.NoError(t, err)
	assert.True(t, r.Ported.OK, "the row after the open quote")
	assert.Equal(t, "TELEFÓNICA", r.Ported.Carrier.Name)
	r, err = db.Get(3035560000, format.FieldPorted)
	require.NoError(t, err)
	assert.False(t, r.Block.Assigned, "MULT names no holder")
	assert.Equal(t, 1, db.Info().Counts.Carriers, "0001 alone: MULT is no carrier")
	r, err = db.Get(3035590000, format.FieldPorted)
	require.NoError(t, err)
	assert.True(t, r.Block.Assigned, "the row with a quote that does not close")
	assert.Equal(t, "0001", r.Block.Carrier.OCN)
}

// TestLongLineSkipped: a line past lineio's bound is one bad row, in
// bounded memory, and the build goes on.
func TestLongLineSkipped(t *testing.T) {
	ported := "tn,lrn,spid,activated_at\n" + strings.Repeat("9", 2<<20) + "\n3035550101,3035550000,0001,\n"
	out := filepath.Join(t.TempDir(), "t.lnpdb")
	_, err := build.Build(context.Background(), reportWorld(ported, false), out, build.Options{})
	require.ErrorContains(t, err, "ported.csv:2: line longer than 1048576 bytes")
	rep, err := build.Build(context.Background(), reportWorld(ported, false), out, build.Options{SkipBadRows: true})
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Counts.Ported)
}
