package feed

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/format"
)

const latestView = "../../../testdata/npac/latest.sv.txt"

// TestReadNPACLatestView: the latest-view example's download reasons
// become A, U, D, A in Version Id order, and the same file reads the same through
// ReadAny and with LF line ends.
func TestReadNPACLatestView(t *testing.T) {
	body, err := os.ReadFile(latestView)
	require.NoError(t, err)
	ups, err := ParseNPAC(body)
	require.NoError(t, err)
	want := []format.Update{
		{Action: format.Add, TN: 3035551000, LRN: 3035550000, SPID: "0001", ActivatedAt: 1730419200, SVType: format.SVTypeWireless},
		{Action: format.Modify, TN: 3035551001, LRN: 3035550001, SPID: "0001", ActivatedAt: 1730419320, SVType: format.SVTypeWireline},
		{Action: format.Delete, TN: 3035551002, LRN: 3035550002, SPID: "0002", ActivatedAt: 1730419380, SVType: format.SVTypeWireless},
		{Action: format.Add, TN: 3035551005, LRN: 3035550002, SPID: "0002", ActivatedAt: 1730419260, SVType: format.SVTypeVoIP},
	} // in Version Id order: 1, 2, 3, 6
	assert.Equal(t, want, ups)
	checkUpdates(t, ups)

	for _, b := range [][]byte{body, bytes.ReplaceAll(body, []byte("\r"), []byte("\n")), append([]byte("\ufeff\r\n"), body...)} {
		var got []format.Update
		require.NoError(t, ReadAny(bytes.NewReader(b), "f", func(u format.Update) error { got = append(got, u); return nil }))
		assert.Equal(t, want, got)
	}
	var got []format.Update
	require.NoError(t, ReadAny(strings.NewReader("action,tn,lrn,spid,activated_at\nD,3035551002,,,\n"), "f",
		func(u format.Update) error { got = append(got, u); return nil }))
	assert.Equal(t, []format.Update{{Action: format.Delete, TN: 3035551002}}, got, "CSV through ReadAny")
}

func TestReadNPACRefuses(t *testing.T) {
	rec := func(lnpType, reason string) string {
		return "1|3035551000|3035550000|0001|20241101000000||||||||||||" + lnpType + "|" + reason + "\r"
	}
	for _, tt := range []struct{ body, want string }{
		{rec("0", "3"), "feed:1: column download_reason: not an activity (0 new, 1 delete, 2 modify): 3 (success/fail)"},
		{rec("0", ""), "feed:1: column download_reason: not an activity (0 new, 1 delete, 2 modify): empty"},
		{rec("0", "0") + "2|3031231000|3035550000|0001|\r", "feed:2: column tn: NXX 123 starts with 1"},
		{rec("0", "9"), "feed:1: column download_reason: not a number from 0 to 3"},
	} {
		_, err := ParseNPAC([]byte(tt.body))
		require.Error(t, err, tt.body)
		assert.Contains(t, err.Error(), tt.want)
	}
	ups, err := ParseNPAC([]byte(rec("2", "0")))
	require.NoError(t, err)
	assert.Empty(t, ups, "a pooled number's version is not an update")
}

func FuzzParseNPAC(f *testing.F) {
	body, err := os.ReadFile(latestView)
	require.NoError(f, err)
	f.Add(body)
	f.Add(bytes.ReplaceAll(body, []byte("\r"), []byte("\r\n")))
	f.Add([]byte("1|3035551000|3035550000|0001|20241101000000||||||||||||2|1\r"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		ups, err := ParseNPAC(b)
		if err != nil {
			require.Nil(t, ups)
			return
		}
		checkUpdates(t, ups)
		var again []format.Update
		if ReadAny(bytes.NewReader(b), "feed", func(u format.Update) error { again = append(again, u); return nil }) == nil && isNPAC(b) {
			require.Equal(t, ups, again)
		}
	})
}

// TestReadNPACVersionOrder: a number's two versions in one latest-view
// file are applied oldest first (by Version Id), whatever the file's order,
// so the number ends as its newest version leaves it.
func TestReadNPACVersionOrder(t *testing.T) {
	rec := func(id int, tn, reason string) string {
		return fmt.Sprintf("%d|%s|3035550000|0001|20241101000000||||||||||||0|%s\r", id, tn, reason)
	}
	body := rec(200, "3035551000", "0") + rec(150, "3035551001", "2") + rec(100, "3035551000", "1")
	ups, err := ParseNPAC([]byte(body))
	require.NoError(t, err)
	var got []string
	for _, u := range ups {
		got = append(got, fmt.Sprintf("%c %d", u.Action, u.TN))
	}
	assert.Equal(t, []string{"D 3035551000", "U 3035551001", "A 3035551000"}, got)
}

// TestFeedSVType: the CSV feed's optional sv_type column and the JSON
// feed's sv_type field (a string or an integer) carry the NPAC SV Type.
func TestFeedSVType(t *testing.T) {
	ups, err := ParseCSV([]byte("action,tn,lrn,spid,activated_at,sv_type\nA,2025550123,7327370999,0987,,4\nU,2025550124,7327370999,0987,,\n"))
	require.NoError(t, err)
	assert.Equal(t, []format.SVType{format.SVTypePrepaidWireless, format.SVTypeNone}, []format.SVType{ups[0].SVType, ups[1].SVType})

	ups, err = ParseJSON([]byte(`[{"action":"A","tn":"2025550123","lrn":"7327370999","spid":"0987","sv_type":2},` +
		`{"action":"A","tn":"2025550124","lrn":"7327370999","spid":"0987","sv_type":"0"},` +
		`{"action":"A","tn":"2025550125","lrn":"7327370999","spid":"0987","sv_type":null}]`))
	require.NoError(t, err)
	assert.Equal(t, []format.SVType{format.SVTypeVoIP, format.SVTypeWireline, format.SVTypeNone}, []format.SVType{ups[0].SVType, ups[1].SVType, ups[2].SVType})

	for body, want := range map[string]string{
		`[{"action":"A","tn":"2025550123","lrn":"7327370999","spid":"0987","sv_type":11}]`:   "update 1: sv_type: not a number from 0 to 10",
		`[{"action":"A","tn":"2025550123","lrn":"7327370999","spid":"0987","sv_type":-1}]`:   "sv_type must be a number from 0 to 10",
		`[{"action":"A","tn":"2025550123","lrn":"7327370999","spid":"0987","sv_type":true}]`: "sv_type must be a number from 0 to 10",
	} {
		_, err := ParseJSON([]byte(body))
		require.Error(t, err, body)
		assert.Contains(t, err.Error(), want, body)
	}
}
