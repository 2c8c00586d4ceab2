package format_test

import (
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/format/build"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var mini = os.DirFS("testdata/mini")

// checkAgainstOracle asserts that every row of every source file reads back
// exactly from db.
func checkAgainstOracle(t *testing.T, db *format.DB, o *oracle) {
	t.Helper()
	get := func(tn uint64) format.Record {
		r, err := db.Get(tn, format.FieldAll)
		require.NoError(t, err)
		return r
	}
	checkBlock := func(tn uint64, blk format.Block) {
		row := o.blockRow(tn)
		require.NotNil(t, row)
		require.True(t, blk.Assigned, "%d", tn)
		assert.Equal(t, row[3], blk.Carrier.OCN, "%d: block OCN", tn)
		rc := o.rcs[row[4]+"|"+strings.ToUpper(row[5])]
		assert.Equal(t, rc[0], blk.RateCenter.State, "%d", tn)
		assert.Equal(t, rc[1], blk.RateCenter.Name, "%d", tn)
		assert.Equal(t, rc[2], blk.RateCenter.LATA, "%d", tn)
		assert.Equal(t, rc[3], blk.RateCenter.City, "%d", tn)
		assert.Equal(t, rc[4], blk.RateCenter.County, "%d", tn)
		assert.Equal(t, rc[5], blk.RateCenter.ZIP, "%d", tn)
		assert.Equal(t, rc[6], blk.RateCenter.TimeZone, "%d", tn)
		if row[6] != "" {
			assert.Equal(t, "1"+strconv.FormatUint(tn10(t, row[6]), 10), blk.LRN, "%d: block LRN", tn)
		} else {
			assert.Empty(t, blk.LRN)
		}
		assert.Equal(t, unixTime(t, row[7]), blk.ActivatedAt, "%d", tn)
		c := o.carriers[blk.Carrier.OCN]
		assert.Equal(t, c[1], blk.Carrier.Name)
		assert.Equal(t, c[2], blk.Carrier.Type)
	}
	for key := range o.codes {
		for _, line := range []uint64{0, 4321, 9999} {
			tn := key*10000 + line
			checkBlock(tn, get(tn).Block)
		}
	}
	for key := range o.thou {
		tn := key*1000 + 777
		r := get(tn)
		assert.True(t, r.Block.Thousands, "%d", tn)
		checkBlock(tn, r.Block)
	}
	for tn, row := range o.ported {
		r := get(tn)
		require.True(t, r.Ported.OK, "%d ported", tn)
		assert.Equal(t, "1"+strconv.FormatUint(tn10(t, row[1]), 10), r.Ported.LRN, "%d", tn)
		assert.Equal(t, row[2], r.Ported.Carrier.OCN, "%d", tn)
		assert.Equal(t, unixTime(t, row[3]), r.Ported.ActivatedAt, "%d", tn)
		sv := format.SVTypeNone
		if row[4] != "" {
			n, err := strconv.Atoi(row[4])
			require.NoError(t, err)
			sv = format.SVType(n + 1)
		}
		assert.Equal(t, sv, r.Ported.SVType, "%d", tn)
		checkBlock(tn, r.Block)
	}
	for tn, row := range o.msg {
		r := get(tn)
		require.True(t, r.Messaging.OK, "%d messaging", tn)
		assert.Equal(t, row[1], r.Messaging.Provider)
		assert.Equal(t, parseBool(row[2]), r.Messaging.Enabled)
		assert.Equal(t, strings.ToUpper(row[3]), r.Messaging.Country)
		assert.Equal(t, row[4], r.Messaging.CountryCode)
		assert.Equal(t, row[5], r.Messaging.ReferenceID)
	}
	for tn, name := range o.cnam {
		r := get(tn)
		require.True(t, r.CNAM.OK, "%d cnam", tn)
		assert.Equal(t, name, r.CNAM.Name)
	}
	for tn, row := range o.trust {
		r := get(tn)
		require.True(t, r.Trust.OK, "%d trust", tn)
		want := strings.ToUpper(row[1])
		if want == "" {
			want = "NONE"
		}
		assert.Equal(t, want, r.Trust.SpamType)
		c, _ := strconv.ParseUint(row[2], 10, 32)
		assert.Equal(t, uint32(c), r.Trust.Complaints)
		assert.Equal(t, unixTime(t, row[3]), r.Trust.FirstReported)
		assert.Equal(t, unixTime(t, row[4]), r.Trust.LastReported)
	}
	info := db.Info()
	assert.Equal(t, len(o.ported), info.Counts.Ported)
	assert.Equal(t, len(o.msg), info.Counts.Messaging)
	assert.Equal(t, len(o.cnam), info.Counts.CNAM)
	assert.Equal(t, len(o.trust), info.Counts.Trust)
	assert.Equal(t, len(o.codes), info.Counts.Codes)
	assert.Equal(t, len(o.thou), info.Counts.ThousandsBlocks)
	assert.Equal(t, len(o.carriers), info.Counts.Carriers)
}

// checkAbsent asserts that n random numbers absent from the sources read
// back absent from every per-number section, and that vacant codes read as
// unassigned.
func checkAbsent(t *testing.T, db *format.DB, o *oracle, n int) {
	r := rand.New(rand.NewPCG(7, 11))
	for i := 0; i < n; {
		var tn uint64
		if i%2 == 0 && len(o.codes) > 0 {
			// Numbers inside assigned codes: the hard case for a perfect
			// hash, which maps them onto real records' slots.
			keys := codeKeys(o)
			tn = keys[r.IntN(len(keys))]*10000 + uint64(r.IntN(10000))
		} else {
			tn = 2000000000 + r.Uint64N(8000000000)
		}
		if _, ok := o.ported[tn]; ok {
			continue
		}
		i++
		rec, err := db.Get(tn, format.FieldAll)
		require.NoError(t, err)
		require.False(t, rec.Ported.OK, "%d must not be ported", tn)
		_, m := o.msg[tn]
		require.Equal(t, m, rec.Messaging.OK, "%d messaging", tn)
		_, c := o.cnam[tn]
		require.Equal(t, c, rec.CNAM.OK, "%d cnam", tn)
		_, tr := o.trust[tn]
		require.Equal(t, tr, rec.Trust.OK, "%d trust", tn)
		require.Equal(t, o.blockRow(tn) != nil, rec.Block.Assigned, "%d assigned", tn)
	}
}

var codeKeysCache sync.Map

func codeKeys(o *oracle) []uint64 {
	if v, ok := codeKeysCache.Load(o); ok {
		return v.([]uint64)
	}
	var keys []uint64
	for k := range o.codes {
		keys = append(keys, k)
	}
	codeKeysCache.Store(o, keys)
	return keys
}

func TestRoundTripMini(t *testing.T) {
	db := testdb.Open(t, mini)
	o := loadOracle(t, mini)
	checkAgainstOracle(t, db, o)
	checkAbsent(t, db, o, 100000)
	require.NoError(t, db.Verify())
}

func TestRoundTripSample(t *testing.T) {
	t.Parallel()
	db := testdb.Sample(t)
	o := loadOracle(t, lnpdb.Sample())
	checkAgainstOracle(t, db, o)
	n := 1000000
	if testing.Short() || raceEnabled {
		n = 100000
	}
	checkAbsent(t, db, o, n)
}

func TestMiniSemantics(t *testing.T) {
	db := testdb.Open(t, mini)
	r, err := db.Get(2025553001, format.FieldAll)
	require.NoError(t, err)
	assert.True(t, r.Block.Thousands)
	assert.Equal(t, "12025559999", r.Block.LRN, "pooled block LRN")
	assert.Equal(t, "2002", r.Block.Carrier.OCN, "thousands-block OCN overrides the code holder")
	r, err = db.Get(2025554001, format.FieldAll)
	require.NoError(t, err)
	assert.Equal(t, "4004", r.Block.Carrier.OCN)
	assert.Empty(t, r.Block.LRN, "a thousands-block without an LRN is not pooled")
	r, err = db.Get(2025550001, format.FieldAll)
	require.NoError(t, err)
	assert.False(t, r.Block.Thousands)
	assert.Equal(t, "1001", r.Block.Carrier.OCN)
	assert.Equal(t, "-0500", r.Block.RateCenter.UTCOffset)
	r, err = db.Get(6023001111, format.FieldAll)
	require.NoError(t, err)
	assert.Equal(t, "-0700", r.Block.RateCenter.UTCOffset, "Arizona keeps standard time")
	assert.Equal(t, int64(1275368400), r.Ported.ActivatedAt, "RFC 3339 offsets are honoured")
	r, err = db.Get(6023010001, format.FieldAll)
	require.NoError(t, err)
	assert.False(t, r.Block.Assigned, "602-301 has only its 7 thousands-block")
	r, err = db.Get(6023017001, format.FieldAll)
	require.NoError(t, err)
	assert.True(t, r.Block.Assigned)
	r, err = db.Get(1999999999, format.FieldAll)
	require.NoError(t, err)
	assert.False(t, r.Block.Assigned, "numbers outside the NANP range are unassigned")
}

func TestGetMany(t *testing.T) {
	db := testdb.Sample(t)
	o := loadOracle(t, lnpdb.Sample())
	var tns []uint64
	for tn := range o.ported {
		tns = append(tns, tn, tn+1)
	}
	tns = append(tns, 1, 9999999999, 2000000000)
	out := make([]format.Record, len(tns))
	require.NoError(t, db.GetMany(tns, format.FieldAll, out))
	for i, tn := range tns {
		want, err := db.Get(tn, format.FieldAll)
		require.NoError(t, err)
		require.Equal(t, want, out[i], "%d", tn)
	}
	require.Error(t, db.GetMany(tns, format.FieldAll, out[:1]), "out too short")
}

func TestAllocs(t *testing.T) {
	db := testdb.Sample(t)
	o := loadOracle(t, lnpdb.Sample())
	var ported, plain uint64
	for tn := range o.ported {
		ported = tn
		break
	}
	for k := range o.codes {
		plain = k*10000 + 1
		if _, ok := o.ported[plain]; !ok {
			break
		}
	}
	for _, tn := range []uint64{ported, plain, 2000000000} {
		for _, f := range []format.Fields{0, format.FieldPorted, format.FieldPorted | format.FieldMessaging | format.FieldTrust} {
			allocs := testing.AllocsPerRun(200, func() {
				if _, err := db.Get(tn, f); err != nil {
					t.Fatal(err)
				}
			})
			assert.Zero(t, allocs, "Get(%d, %b)", tn, f)
		}
	}
	tns := []uint64{ported, plain, ported + 1}
	out := make([]format.Record, len(tns))
	allocs := testing.AllocsPerRun(200, func() {
		if err := db.GetMany(tns, format.FieldPorted, out); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs, "GetMany")
}

func TestCloseDuringLookups(t *testing.T) {
	db := testdb.Sample(t)
	o := loadOracle(t, lnpdb.Sample())
	var tns []uint64
	for tn := range o.ported {
		tns = append(tns, tn)
	}
	want := map[uint64]string{}
	for _, tn := range tns {
		r, err := db.Get(tn, format.FieldPorted)
		require.NoError(t, err)
		want[tn] = r.Ported.LRN
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := 0; ; i++ {
				tn := tns[(i*7+g)%len(tns)]
				r, err := db.Get(tn, format.FieldPorted)
				if errors.Is(err, format.ErrClosed) {
					return
				}
				if err != nil || r.Ported.LRN != want[tn] {
					t.Errorf("Get(%d) = %q, %v; want %q", tn, r.Ported.LRN, err, want[tn])
					return
				}
			}
		}()
	}
	close(start)
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, db.Close())
	wg.Wait()
	require.NoError(t, db.Close(), "Close is idempotent")
	_, err := db.Get(tns[0], format.FieldPorted)
	require.ErrorIs(t, err, lnpdb.ErrClosed)
	require.ErrorIs(t, db.Verify(), format.ErrClosed)
}

