package source

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/internal/core/nanp"
	"github.com/lnpdb/lnpdb/internal/core/spamtype"
)

// accountingSeeds are inputs every reader's fuzz target starts from: the
// shapes that once lost lines (a quote that does not close, a line end
// inside quotes, line ends of every kind, blank lines, a long line).
var accountingSeeds = []string{
	"tn,lrn,spid,activated_at\n\"2025550123,2025550000,AB1C,\n2025550124,2025550000,AB1C,\n\n",
	"State\tNPA-NXX\tOCN\tCompany\tRateCenter\tUse\nCO\t303-555\t0001\t\"OPEN\tDENVER\tAS\r\nCO\t303-556\t0001\tX\tDENVER\tAS\rCO\t303-557\t0001\tX\tDENVER\tAS",
	"a,b\r\n\"x\ny\",z\r\r\n  \n" + strings.Repeat("w", 300) + "\n",
	"1|2025550123|2025550000|AB1C|\r|\"|\n\n1|2",
}

// requireAccounted holds a read to the rule that every line is accounted
// for: lines = header + blank + rows + skipped; rows and skipped are the
// callback's and OnSkip's calls; and a read that ends without an error
// has read every line of the input.
func requireAccounted(t *testing.T, data []byte, c Count, rows, skipped int, err error) {
	t.Helper()
	require.Equal(t, c.Lines, c.Header+c.Blank+c.Rows+c.Skipped, "every line counted once: %+v", c)
	require.LessOrEqual(t, c.Header, 1)
	if err != nil {
		return
	}
	require.Equal(t, rows, c.Rows, "rows handed to the callback")
	require.Equal(t, skipped, c.Skipped, "rows skipped")
	text := bytes.TrimPrefix(data, []byte("\ufeff"))
	text = bytes.ReplaceAll(bytes.ReplaceAll(text, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
	lines := bytes.Count(text, []byte("\n"))
	if len(text) > 0 && text[len(text)-1] != '\n' {
		lines++
	}
	require.Equal(t, lines, c.Lines, "every line of the input read")
}

// fuzzReader fuzzes a reader: every line is accounted for (requireAccounted); it never panics; every row it accepts passes
// check, which returns the row's line; lines increase; every row error names
// f.csv and a line; and reading without SkipBadRows gives the same rows up to
// the first row error, which is the first one skipped.
func fuzzReader[T any](f *testing.F, read readFunc[T], seeds []string, check func(*testing.T, *T) int) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	for _, s := range accountingSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var rows []T
		var skipped []*RowError
		last := 0
		var count Count
		err := read(bytes.NewReader(data), "f.csv", Options{Count: &count, SkipBadRows: true, OnSkip: func(e *RowError) {
			require.Equal(t, "f.csv", e.File)
			require.Positive(t, e.Line)
			require.NotEmpty(t, e.Reason)
			skipped = append(skipped, e)
		}}, func(v *T) error {
			line := check(t, v)
			require.Greater(t, line, last, "lines increase")
			last = line
			rows = append(rows, *v)
			return nil
		})
		var re *RowError
		require.False(t, errors.As(err, &re), "a row error with SkipBadRows: %v", err)
		requireAccounted(t, data, count, len(rows), len(skipped), err)

		strict, strictErr := readAll(read, string(data), Options{})
		if err != nil {
			require.Equal(t, err.Error(), strictErr.Error(), "fatal errors do not depend on SkipBadRows")
			return
		}
		if len(skipped) == 0 {
			require.NoError(t, strictErr)
			require.Equal(t, rows, strict)
			return
		}
		require.Equal(t, skipped[0], strictErr)
		require.LessOrEqual(t, len(strict), len(rows))
		for i := range strict {
			require.Equal(t, rows[i], strict[i])
		}
	})
}

func checkNumber(t *testing.T, n nanp.Number, optional bool) {
	if optional && n == 0 {
		return
	}
	require.True(t, n.Valid(), "number %d", n)
}

func checkCode(t *testing.T, s string) {
	require.Len(t, s, 4)
	for _, c := range []byte(s) {
		require.True(t, '0' <= c && c <= '9' || 'A' <= c && c <= 'Z', "code %q", s)
	}
}

func checkTime(t *testing.T, v int64) {
	require.True(t, v >= 0 && v < maxTime, "time %d", v)
}

func checkUpper(t *testing.T, s string, n int) {
	require.Len(t, s, n)
	for _, c := range []byte(s) {
		require.True(t, 'A' <= c && c <= 'Z', "letters %q", s)
	}
}

