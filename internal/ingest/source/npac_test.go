package source

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/internal/core/lineio"
)

func TestReadPortedNPAC(t *testing.T) {
	want := []Ported{
		{TN: 2025550123, LRN: 2025550000, SPID: "AB1C", ActivatedAt: 1704164645, Line: 1},
		{TN: 3125550199, LRN: 3125550000, SPID: "6529", ActivatedAt: 0, Line: 3},
		{TN: 4155550100, LRN: 4155550000, SPID: "6529", ActivatedAt: 1704164645, Line: 4},
	}
	body := []string{
		"1001|2025550123|12025550000|ab1c|20240102030405|more|fields|",
		"",
		"1002| 13125550199 |3125550000|6529|",
		"1003|4155550100|4155550000|6529|2024-01-02T03:04:05Z",
	}
	for name, eol := range map[string]string{"LF": "\n", "CRLF": "\r\n", "CR": "\r"} {
		t.Run(name, func(t *testing.T) {
			input := strings.Join(body, eol)
			got, err := readAll(ReadPortedNPAC, input, Options{})
			require.NoError(t, err)
			assert.Equal(t, want, got)

			got, err = readAll(ReadPortedNPAC, "\ufeff"+input+eol+eol, Options{})
			require.NoError(t, err)
			assert.Equal(t, want, got, "with a BOM and a trailing empty line")
		})
	}
	t.Run("mixed line ends", func(t *testing.T) {
		got, err := readAll(ReadPortedNPAC, body[0]+"\r\r\n"+body[2]+"\n"+body[3]+"\r", Options{})
		require.NoError(t, err)
		assert.Equal(t, want, got)
	})

	t.Run("bad records", func(t *testing.T) {
		good := "1|2025550123|2025550000|AB1C|20240102030405"
		for _, tt := range []struct {
			line, column, reason string
		}{
			{"1|2025550123|2025550000|AB1C", "", "record has 4 fields, want at least 5"},
			{"2025550123", "", "record has 1 fields"},
			{"1||2025550000|AB1C|", "tn", "empty"},
			{"1|20255|2025550000|AB1C|", "tn", `not a 10-digit NANP number: "20255"`},
			{"1|2025550123x|2025550000|AB1C|", "tn", "not a 10-digit NANP number"},
			{"1|1115550123|2025550000|AB1C|", "tn", "10 digits starting with 1"},
			{"1|19115550123|2025550000|AB1C|", "tn", `NPA 911 is an N11 code, which is not a geographic area code: "19115550123"`},
			{"1|2905550123|2025550000|AB1C|", "tn", "NPA 290 is an N9X code"},
			{"1|" + strings.Repeat("2", 50) + "|2025550000|AB1C|", "tn", "not a 10-digit NANP number"},
			{"1|2025550123||AB1C|", "lrn", "empty"},
			{"1|2025550123|2021110000|AB1C|", "lrn", "NXX 111 starts with 1"},
			{"1|2025550123|2029110000|AB1C|", "lrn", "NXX 911 is an N11 code"},
			{"1|2025550123|2025550000||", "spid", "empty"},
			{"1|2025550123|2025550000|AB1|", "spid", "not 4 letters and digits"},
			{"1|2025550123|2025550000|AB1Ä|", "spid", "not 4 letters and digits"},
			{"1|2025550123|2025550000|AB1C|2024", "activated_at", "not an RFC 3339 or yyyymmddhhmmss time"},
			{"1|2025550123|2025550000|AB1C|19691231235959", "activated_at", "time before 1970"},
		} {
			input := good + "\n" + tt.line + "\r\n" + good + "\n"
			_, err := readAll(ReadPortedNPAC, input, Options{})
			requireRowError(t, err, 2, tt.column, tt.reason)

			got, skipped := readSkipping(t, ReadPortedNPAC, input)
			assert.Len(t, got, 2, tt.line)
			require.Len(t, skipped, 1)
			assert.Equal(t, err, error(skipped[0]))
		}
	})

	t.Run("long line", func(t *testing.T) {
		input := "1|2025550123|2025550000|AB1C|\n" + strings.Repeat("x", lineio.Max+1) + "\n1|2025550124|2025550000|AB1C|\n"
		_, err := readAll(ReadPortedNPAC, input, Options{})
		assert.ErrorIs(t, err, lineio.ErrTooLong)
		requireRowError(t, err, 2, "", "line longer than 1048576 bytes")
		got, skipped := readSkipping(t, ReadPortedNPAC, input)
		assert.Len(t, got, 2)
		require.Len(t, skipped, 1)
	})

	t.Run("callback error", func(t *testing.T) {
		stop := errors.New("stop")
		err := ReadPortedNPAC(strings.NewReader(body[0]+"\n"+body[0]), "f", Options{}, func(*Ported) error { return stop })
		assert.Same(t, stop, err)
	})
}

// TestPortedEquivalence: the CSV and NPAC shapes of the same data read to
// the same records.
func TestPortedEquivalence(t *testing.T) {
	var csvIn, npacIn strings.Builder
	csvIn.WriteString("tn,lrn,spid,activated_at\n")
	for i := range 1000 {
		tn := fmt.Sprintf("%d", 2025550000+i)
		if i%3 == 0 {
			tn = "1" + tn
		}
		lrn := fmt.Sprintf("1%d", 3125550000+i%7)
		spid := fmt.Sprintf("%04X", 0xA000+i%13)
		if i%2 == 0 {
			spid = strings.ToLower(spid)
		}
		ts := ""
		if i%5 != 0 {
			ts = fmt.Sprintf("2024%02d%02d%02d%02d%02d", 1+i%12, 1+i%28, i%24, i%60, (i*7)%60)
		}
		fmt.Fprintf(&csvIn, "%s,%s,%s,%s\n", tn, lrn, spid, ts)
		fmt.Fprintf(&npacIn, "%d|%s|%s|%s|%s|ignored|fields\n", 1_000_000+i, tn, lrn, spid, ts)
	}
	fromCSV, err := readAll(ReadPorted, csvIn.String(), Options{})
	require.NoError(t, err)
	fromNPAC, err := readAll(ReadPortedNPAC, npacIn.String(), Options{})
	require.NoError(t, err)
	require.Len(t, fromCSV, 1000)
	// Line numbers differ by the CSV header only.
	for i := range fromCSV {
		fromCSV[i].Line--
	}
	assert.Equal(t, fromCSV, fromNPAC)

	// The portedSpec good row, both ways.
	row := portedSpec.good
	got, err := readAll(ReadPortedNPAC, "7|"+strings.Join(row, "|")+"\n", Options{})
	require.NoError(t, err)
	assert.Equal(t, []Ported{portedSpec.wantAt(1)}, got)
}