// withFile returns mini's files with one file replaced.
func withFile(t *testing.T, name, content string) fstest.MapFS {
	m := testdb.Copy(t, mini)
	if content == "" {
		delete(m, name)
	} else {
		m[name] = &fstest.MapFile{Data: []byte(content)}
	}
	return m
}

func TestBadSources(t *testing.T) {
	miniFile := func(name string) string {
		b, err := fs.ReadFile(mini, name)
		require.NoError(t, err)
		return string(b)
	}
	cases := []struct {
		name, file, content, want string
		skippable                 bool
	}{
		{"missing column", "ported.csv", "tn,lrn,activated_at\n2025550123,2025569000,\n", `ported.csv: missing required column "spid"`, false},
		{"unknown OCN", "ported.csv", miniFile("ported.csv") + "2025550199,2025569000,9999,\n", "ported.csv:6: column spid: unknown SPID 9999", true},
		{"unknown block OCN", "blocks.csv", miniFile("blocks.csv") + "312,201,,9999,IL,CHICAGO,,\n", "blocks.csv:9: column ocn: unknown OCN 9999", true},
		{"unknown rate center", "blocks.csv", miniFile("blocks.csv") + "312,201,,1001,IL,NOWHERE,,\n", "blocks.csv:9: column rate_center: unknown rate center IL NOWHERE", true},
		{"duplicate TN", "ported.csv", miniFile("ported.csv") + "2025550123,2025569000,2002,\n", "ported.csv:6: column tn: 12025550123 listed twice (first on line 2)", true},
		{"duplicate block", "blocks.csv", miniFile("blocks.csv") + "202,555,3,2002,DC,WASHINGTON,,\n", "blocks.csv:9: column x: thousands-block 202-555-3 listed twice", true},
		{"malformed date", "ported.csv", miniFile("ported.csv") + "2025550199,2025569000,2002,2019-13-45\n", "ported.csv:6: column activated_at", true},
		{"16-character CNAM", "cnam.csv", miniFile("cnam.csv") + "12025550199,ABCDEFGHIJKLMNOP\n", "cnam.csv:4: column name", true},
		{"vacant TN", "ported.csv", miniFile("ported.csv") + "2025570001,2025569000,2002,\n", "ported.csv:6: column tn: 12025570001 is in no assigned code", true},
		{"missing required file", "carriers.csv", "", "required source file carriers.csv is missing", false},
		{"unknown time zone", "ratecenters.csv", miniFile("ratecenters.csv") + "TX,DALLAS,552,Dallas,Dallas,75201,Mars/Olympus\n", "ratecenters.csv:5: column timezone", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "t.lnpdb")
			_, err := build.Build(context.Background(), withFile(t, c.file, c.content), out, build.Options{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			entries, _ := os.ReadDir(dir)
			assert.Empty(t, entries, "a failed build leaves nothing behind")

			rep, err := build.Build(context.Background(), withFile(t, c.file, c.content), out, build.Options{SkipBadRows: true})
			if !c.skippable {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, 1, rep.Skipped)
			require.Len(t, rep.SkippedSample, 1)
			assert.Contains(t, rep.SkippedSample[0], c.want)
			db, err := format.OpenWriter(out, format.Verify())
			require.NoError(t, err)
			db.Close()
		})
	}
}