func checkText(t *testing.T, s string, required bool) {
	require.True(t, !required || s != "", "empty")
	require.Equal(t, strings.TrimSpace(s), s, "trimmed")
	require.True(t, utf8.ValidString(s), "UTF-8 %q", s)
	for _, c := range []byte(s) {
		require.True(t, c >= 0x20 && c != 0x7f, "control character in %q", s)
	}
}

func checkDigits(t *testing.T, s string, min, max int) {
	require.True(t, len(s) >= min && len(s) <= max, "digits %q", s)
	for _, c := range []byte(s) {
		require.True(t, '0' <= c && c <= '9', "digits %q", s)
	}
}

func seeds(header string, rows ...string) []string {
	out := []string{"", header, header + "\n" + strings.Join(rows, "\n") + "\n",
		"\ufeff" + strings.ReplaceAll(header+"\n"+strings.Join(rows, "\n"), "\n", "\r\n")}
	for _, r := range rows {
		out = append(out, header+"\n"+r+"\n")
	}
	return out
}

func FuzzReadCarriers(f *testing.F) {
	fuzzReader(f, ReadCarriers, seeds("ocn,name,carrier_type,messaging_provider,messaging_enabled",
		`AB1C,"Acme, Inc.",WIRELESS,Syniverse,Y`, "ab1c,Acme,CLEC,,", "ABC,x,y,z,maybe", `1234,"a""b",ILEC,P,false`),
		func(t *testing.T, v *Carrier) int {
			checkCode(t, v.OCN)
			checkText(t, v.Name, true)
			checkText(t, v.Type, true)
			checkText(t, v.MessagingProvider, false)
			return v.Line
		})
}

func FuzzReadRateCenters(f *testing.F) {
	fuzzReader(f, ReadRateCenters, seeds("state,rate_center,lata,city,county,zip_code,timezone",
		"DC,WASHINGTON,236,Washington,District of Columbia,20001,America/New_York",
		"il,CHICAGO,358,,,60601,America/Chicago", "XX,A,1,,,00000,Local", "TX,A,1,,,12345,UTC"),
		func(t *testing.T, v *RateCenter) int {
			checkUpper(t, v.State, 2)
			checkText(t, v.Name, true)
			checkDigits(t, v.LATA, 1, 5)
			checkText(t, v.City, false)
			checkText(t, v.County, false)
			checkDigits(t, v.ZIP, 5, 5)
			require.NotEmpty(t, v.TimeZone)
			require.NotEqual(t, "Local", v.TimeZone)
			return v.Line
		})
}

func FuzzReadBlocks(f *testing.F) {
	fuzzReader(f, ReadBlocks, seeds("npa,nxx,x,ocn,state,rate_center,lrn,activated_at",
		"202,555,,AB1C,DC,WASHINGTON,,", "202,555,3,ab1c,dc,WASHINGTON,12025550000,2024-01-02T03:04:05Z",
		"202,555,A,AB1C,DC,WASHINGTON,2025550000,20240102030405", "102,055,B,AB,D,,20255,x",
		"911,555,,AB1C,DC,W,,", "290,555,,AB1C,DC,W,,", "999,555,,AB1C,DC,W,,", "202,911,,AB1C,DC,W,,",
		"202,555,,AB1C,DC,W,19115550000,"),
		func(t *testing.T, v *Block) int {
			// A lookup's rules: no row names a code a lookup refuses.
			require.True(t, nanp.ValidNPA(v.NPA), "npa %d", v.NPA)
			require.True(t, nanp.ValidNXX(v.NXX), "nxx %d", v.NXX)
			require.True(t, v.X >= -1 && v.X <= 9, "x %d", v.X)
			checkCode(t, v.OCN)
			checkUpper(t, v.State, 2)
			checkText(t, v.RateCenter, true)
			checkNumber(t, v.LRN, true)
			checkTime(t, v.ActivatedAt)
			return v.Line
		})
}

func checkPorted(t *testing.T, v *Ported) int {
	checkNumber(t, v.TN, false)
	checkNumber(t, v.LRN, false)
	checkCode(t, v.SPID)
	checkTime(t, v.ActivatedAt)
	require.LessOrEqual(t, v.SVType, maxSVType)
	return v.Line
}

