package build_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/format/build"
	"github.com/lnpdb/lnpdb/internal/ingest/gen"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// readRows reads a CSV file of dir as maps from column to value.
func readRows(t *testing.T, dir, name string) []map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	require.NoError(t, err)
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, c := range recs[0] {
			m[c] = r[i]
		}
		out = append(out, m)
	}
	return out
}

// bddTime writes a source time as the BDD's yyyymmddhhmmss, GMT.
func bddTime(t *testing.T, s string) string {
	if s == "" || len(s) == 14 {
		return s
	}
	v, err := time.Parse(time.RFC3339, s)
	require.NoError(t, err, s)
	return v.UTC().Format("20060102150405")
}

func gzipped(t *testing.T, b []byte) []byte {
	var out bytes.Buffer
	z := gzip.NewWriter(&out)
	_, err := z.Write(b)
	require.NoError(t, err)
	require.NoError(t, z.Close())
	return out.Bytes()
}

func zstded(t *testing.T, b []byte) []byte {
	z, err := zstd.NewWriter(nil)
	require.NoError(t, err)
	defer z.Close()
	return z.EncodeAll(b, nil)
}

// svRecord is a subscription version record of the current release: 21
// fields, SV Type wireless.
func svRecord(id int, tn, lrn, spid, at string, lnpType, reason int, svType string) string {
	return fmt.Sprintf("%d|%s|%s|%s|%s|001001001|0|001001002|0|001001003|0|001001004|0||||%d|%d|||%s\r", id, tn, lrn, spid, at, lnpType, reason, svType)
}

// bddWorld writes the generated world in src again with its ported numbers
// as NPAC subscription version files and its pooled blocks' routing as a
// number pool block file, compressed as a delivery is, and returns the
// directory.
func bddWorld(t *testing.T, src string) string {
	dst := t.TempDir()
	for _, name := range []string{"carriers.csv", "ratecenters.csv", "messaging.csv", "cnam.csv", "trust.csv"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		require.NoError(t, err)
		if name == "carriers.csv" {
			name, b = "carriers.csv.gz", gzipped(t, b)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dst, name), b, 0o644))
	}

	// blocks.csv without the pooled blocks' routing, which the pool block
	// file carries.
	var blocks, pool bytes.Buffer
	w := csv.NewWriter(&blocks)
	require.NoError(t, w.Write([]string{"npa", "nxx", "x", "ocn", "state", "rate_center", "lrn", "activated_at"}))
	pooled := 0
	for i, r := range readRows(t, src, "blocks.csv") {
		if r["x"] != "" && r["x"] != "A" && r["lrn"] != "" {
			pooled++
			fmt.Fprintf(&pool, "%d|%s%s%s|%s|%s|%s|||||||||||0\r", 100+i, r["npa"], r["nxx"], r["x"], r["lrn"], r["ocn"], bddTime(t, r["activated_at"]))
			r["lrn"], r["activated_at"] = "", ""
		}
		require.NoError(t, w.Write([]string{r["npa"], r["nxx"], r["x"], r["ocn"], r["state"], r["rate_center"], r["lrn"], r["activated_at"]}))
	}
	w.Flush()
	require.Positive(t, pooled, "the generated world has pooled blocks")
	require.NoError(t, os.WriteFile(filepath.Join(dst, "blocks.csv"), blocks.Bytes(), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dst, "NBP.20261126.dat.zst"), zstded(t, pool.Bytes()), 0o644))

	// Ported numbers in two regional files, with the records an
	// active-like file may hold that are not ports. The table's
	// dictionaries number LRNs and carriers in the order they are first
	// read, so the files hold the numbers in ported.csv's order.
	var east, west bytes.Buffer
	ported := readRows(t, src, "ported.csv")
	for i, r := range ported {
		out := &east
		if i >= len(ported)/2 {
			out = &west
		}
		out.WriteString(svRecord(i+1, r["tn"], r["lrn"], r["spid"], bddTime(t, r["activated_at"]), 0, 0, r["sv_type"]))
	}
	first := ported[0]
	west.WriteString(svRecord(900001, first["tn"], first["lrn"], first["spid"], "", 2, 0, "1")) // pooled: answered by the block
	west.WriteString(svRecord(900002, first["tn"], first["lrn"], first["spid"], "", 0, 1, "1")) // deleted
	require.NoError(t, os.WriteFile(filepath.Join(dst, "SV.east.20261126.dat.gz"), gzipped(t, east.Bytes()), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dst, "SV.west.20261126.dat"), west.Bytes(), 0o644))

	// Network data: checked, not answered from.
	spid := first["spid"]
	require.NoError(t, os.WriteFile(filepath.Join(dst, "LRN.dat"), []byte("1|"+spid+"|"+first["lrn"]+"|19970101000000\r"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dst, "README.txt"), []byte("delivered 2026-11-26\n"), 0o644))
	return dst
}