func TestDuplicateKeepsFirst(t *testing.T) {
	b, err := fs.ReadFile(mini, "ported.csv")
	require.NoError(t, err)
	src := withFile(t, "ported.csv", string(b)+"2025550123,3122009999,4004,\n")
	out := filepath.Join(t.TempDir(), "t.lnpdb")
	_, err = build.Build(context.Background(), src, out, build.Options{SkipBadRows: true})
	require.NoError(t, err)
	db, err := format.OpenWriter(out)
	require.NoError(t, err)
	defer db.Close()
	r, err := db.Get(2025550123, format.FieldPorted)
	require.NoError(t, err)
	assert.Equal(t, "12025569000", r.Ported.LRN, "the first record of a duplicated number is kept")
}

func TestNPACImporterBuildsIdenticalTable(t *testing.T) {
	npac := "1|2025550123|2025569000|2002|20190314150926|extra\r\n" +
		"2|2025550124|2025569000|3003|20261120100000\r\n" +
		"3|3122001234|3122009999|1001|\r\n" +
		"4|6023001111|6023017000|2002|20100601050000\r\n"
	src := withFile(t, "ported.csv", "")
	src["ported.npac"] = &fstest.MapFile{Data: []byte(npac)}
	built := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.lnpdb"), filepath.Join(dir, "b.lnpdb")
	_, err := build.Build(context.Background(), mini, a, build.Options{BuiltAt: built})
	require.NoError(t, err)
	_, err = build.Build(context.Background(), src, b, build.Options{BuiltAt: built})
	require.NoError(t, err)
	ab, err := os.ReadFile(a)
	require.NoError(t, err)
	bb, err := os.ReadFile(b)
	require.NoError(t, err)
	require.Equal(t, ab, bb, "ported.csv and ported.npac with the same records build identical tables")

	both := withFile(t, "ported.csv", string(ab[:0])+"tn,lrn,spid,activated_at\n")
	both["ported.npac"] = &fstest.MapFile{Data: []byte(npac)}
	_, err = build.Build(context.Background(), both, filepath.Join(dir, "c.lnpdb"), build.Options{})
	require.ErrorContains(t, err, "both ported.csv and ported.npac")
}

func TestBuildIsDeterministic(t *testing.T) {
	built := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	var files [][]byte
	for i := range 2 {
		p := filepath.Join(dir, strconv.Itoa(i))
		_, err := build.Build(context.Background(), lnpdb.Sample(), p, build.Options{BuiltAt: built})
		require.NoError(t, err)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		files = append(files, b)
	}
	require.Equal(t, files[0], files[1])
}

func TestBuildReplacesAtomically(t *testing.T) {
	out := filepath.Join(t.TempDir(), "t.lnpdb")
	_, err := build.Build(context.Background(), mini, out, build.Options{})
	require.NoError(t, err)
	before, err := os.ReadFile(out)
	require.NoError(t, err)
	_, err = build.Build(context.Background(), withFile(t, "carriers.csv", ""), out, build.Options{})
	require.Error(t, err)
	after, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, before, after, "a failed build leaves the old table untouched")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = build.Build(ctx, mini, out, build.Options{})
	require.ErrorIs(t, err, context.Canceled)
}