func FuzzReadPorted(f *testing.F) {
	fuzzReader(f, ReadPorted, append(seeds("tn,lrn,spid,activated_at",
		"2025550123,12025550000,AB1C,20240102030405", "12025550124,2025550000,ab1c,",
		"2025550125,2025550000,6529,2024-01-02T03:04:05-05:00", "1115550123,20255,AB,2024-13-01T00:00:00Z",
		"19115550123,2025550000,AB1C,", "2025550123,12905550000,AB1C,", "12029110123,2025550000,AB1C,"),
		seeds("tn,lrn,spid,activated_at,sv_type", "2025550123,2025550000,AB1C,,1", "2025550124,2025550000,AB1C,,",
			"2025550125,2025550000,AB1C,,10", "2025550126,2025550000,AB1C,,11", "2025550127,2025550000,AB1C,,-1")...),
		checkPorted)
}

func FuzzReadPortedNPAC(f *testing.F) {
	fuzzReader(f, ReadPortedNPAC, []string{
		"", "\n\r\n\r",
		"1|2025550123|12025550000|AB1C|20240102030405\n2|2025550124|2025550000|ab1c||x|y\n",
		"1|2025550123|12025550000|AB1C|20240102030405\r2|1115550123|2025550000|AB|19691231235959\r",
		"\ufeff1|2025550123|2025550000|6529|2024-01-02T03:04:05Z\r\n|||\r\n",
		"1|19115550123|2025550000|AB1C|\n2|2025550123|9995550000|AB1C|\n3|2029110123|2025550000|AB1C|\n",
	}, checkPorted)
}

func FuzzReadMessaging(f *testing.F) {
	fuzzReader(f, ReadMessaging, seeds("tn,provider,enabled,country,country_code,reference_id",
		"12025550123,Syniverse,true,US,1,ref-1", "2025550124,,0,us,1,", `2025550125,"P, Inc.",Y,CA,1,"a,b"`,
		"2025550126,P,maybe,USA,1234,x"),
		func(t *testing.T, v *Messaging) int {
			checkNumber(t, v.TN, false)
			checkText(t, v.Provider, false)
			checkUpper(t, v.Country, 2)
			checkDigits(t, v.CountryCode, 1, 3)
			checkText(t, v.ReferenceID, false)
			return v.Line
		})
}

func FuzzReadCNAM(f *testing.F) {
	fuzzReader(f, ReadCNAM, seeds("tn,name",
		"2025550123,ACME INC", `12025550124," ABCDEFGHIJKLMNO "`, "2025550125,ABCDEFGHIJKLMNOP", "2025550126,CAFÉ"),
		func(t *testing.T, v *CNAM) int {
			checkNumber(t, v.TN, false)
			require.True(t, len(v.Name) >= 1 && len(v.Name) <= MaxCNAMLen, "name %q", v.Name)
			require.Equal(t, strings.TrimSpace(v.Name), v.Name)
			for _, c := range []byte(v.Name) {
				require.True(t, c >= 0x20 && c <= 0x7e, "name %q", v.Name)
			}
			return v.Line
		})
}

func FuzzReadTrust(f *testing.F) {
	fuzzReader(f, ReadTrust, seeds("tn,spam_type,complaint_count,first_reported,last_reported",
		"2025550123,ROBOCALL,42,2024-01-01T00:00:00Z,20240201000000", "2025550124,,0,,",
		"2025550125,spam,4294967295,20240201000000,2024-01-01T00:00:00Z", "2025550126,JUNK,-1,x,y"),
		func(t *testing.T, v *Trust) int {
			checkNumber(t, v.TN, false)
			require.Contains(t, []string{spamtype.None, spamtype.Spam, spamtype.Scam, spamtype.Robocall, spamtype.Telemarketer}, v.SpamType)
			checkTime(t, v.FirstReported)
			checkTime(t, v.LastReported)
			if v.FirstReported != 0 && v.LastReported != 0 {
				require.LessOrEqual(t, v.FirstReported, v.LastReported)
			}
			return v.Line
		})
}

func FuzzReadUpdates(f *testing.F) {
	fuzzReader(f, ReadUpdates, seeds("action,tn,lrn,spid,activated_at,sv_type",
		"A,2025550123,2025550000,AB1C,20240102030405,2", "u,12025550123,12025550000,ab1c,,", "D,2025550123,,,,",
		"X,2025550123,,,,", "A,2025550123,,AB1C,,", "A,2025550123,2025550000,AB1C,,x"),
		func(t *testing.T, v *Update) int {
			require.Contains(t, []byte{ActionAdd, ActionUpdate, ActionDelete}, v.Action)
			checkNumber(t, v.TN, false)
			if v.Action == ActionDelete {
				checkNumber(t, v.LRN, true)
				if v.SPID != "" {
					checkCode(t, v.SPID)
				}
			} else {
				checkNumber(t, v.LRN, false)
				checkCode(t, v.SPID)
			}
			checkTime(t, v.ActivatedAt)
			require.LessOrEqual(t, v.SVType, maxSVType)
			return v.Line
		})
}

