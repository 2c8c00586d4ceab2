package source

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/internal/core/lineio"
)

var updateGolden = flag.Bool("update", false, "rewrite the BDD golden files in testdata/npac")

const npacDir = "../../../testdata/npac"

// svView is an SV with its byte fields copied, for comparing and golden files.
type svView struct {
	VersionID                                 uint64
	TN, LRN                                   uint64
	SPID                                      string
	ActivatedAt                               int64
	CLASS, LIDB, ISVM, CNAM                   PointCode
	EndUserLocationValue, EndUserLocationType string
	BillingID                                 string
	LNPType                                   LNPType
	Reason                                    DownloadReason
	WSMSC                                     PointCode
	SVType                                    string
	AltSPID                                   string
	AltEndUserLocationValue                   string `json:",omitempty"`
	AltEndUserLocationType                    string `json:",omitempty"`
	AltBillingID                              string `json:",omitempty"`
	VoiceURI, MMSURI, PoCURI, PRESURI, SMSURI string `json:",omitempty"`
	LastAltSPID                               string `json:",omitempty"`
	Fields, Line                              int
}

func viewSV(v *SV) svView {
	return svView{
		VersionID: v.VersionID, TN: uint64(v.TN), LRN: uint64(v.LRN), SPID: v.SPID, ActivatedAt: v.ActivatedAt,
		CLASS: v.CLASS, LIDB: v.LIDB, ISVM: v.ISVM, CNAM: v.CNAM,
		EndUserLocationValue: string(v.EndUserLocationValue), EndUserLocationType: string(v.EndUserLocationType),
		BillingID: string(v.BillingID), LNPType: v.LNPType, Reason: v.Reason, WSMSC: v.WSMSC,
		SVType: v.SVType.String(), AltSPID: v.AltSPID,
		AltEndUserLocationValue: string(v.AltEndUserLocationValue), AltEndUserLocationType: string(v.AltEndUserLocationType),
		AltBillingID: string(v.AltBillingID), VoiceURI: string(v.VoiceURI), MMSURI: string(v.MMSURI),
		PoCURI: string(v.PoCURI), PRESURI: string(v.PRESURI), SMSURI: string(v.SMSURI), LastAltSPID: v.LastAltSPID,
		Fields: v.Fields, Line: v.Line,
	}
}

// readSVViews is ReadSubscriptionVersions with stable copies of the records.
func readSVViews(r io.Reader, file string, opt Options, fn func(*svView) error) error {
	return ReadSubscriptionVersions(r, file, opt, func(v *SV) error {
		w := viewSV(v)
		return fn(&w)
	})
}

// goldenRead is what a reader gives for a file with SkipBadRows: the
// records and the rejected records with their reasons.
type goldenRead[T any] struct {
	Records  []T
	Rejected []string `json:",omitempty"`
}

func checkGolden[T any](t *testing.T, read readFunc[T], name string) goldenRead[T] {
	t.Helper()
	return checkGoldenIn(t, read, npacDir, name)
}