// TestBDDBuildsTheSameTable: the same world as lnpdb CSVs and as NPAC bulk
// data files (compressed, several regions, mixed with lnpdb CSVs) builds a
// byte-identical table.
func TestBDDBuildsTheSameTable(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	_, err := gen.Generate(ctx, src, gen.Config{Seed: 11, Ported: 30000, Messaging: gen.DefaultMessaging, CNAM: gen.DefaultCNAM, Trust: gen.DefaultTrust})
	require.NoError(t, err)
	bdd := bddWorld(t, src)

	dir := t.TempDir()
	fromCSV, fromBDD := filepath.Join(dir, "csv.lnpdb"), filepath.Join(dir, "bdd.lnpdb")
	_, err = build.Build(ctx, os.DirFS(src), fromCSV, build.Options{BuiltAt: testdb.BuiltAt})
	require.NoError(t, err)
	rep, err := build.Build(ctx, os.DirFS(bdd), fromBDD, build.Options{BuiltAt: testdb.BuiltAt})
	require.NoError(t, err)
	a, err := os.ReadFile(fromCSV)
	require.NoError(t, err)
	b, err := os.ReadFile(fromBDD)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(a, b), "tables differ: %d and %d bytes", len(a), len(b))

	kinds := map[string]build.FileReport{}
	for _, f := range rep.Files {
		kinds[f.Name] = f
	}
	assert.Equal(t, build.KindCarriers, kinds["carriers.csv.gz"].Kind)
	assert.Equal(t, build.KindPoolBlocks, kinds["NBP.20261126.dat.zst"].Kind)
	assert.Equal(t, build.KindSV, kinds["SV.east.20261126.dat.gz"].Kind)
	assert.Equal(t, 15000, kinds["SV.east.20261126.dat.gz"].Read)
	west := kinds["SV.west.20261126.dat"]
	assert.Equal(t, build.KindSV, west.Kind)
	assert.Equal(t, 15000, west.Read)
	assert.Equal(t, 2, west.Skipped)
	// Each reason with its count: one note for the file hid the second.
	require.Len(t, west.Reasons, 2)
	assert.Contains(t, west.Reasons[0].Reason, "LNP type pool")
	assert.Equal(t, 1, west.Reasons[0].Count)
	assert.Contains(t, west.Reasons[1].Reason, "download reason delete")
	assert.Equal(t, 1, west.Reasons[1].Count)
	assert.Equal(t, west.Lines, west.Read+west.Skipped)
	assert.Equal(t, build.KindLRN, kinds["LRN.dat"].Kind)
	assert.Equal(t, 1, kinds["LRN.dat"].Read)
	assert.Equal(t, build.KindUnknown, kinds["README.txt"].Kind)
	assert.Contains(t, kinds["README.txt"].Note, "not read")
	assert.Zero(t, rep.Skipped, "no bad rows")
}