// bddSeeds are the example files of testdata/npac named, and the usual
// edge cases, as fuzz seeds.
func bddSeeds(f *testing.F, names ...string) []string {
	out := []string{"", "\r\n\r", "|||", "\ufeff1|2|3|4|5\r"}
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(npacDir, name))
		require.NoError(f, err)
		out = append(out, string(data), strings.ReplaceAll(string(data), "\r", "\n"))
	}
	return out
}

func checkPointCode(t *testing.T, pc PointCode) {
	if !pc.Set {
		require.Zero(t, pc)
	}
	require.Less(t, pc.DPC, uint32(1<<24))
}

func FuzzReadSubscriptionVersions(f *testing.F) {
	fuzzReader(f, readSVViews, bddSeeds(f, "figure-e1.sv.txt", "active.sv.txt", "latest.sv.txt"),
		func(t *testing.T, v *svView) int {
			checkNumber(t, nanp.Number(v.TN), false)
			checkNumber(t, nanp.Number(v.LRN), false)
			checkCode(t, v.SPID)
			checkTime(t, v.ActivatedAt)
			for _, pc := range []PointCode{v.CLASS, v.LIDB, v.ISVM, v.CNAM, v.WSMSC} {
				checkPointCode(t, pc)
			}
			require.True(t, v.LNPType >= LNPTypeUnknown && v.LNPType <= LNPTypePool)
			require.True(t, v.Reason >= ReasonUnknown && v.Reason <= ReasonSuccessFail)
			for _, s := range []string{v.AltSPID, v.LastAltSPID} {
				if s != "" {
					checkCode(t, s)
				}
			}
			require.GreaterOrEqual(t, v.Fields, 5)
			return v.Line
		})
}

func FuzzReadPoolBlocks(f *testing.F) {
	fuzzReader(f, ReadPoolBlocks, bddSeeds(f, "active.nbp.txt"), func(t *testing.T, v *PoolBlock) int {
		require.NoError(t, nanp.CheckNPA(v.NPA))
		require.NoError(t, nanp.CheckNXX(v.NXX))
		require.True(t, v.X >= 0 && v.X <= 9)
		checkNumber(t, v.LRN, false)
		checkCode(t, v.SPID)
		checkTime(t, v.ActivatedAt)
		for _, pc := range []PointCode{v.CLASS, v.LIDB, v.ISVM, v.CNAM, v.WSMSC} {
			checkPointCode(t, pc)
		}
		require.LessOrEqual(t, v.SVType, maxSVType)
		return v.Line
	})
}

func FuzzReadServiceProviders(f *testing.F) {
	fuzzReader(f, ReadServiceProviders, bddSeeds(f, "spid.txt"), func(t *testing.T, v *ServiceProvider) int {
		checkCode(t, v.SPID)
		require.NotEmpty(t, v.Name)
		require.Equal(t, strings.TrimSpace(v.Name), v.Name)
		require.True(t, v.Type >= SPTypeNone && v.Type <= maxSPType)
		return v.Line
	})
}

func FuzzReadNetworkLRNs(f *testing.F) {
	fuzzReader(f, ReadNetworkLRNs, bddSeeds(f, "lrn.txt"), func(t *testing.T, v *NetworkLRN) int {
		checkCode(t, v.SPID)
		checkNumber(t, v.LRN, false)
		checkTime(t, v.CreatedAt)
		return v.Line
	})
}

func checkNetworkCode(t *testing.T, v *NetworkCode, withX bool) int {
	checkCode(t, v.SPID)
	require.NoError(t, nanp.CheckNPA(v.NPA))
	require.NoError(t, nanp.CheckNXX(v.NXX))
	if withX {
		require.True(t, v.X >= 0 && v.X <= 9)
	} else {
		require.Equal(t, -1, v.X)
	}
	checkTime(t, v.EffectiveAt)
	checkTime(t, v.CreatedAt)
	return v.Line
}

func FuzzReadNetworkNPANXX(f *testing.F) {
	fuzzReader(f, ReadNetworkNPANXX, bddSeeds(f, "npanxx.txt", "npanxxx.txt"), func(t *testing.T, v *NetworkCode) int {
		return checkNetworkCode(t, v, false)
	})
}

func FuzzReadNetworkNPANXXX(f *testing.F) {
	fuzzReader(f, ReadNetworkNPANXXX, bddSeeds(f, "npanxxx.txt", "npanxx.txt"), func(t *testing.T, v *NetworkCode) int {
		return checkNetworkCode(t, v, true)
	})
}
