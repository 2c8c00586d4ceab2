package build_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cnam"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/format/build"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/lnpdb/lnpdb/lrn"
	"github.com/lnpdb/lnpdb/messaging"
)

var updateAnswers = flag.Bool("update-answers", false, "rewrite testdata/npac/answers.golden.json")

// TestExampleAnswers: the table built from the example files of
// testdata/npac and testdata/numbering (with a rate center, a CNAM and a
// messaging row in lnpdb's CSVs) gives, for each number of the examples,
// the lrn, cnam and messaging answers of testdata/npac/answers.golden.json.
func TestExampleAnswers(t *testing.T) {
	fsys := fstest.MapFS{
		"ratecenters.csv": {Data: []byte("state,rate_center,lata,city,county,zip_code,timezone\nCO,DENVER,656,Denver,Denver,80202,America/Denver\n")},
		"cnam.csv":        {Data: []byte("tn,name\n3035551003,EXAMPLE VOIP\n")},
		"messaging.csv":   {Data: []byte("tn,provider,enabled,country,country_code,reference_id\n3035551004,Example SMS Hub,true,US,1,ref-1\n")},
	}
	for dir, names := range map[string][]string{
		"../../testdata/numbering": {"allutlzd.txt", "AllBlocksAugmentedReport.txt"},
		"../../testdata/npac":      {"active.sv.txt", "active.nbp.txt", "spid.txt", "lrn.txt", "npanxx.txt", "npanxxx.txt"},
	} {
		for _, n := range names {
			b, err := os.ReadFile(filepath.Join(dir, n))
			require.NoError(t, err)
			fsys[n] = &fstest.MapFile{Data: b}
		}
	}
	out := filepath.Join(t.TempDir(), "t.lnpdb")
	_, err := build.Build(context.Background(), fsys, out, build.Options{BuiltAt: testdb.BuiltAt})
	require.NoError(t, err)
	db, err := format.OpenWriter(out)
	require.NoError(t, err)
	defer db.Close()

	type answer struct {
		Case   string          `json:"case"`
		Number string          `json:"number"`
		LRN    json.RawMessage `json:"lrn"`
		// LineType is lrn.Enhanced.LineType, which the wire does not carry.
		LineType  string          `json:"line_type,omitempty"`
		CNAM      json.RawMessage `json:"cnam"`
		Messaging json.RawMessage `json:"messaging"`
	}
	wire := func(v any, err error) json.RawMessage {
		if err != nil {
			b, _ := json.Marshal(map[string]string{"error": err.Error()})
			return b
		}
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return b
	}
	var got []answer
	for _, c := range []struct{ name, number string }{
		{"ported, release 1 record (active.sv.txt:1)", "13035551000"},
		{"ported, SV Type wireless (active.sv.txt:3)", "13035551002"},
		{"ported, every field, CNAM row (active.sv.txt:4)", "13035551003"},
		{"ported, alternative SPID, messaging row (active.sv.txt:5)", "13035551004"},
		{"not ported, code from NANPA's report", "13035551999"},
		{"pooled block 303-555-2 (active.nbp.txt:1, PA report)", "13035552345"},
		{"pooled block 303-555-3 (active.nbp.txt:2)", "13035553000"},
		{"code 303-556 (NANPA report, SPID 0002)", "13035560001"},
		{"code 303-557, Use UA: not assigned", "13035570001"},
		{"Figure E-1's TN: not a NANP number", "13031231000"},
	} {
		r, err := lrn.Lookup(db, c.number, lrn.Options{Enhanced: true, Messaging: true})
		a := answer{Case: c.name, Number: c.number, LRN: wire(r, err)}
		if err == nil {
			a.LineType = r.Enhanced.LineType.String()
		}
		cr, err := cnam.Lookup(db, c.number, cnam.Options{})
		a.CNAM = wire(cr, err)
		mr, err := messaging.Lookup(db, c.number, messaging.Options{})
		a.Messaging = wire(mr, err)
		got = append(got, a)
	}
	b, err := json.MarshalIndent(got, "", "  ")
	require.NoError(t, err)
	b = append(b, '\n')
	path := "../../testdata/npac/answers.golden.json"
	if *updateAnswers {
		require.NoError(t, os.WriteFile(path, b, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "go test -run TestExampleAnswers -update-answers writes it")
	assert.Equal(t, string(want), string(b))
}