// TestBDDCrossFileChecks: unknown SPIDs, numbers listed twice and pool
// blocks without a block hold across the files of a directory.
func TestBDDCrossFileChecks(t *testing.T) {
	base := fstest.MapFS{
		"carriers.csv":    {Data: []byte("ocn,name,carrier_type\nAB1C,Example,WIRELESS\n")},
		"ratecenters.csv": {Data: []byte("state,rate_center,lata,city,county,zip_code,timezone\nCO,DENVER,656,Denver,Denver,80202,America/Denver\n")},
		"blocks.csv":      {Data: []byte("npa,nxx,x,ocn,state,rate_center\n303,555,,AB1C,CO,DENVER\n303,555,2,AB1C,CO,DENVER\n")},
	}
	sv := func(id int, tn, spid string) string { return svRecord(id, tn, "3035550000", spid, "", 0, 0, "1") }
	for _, tt := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"unknown SPID", map[string]string{"sv.dat": sv(1, "3035551000", "ZZ99")}, "sv.dat:1: column spid: unknown SPID ZZ99"},
		{"duplicate across files", map[string]string{"a.dat": sv(1, "3035551000", "AB1C"), "b.dat": sv(2, "3035551001", "AB1C") + sv(3, "3035551000", "AB1C")},
			"b.dat:2: column tn: 13035551000 listed twice (first in a.dat on line 1)"},
		{"duplicate with ported.csv", map[string]string{"ported.csv": "tn,lrn,spid,activated_at\n3035551000,3035550000,AB1C,\n", "b.dat": sv(2, "3035551000", "AB1C")},
			"b.dat:1: column tn: 13035551000 listed twice (first in ported.csv on line 2)"},
		{"vacant number", map[string]string{"sv.dat": sv(1, "3035561000", "AB1C")}, "sv.dat:1: column tn: 13035561000 is in no assigned code"},
		{"pool block without a block", map[string]string{"nbp.dat": "1|3035553|3035550000|AB1C|20200101000000\r"}, "nbp.dat:1: column npa_nxx_x: no thousands-block row for it in blocks.csv"},
		{"pool block of an unknown SPID", map[string]string{"nbp.dat": "1|3035552|3035550000|ZZ99|20200101000000\r"}, "nbp.dat:1: column spid: unknown SPID ZZ99"},
		{"LRN of an unknown SPID", map[string]string{"lrn.dat": "1|ZZ99|3035550000\r"}, "lrn.dat:1: column spid: unknown SPID ZZ99"},
		{"two carriers files", map[string]string{"carriers.csv.gz": "x"}, "both carriers.csv and carriers.csv.gz are present"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for k, v := range base {
				fsys[k] = v
			}
			for k, v := range tt.files {
				fsys[k] = &fstest.MapFile{Data: []byte(v)}
			}
			_, err := build.Build(context.Background(), fsys, filepath.Join(t.TempDir(), "t.lnpdb"), build.Options{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}

	t.Run("SPID file as the carriers", func(t *testing.T) {
		fsys := fstest.MapFS{}
		for k, v := range base {
			fsys[k] = v
		}
		delete(fsys, "carriers.csv")
		fsys["spid.dat"] = &fstest.MapFile{Data: []byte("AB1C|Example Wireless|1\rCD2E|Example VoIP|3\r")}
		fsys["sv.dat"] = &fstest.MapFile{Data: []byte(sv(1, "3035551000", "CD2E"))}
		rep, err := build.Build(context.Background(), fsys, filepath.Join(t.TempDir(), "t.lnpdb"), build.Options{})
		require.NoError(t, err)
		var got []string
		for _, f := range rep.Files {
			got = append(got, fmt.Sprintf("%s %s %d %d", f.Name, f.Kind, f.Read, f.Skipped))
		}
		assert.Equal(t, "blocks.csv blocks 2 0|ratecenters.csv rate centers 1 0|spid.dat npac spid 2 0|sv.dat npac subscription versions 1 0", strings.Join(got, "|"))
	})
}

// TestNumberingReportsAndBDD: a directory with no lnpdb carriers or blocks
// — NANPA's code report and the PA's block report as the blocks and
// carriers, NPAC files for SPIDs, pool blocks and subscription versions,
// lnpdb's ratecenters.csv — builds, and answers from each source.
func TestNumberingReportsAndBDD(t *testing.T) {
	fsys := fstest.MapFS{
		"ratecenters.csv": {Data: []byte("state,rate_center,lata,city,county,zip_code,timezone\nCO,DENVER,656,Denver,Denver,80202,America/Denver\n")},
	}
	for dir, names := range map[string][]string{
		"../../testdata/numbering": {"allutlzd.txt", "AllBlocksAugmentedReport.txt"},
		"../../testdata/npac":      {"active.sv.txt", "active.nbp.txt", "spid.txt", "npanxx.txt"},
	} {
		for _, n := range names {
			b, err := os.ReadFile(filepath.Join(dir, n))
			require.NoError(t, err)
			fsys[n] = &fstest.MapFile{Data: b}
		}
	}
	fsys["spid.txt.zst"] = &fstest.MapFile{Data: zstded(t, fsys["spid.txt"].Data)}
	delete(fsys, "spid.txt")
	out := filepath.Join(t.TempDir(), "t.lnpdb")
	rep, err := build.Build(context.Background(), fsys, out, build.Options{})
	require.NoError(t, err)
	var got []string
	for _, f := range rep.Files {
		got = append(got, fmt.Sprintf("%s: %s %d/%d", f.Name, f.Kind, f.Read, f.Skipped))
	}
	assert.Equal(t, []string{
		"AllBlocksAugmentedReport.txt: numbering report 3/1", "active.nbp.txt: npac number pool blocks 3/0",
		"active.sv.txt: npac subscription versions 5/0", "allutlzd.txt: numbering report 2/1",
		"npanxx.txt: npac npa-nxx 2/0", "ratecenters.csv: rate centers 1/0", "spid.txt.zst: npac spid 4/0",
	}, got)

	db, err := format.OpenWriter(out)
	require.NoError(t, err)
	defer db.Close()
	r, err := db.Get(3035551003, format.FieldPorted)
	require.NoError(t, err)
	assert.Equal(t, "13035550000", r.Ported.LRN, "a subscription version")
	assert.Equal(t, "Example Wireline Co", r.Ported.Carrier.Name, "the SPID file names SPID 0001 before the NANPA report")
	r, err = db.Get(3035552999, format.FieldPorted)
	require.NoError(t, err)
	assert.False(t, r.Ported.OK)
	assert.Equal(t, "13035550002", r.Block.LRN, "the pool block's LRN")
	assert.Equal(t, "0002", r.Block.Carrier.OCN, "the PA report's block holder")
	assert.Equal(t, "DENVER", r.Block.RateCenter.Name)
	r, err = db.Get(3035569999, format.FieldPorted)
	require.NoError(t, err)
	assert.True(t, r.Block.Assigned, "the NANPA report's code 303-556")
	r, err = db.Get(3035570000, format.FieldPorted)
	require.NoError(t, err)
	assert.False(t, r.Block.Assigned, "303-557 is not assigned (Use UA)")
}

// TestGenNPACShapeBuildsTheSameTable: gen's world written in the NPAC and
// numbering report shapes (gen.WriteNPAC, lnpdb gen --shape npac) builds
// the same table, byte for byte, as its CSVs.
func TestGenNPACShapeBuildsTheSameTable(t *testing.T) {
	ctx := context.Background()
	cfg := gen.Config{Seed: 7, Ported: 100_000, Messaging: gen.DefaultMessaging, CNAM: gen.DefaultCNAM, Trust: gen.DefaultTrust}
	csvDir, npacDir := t.TempDir(), t.TempDir()
	_, err := gen.Generate(ctx, csvDir, cfg)
	require.NoError(t, err)
	_, err = gen.Generate(ctx, npacDir, cfg)
	require.NoError(t, err)
	st, err := gen.WriteNPAC(ctx, npacDir)
	require.NoError(t, err)
	assert.Equal(t, int64(100_000), st.SubscriptionVersions)
	assert.Positive(t, st.PoolBlocks)

	out := t.TempDir()
	a, b := filepath.Join(out, "csv.lnpdb"), filepath.Join(out, "npac.lnpdb")
	_, err = build.Build(ctx, os.DirFS(csvDir), a, build.Options{BuiltAt: testdb.BuiltAt})
	require.NoError(t, err)
	rep, err := build.Build(ctx, os.DirFS(npacDir), b, build.Options{BuiltAt: testdb.BuiltAt})
	require.NoError(t, err)
	kinds := map[build.Kind]int{}
	for _, f := range rep.Files {
		kinds[f.Kind]++
	}
	assert.Equal(t, map[build.Kind]int{build.KindCarriers: 1, build.KindRateCenters: 1, build.KindMessaging: 1, build.KindCNAM: 1,
		build.KindTrust: 1, build.KindSV: 1, build.KindPoolBlocks: 1, build.KindSPID: 1, build.KindNumbering: 2}, kinds)
	ab, err := os.ReadFile(a)
	require.NoError(t, err)
	bb, err := os.ReadFile(b)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(ab, bb), "tables differ: %d and %d bytes", len(ab), len(bb))
}