func checkGoldenIn[T any](t *testing.T, read readFunc[T], dir, name string) goldenRead[T] {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	var got goldenRead[T]
	err = read(bytes.NewReader(data), name, Options{SkipBadRows: true, OnSkip: func(e *RowError) {
		got.Rejected = append(got.Rejected, e.Error())
	}}, func(v *T) error {
		got.Records = append(got.Records, *v)
		return nil
	})
	require.NoError(t, err)
	out, err := json.MarshalIndent(got, "", "  ")
	require.NoError(t, err)
	out = append(out, '\n')
	golden := filepath.Join(dir, strings.TrimSuffix(name, ".txt")+".golden.json")
	if *updateGolden {
		require.NoError(t, os.WriteFile(golden, out, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run go test -update to write it")
	assert.Equal(t, string(want), string(out), name)

	// The same records with LF and CRLF line ends.
	for _, eol := range []string{"\n", "\r\n"} {
		var again goldenRead[T]
		lf := bytes.ReplaceAll(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
		err := read(bytes.NewReader(bytes.ReplaceAll(lf, []byte("\n"), []byte(eol))), name,
			Options{SkipBadRows: true, OnSkip: func(e *RowError) { again.Rejected = append(again.Rejected, e.Error()) }},
			func(v *T) error { again.Records = append(again.Records, *v); return nil })
		require.NoError(t, err)
		assert.Equal(t, got, again, "%s with line ends %q", name, eol)
	}
	return got
}

func TestBDDGolden(t *testing.T) {
	t.Run("figure E-1 as published", func(t *testing.T) {
		// The FRS example is not NANP data (NXX 123 starts with 1) and
		// its records have the errors NANC 314 corrects: every record is
		// rejected, each with its reason.
		got := checkGolden(t, readSVViews, "figure-e1.sv.txt")
		assert.Empty(t, got.Records)
		assert.Len(t, got.Rejected, 3)
	})
	t.Run("subscription versions", func(t *testing.T) {
		got := checkGolden(t, readSVViews, "active.sv.txt")
		require.Len(t, got.Records, 5)
		// Release 1 record: 18 fields, nothing later.
		assert.Equal(t, 18, got.Records[0].Fields)
		assert.Equal(t, "none", got.Records[0].SVType)
		assert.False(t, got.Records[0].WSMSC.Set)
		assert.Equal(t, PointCode{DPC: 1<<16 | 1<<8 | 4, Set: true}, got.Records[0].CNAM)
		// Every field of the current release.
		last := got.Records[4]
		assert.Equal(t, 31, last.Fields)
		assert.Equal(t, "class2-interconnected-voip", last.SVType)
		assert.Equal(t, "0003", last.AltSPID)
		assert.Equal(t, "0003", last.LastAltSPID)
		assert.Equal(t, "sms:s", last.SMSURI)
		assert.Equal(t, PointCode{DPC: 1<<16 | 1<<8 | 2, Set: true}, last.LIDB)
	})
	t.Run("latest view", func(t *testing.T) {
		got := checkGolden(t, readSVViews, "latest.sv.txt")
		var reasons []DownloadReason
		for _, r := range got.Records {
			reasons = append(reasons, r.Reason)
		}
		assert.Equal(t, []DownloadReason{ReasonNew, ReasonNew, ReasonModify, ReasonDelete}, reasons)
	})
	t.Run("number pool blocks", func(t *testing.T) {
		got := checkGolden(t, ReadPoolBlocks, "active.nbp.txt")
		require.Len(t, got.Records, 3)
		assert.Equal(t, [3]int{303, 555, 3}, [3]int{got.Records[1].NPA, got.Records[1].NXX, got.Records[1].X})
		assert.Equal(t, ReasonUnknown, got.Records[2].Reason)
	})
	t.Run("SPIDs", func(t *testing.T) {
		got := checkGolden(t, ReadServiceProviders, "spid.txt")
		require.Len(t, got.Records, 4)
		assert.Equal(t, SPTypeClass1InterconnectedVoIP, got.Records[2].Type)
		assert.Equal(t, SPTypeNone, got.Records[3].Type)
	})
	t.Run("LRNs", func(t *testing.T) { checkGolden(t, ReadNetworkLRNs, "lrn.txt") })
	t.Run("NPA-NXX", func(t *testing.T) { checkGolden(t, ReadNetworkNPANXX, "npanxx.txt") })
	t.Run("NPA-NXX-X", func(t *testing.T) { checkGolden(t, ReadNetworkNPANXXX, "npanxxx.txt") })
}

func TestReadSubscriptionVersionsBad(t *testing.T) {
	good := "1|2025550123|2025550000|AB1C|20240102030405"
	for _, tt := range []struct{ line, column, reason string }{
		{"1|2025550123|2025550000|AB1C", "", "record has 4 fields, want at least 5"},
		{"x|2025550123|2025550000|AB1C|", "version_id", "not 1 to 19 digits"},
		{"1|2021230123|2025550000|AB1C|", "tn", "NXX 123 starts with 1"},
		{"1|2025550123||AB1C|", "lrn", "empty"},
		{"1|2025550123|2025550000|AB1|", "spid", "not 4 letters and digits"},
		{"1|2025550123|2025550000|AB1C|2024", "activated_at", "not an RFC 3339"},
		{good + "|123456789|0", "class_dpc", "not a point code"},
		{good + "|001001001|", "class_ssn", "not a subsystem number"},
		{good + "|001001001|256", "class_ssn", "not a subsystem number"},
		{good + "||0", "class_dpc", "not a point code"},
		{good + "|1-2|0", "class_dpc", "not a point code"},
		{good + "|1-2-3-4|0", "class_dpc", "not a point code"},
		{good + "|1-2-1234|0", "class_dpc", "not a point code"},
		{svWith(svCNAMDPC, "001", svCNAMSSN, "0"), "cnam_dpc", "not a point code"},
		{svWith(svLNPType, "3"), "lnp_type", "not a number from 0 to 2"},
		{svWith(svReason, "4"), "download_reason", "not a number from 0 to 3"},
		{svWith(svReason, "-1"), "download_reason", "not a number from 0 to 3"},
		{svWith(svWSMSCDPC, "1"), "wsmsc_dpc", "not a point code"},
		{svWith(svSVType, "11"), "sv_type", "not a number from 0 to 10"},
		{svWith(svSVType, "001"), "sv_type", "not a number from 0 to 10"},
		{svWith(svAltSPID, "AB"), "alt_spid", "not 4 letters and digits"},
		{svWith(svAltSPID, "AB1C", svLastAltSPID, "x"), "last_alt_spid", "not 4 letters and digits"},
	} {
		input := good + "\r" + tt.line + "\r" + good + "\r"
		_, err := readAll(readSVViews, input, Options{})
		requireRowError(t, err, 2, tt.column, tt.reason)

		got, skipped := readSkipping(t, readSVViews, input)
		assert.Len(t, got, 2, tt.line)
		require.Len(t, skipped, 1)
		assert.Equal(t, err, error(skipped[0]))
	}

	t.Run("more fields than any release", func(t *testing.T) {
		got, err := readAll(readSVViews, good+strings.Repeat("|", 60)+"\n", Options{})
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, 65, got[0].Fields)
	})
	t.Run("callback error", func(t *testing.T) {
		stop := errors.New("stop")
		err := ReadSubscriptionVersions(strings.NewReader(good+"\n"+good), "f", Options{}, func(*SV) error { return stop })
		assert.Same(t, stop, err)
	})
	t.Run("long line", func(t *testing.T) {
		input := good + "\n" + strings.Repeat("x", lineio.Max+1) + "\n" + good
		_, err := readAll(readSVViews, input, Options{})
		assert.ErrorIs(t, err, lineio.ErrTooLong)
		requireRowError(t, err, 2, "", "line longer than 1048576 bytes")
		got, skipped := readSkipping(t, readSVViews, input)
		assert.Len(t, got, 2)
		require.Len(t, skipped, 1)
		assert.Equal(t, err, error(skipped[0]))
	})
}

func TestReadNetworkBad(t *testing.T) {
	for _, tt := range []struct {
		read         func(string) error
		line, column string
		reason       string
	}{
		{npaNXX, "1|0001|30355", "npa_nxx", "not an NPA-NXX of 6 digits"},
		{npaNXX, "1|0001|3035551", "npa_nxx", "not an NPA-NXX of 6 digits"},
		{npaNXX, "1|0001|303-55-5", "npa_nxx", "not an NPA-NXX of 6 digits"},
		{npaNXX, "1|0001|103555", "npa_nxx", "NPA 103 starts with 1"},
		{npaNXX, "1|0001|303911", "npa_nxx", "NXX 911 is an N11 code"},
		{npaNXX, "1|0001|303555|x", "effective_at", "not an RFC 3339"},
		{npaNXX, "1|0001", "", "record has 2 fields, want at least 3"},
		{npaNXXX, "1|0001|303555", "npa_nxx_x", "not an NPA-NXX-X of 7 digits"},
		{npaNXXX, "1||3035551", "spid", "empty"},
		{lrns, "1|0001|303555000", "lrn", "not a 10-digit NANP number"},
		{lrns, "1|0001|3035550000|1", "created_at", "not an RFC 3339"},
		{spids, "0001||0", "name", "empty"},
		{spids, "0001|X|6", "sp_type", "not a number from 0 to 5"},
		{blocks, "1|3035551|3035550000|0001|", "", ""},
		{blocks, "1|303555|3035550000|0001|", "npa_nxx_x", "not an NPA-NXX-X"},
		{blocks, blockWith(blkReason, "9"), "download_reason", "not a number from 0 to 3"},
		{blocks, blockWith(blkSVType, "x"), "sv_type", "not a number from 0 to 10"},
		{blocks, blockWith(blkAltSPID, "x"), "alt_spid", "not 4 letters and digits"},
		{blocks, blockWith(blkWSMSCDPC, "1", blkWSMSCSSN, "1"), "wsmsc_dpc", "not a point code"},
	} {
		err := tt.read(tt.line)
		if tt.reason == "" {
			assert.NoError(t, err, tt.line)
			continue
		}
		requireRowError(t, err, 1, tt.column, tt.reason)
	}
}

// svWith is a good subscription version record with fields set: pairs of
// a 0-based position and its value.
func svWith(kv ...any) string { return recordWith("1|2025550123|2025550000|AB1C|20240102030405", kv) }

func blockWith(kv ...any) string { return recordWith("1|2025551|2025550000|AB1C|20240102030405", kv) }

func recordWith(base string, kv []any) string {
	f := strings.Split(base, "|")
	for i := 0; i < len(kv); i += 2 {
		pos := kv[i].(int)
		for len(f) <= pos {
			f = append(f, "")
		}
		f[pos] = kv[i+1].(string)
	}
	return strings.Join(f, "|")
}

func npaNXX(s string) error  { return readOne(ReadNetworkNPANXX, s) }
func npaNXXX(s string) error { return readOne(ReadNetworkNPANXXX, s) }
func lrns(s string) error    { return readOne(ReadNetworkLRNs, s) }
func spids(s string) error   { return readOne(ReadServiceProviders, s) }
func blocks(s string) error  { return readOne(ReadPoolBlocks, s) }

func readOne[T any](read readFunc[T], line string) error {
	_, err := readAll(read, line+"\r", Options{})
	return err
}

// TestBDDAllocs: a subscription version or pool block record costs no
// allocation, whatever fields it has.
func TestBDDAllocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("instrumented build")
	}
	data, err := os.ReadFile(filepath.Join(npacDir, "active.sv.txt"))
	require.NoError(t, err)
	var big bytes.Buffer
	for i := range 2000 {
		for _, rec := range bytes.Split(bytes.TrimSuffix(data, []byte("\r")), []byte("\r")) {
			fmt.Fprintf(&big, "%d%s\r", i, rec[bytes.IndexByte(rec, '|'):])
		}
	}
	n := 0
	allocs := testing.AllocsPerRun(3, func() {
		n = 0
		err = ReadSubscriptionVersions(bytes.NewReader(big.Bytes()), "f", Options{}, func(*SV) error { n++; return nil })
	})
	require.Equal(t, 10000, n)
	require.NoError(t, err)
	assert.Less(t, allocs, 50.0, "10000 records")

	blk, err := os.ReadFile(filepath.Join(npacDir, "active.nbp.txt"))
	require.NoError(t, err)
	blk = bytes.Repeat(blk, 3000)
	allocs = testing.AllocsPerRun(3, func() {
		err = ReadPoolBlocks(bytes.NewReader(blk), "f", Options{}, func(*PoolBlock) error { return nil })
	})
	require.NoError(t, err)
	assert.Less(t, allocs, 50.0, "9000 records")
}

func BenchmarkReadSubscriptionVersions(b *testing.B) {
	_, p := benchData()
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		if err := ReadSubscriptionVersions(bytes.NewReader(p), "f", Options{}, func(*SV) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
