package source

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/internal/core/nanp"
	"github.com/lnpdb/lnpdb/internal/core/spamtype"
)

// Bad numbers every TN and LRN column rejects.
func badNumbers(col string, required bool) []badValue {
	b := []badValue{
		{col, "20255", `not a 10-digit NANP number: "20255"`},
		{col, "202555012345", "not a 10-digit NANP number"},
		{col, "22025550123", "not a 10-digit NANP number"},
		{col, "1115550123", "10 digits starting with 1"},
		{col, "11115550123", `NPA 111 starts with 1, but an area code starts with 2-9: "11115550123"`},
		{col, "2025550123x", "not a 10-digit NANP number"},
		{col, "+12025550123", "not a 10-digit NANP number"},
		{col, "202-555-0123", "not a 10-digit NANP number"},
		{col, "2021110123", "NXX 111 starts with 1, but an exchange code starts with 2-9"},
		{col, "2029110123", "NXX 911 is an N11 code"},
		{col, "2925550123", "NPA 292 is an N9X code"},
		{col, "19115550123", "NPA 911 is an N11 code, which is not a geographic area code"},
		{col, "9995550123", "NPA 999 is an N9X code"},
	}
	if required {
		b = append(b, badValue{col, "", "empty"})
	}
	return b
}

func badCodes(col string) []badValue {
	return []badValue{
		{col, "", "empty"}, {col, "ABC", "not 4 letters and digits"},
		{col, "ABCDE", "not 4 letters"}, {col, "AB-C", "not 4 letters"},
		{col, "AB C", "not 4 letters"}, {col, "ÄBC", "not 4 letters"},
	}
}

func badTimes(col string) []badValue {
	return []badValue{
		{col, "yesterday", "not an RFC 3339 or yyyymmddhhmmss time"},
		{col, "2024-02-30T00:00:00Z", "not an RFC 3339"},
		{col, "1969-12-31T23:59:59Z", "time before 1970 or after 2105"},
		{col, "21060101000000", "time before 1970 or after 2105"},
	}
}

func TestReadCarriers(t *testing.T) {
	spec := fileSpec[Carrier]{
		read:     ReadCarriers,
		cols:     []string{"ocn", "name", "carrier_type", "messaging_provider", "messaging_enabled"},
		good:     []string{"ab1c", `Acme, "Wireless" Inc.`, "WIRELESS", "Syniverse", "y"},
		want:     Carrier{OCN: "AB1C", Name: `Acme, "Wireless" Inc.`, Type: "WIRELESS", MessagingProvider: "Syniverse", MessagingEnabled: true},
		setLine:  func(v *Carrier, l int) { v.Line = l },
		required: []string{"ocn", "name", "carrier_type"},
		bad: append(badCodes("ocn"),
			badValue{"name", "", "empty"},
			badValue{"name", "Acme\x01", "control character"},
			badValue{"name", "Acme\xff", "not valid UTF-8"},
			badValue{"carrier_type", " ", "empty"},
			badValue{"messaging_provider", "a\tb", "control character"},
			badValue{"messaging_enabled", "yes", "not one of true/false/1/0/Y/N"},
			badValue{"messaging_enabled", "2", "not one of"},
		),
	}
	spec.run(t)

	t.Run("optional columns", func(t *testing.T) {
		got, err := readAll(ReadCarriers, "carrier_type,ocn,name\nCLEC,9999,Zeta Telecom\n", Options{})
		require.NoError(t, err)
		assert.Equal(t, []Carrier{{OCN: "9999", Name: "Zeta Telecom", Type: "CLEC", Line: 2}}, got)

		got, err = readAll(ReadCarriers, spec.cols[0]+","+strings.Join(spec.cols[1:], ",")+"\n1234,Zeta,ILEC,,\n", Options{})
		require.NoError(t, err)
		assert.Equal(t, []Carrier{{OCN: "1234", Name: "Zeta", Type: "ILEC", Line: 2}}, got)
	})

	t.Run("SPIDs and providers are shared", func(t *testing.T) {
		got, err := readAll(ReadCarriers, "ocn,name,carrier_type,messaging_provider\nab1c,A,W,P\nAB1C,B,W,P\n", Options{})
		require.NoError(t, err)
		require.Len(t, got, 2)
		assert.Equal(t, "AB1C", got[0].OCN)
		assert.Equal(t, "AB1C", got[1].OCN)
		assert.Equal(t, "P", got[1].MessagingProvider)
	})
}

func TestReadRateCenters(t *testing.T) {
	spec := fileSpec[RateCenter]{
		read: ReadRateCenters,
		cols: []string{"state", "rate_center", "lata", "city", "county", "zip_code", "timezone"},
		good: []string{"dc", "WASHINGTON", "236", "Washington", "District of Columbia, DC", "20001", "America/New_York"},
		want: RateCenter{State: "DC", Name: "WASHINGTON", LATA: "236", City: "Washington",
			County: "District of Columbia, DC", ZIP: "20001", TimeZone: "America/New_York"},
		setLine:  func(v *RateCenter, l int) { v.Line = l },
		required: []string{"state", "rate_center", "lata", "city", "county", "zip_code", "timezone"},
		bad: []badValue{
			{"state", "", "empty"}, {"state", "D", "not 2 letters"}, {"state", "DCX", "not 2 letters"},
			{"state", "D1", "not 2 letters"},
			{"rate_center", "", "empty"}, {"rate_center", "A\x01B", "control character"},
			{"lata", "", "empty"}, {"lata", "23a", "not 1 to 5 digits"}, {"lata", "123456", "not 1 to 5 digits"},
			{"city", "\x7f", "control character"}, {"county", "\x00", "control character"},
			{"zip_code", "", "empty"}, {"zip_code", "2000", "not 5 digits"}, {"zip_code", "200011", "not 5 digits"},
			{"zip_code", "2000a", "not 5 digits"},
			{"timezone", "", "empty"}, {"timezone", "America/Nowhere", "not an IANA time zone name"},
			{"timezone", "Local", "not an IANA"}, {"timezone", "../../etc/passwd", "not an IANA"},
			{"timezone", "/usr/share/zoneinfo/UTC", "not an IANA"},
		},
	}
	spec.run(t)

	t.Run("empty city and county", func(t *testing.T) {
		got, err := readAll(ReadRateCenters, csvFile(false, spec.cols, spec.with("city", "")), Options{})
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Empty(t, got[0].City)

		got, err = readAll(ReadRateCenters, csvFile(false, spec.cols, spec.with("timezone", "America/Chicago"),
			spec.with("timezone", "Bad/Zone"), spec.with("timezone", "America/Chicago"), spec.with("timezone", "Bad/Zone")),
			Options{SkipBadRows: true})
		require.NoError(t, err)
		require.Len(t, got, 2, "cached answers are the same as fresh ones")
		assert.Equal(t, "America/Chicago", got[1].TimeZone)
	})
}

func TestReadBlocks(t *testing.T) {
	spec := fileSpec[Block]{
		read: ReadBlocks,
		cols: []string{"npa", "nxx", "x", "ocn", "state", "rate_center", "lrn", "activated_at"},
		good: []string{"202", "555", "3", "ab1c", "dc", "WASHINGTON, DC", "12025550000", "2024-01-02T03:04:05Z"},
		want: Block{NPA: 202, NXX: 555, X: 3, OCN: "AB1C", State: "DC", RateCenter: "WASHINGTON, DC",
			LRN: 2025550000, ActivatedAt: 1704164645},
		setLine:  func(v *Block, l int) { v.Line = l },
		required: []string{"npa", "nxx", "x", "ocn", "state", "rate_center"},
		bad: append(append(append([]badValue{
			{"npa", "", "not 3 digits [2-9]XX"}, {"npa", "102", "NPA 102 starts with 1, but an area code starts with 2-9"},
			{"npa", "20", "not 3 digits"}, {"npa", "2020", "not 3 digits"}, {"npa", "2a2", "not 3 digits"},
			{"npa", "911", "NPA 911 is an N11 code, which is not a geographic area code"},
			{"npa", "290", "NPA 290 is an N9X code, reserved for expanding the numbering plan"},
			{"npa", "999", "NPA 999 is an N9X code"}, {"npa", "211", "NPA 211 is an N11 code"},
			{"nxx", "055", "NXX 055 starts with 0, but an exchange code starts with 2-9"}, {"nxx", "", "not 3 digits"},
			{"nxx", "911", "NXX 911 is an N11 code"}, {"nxx", "411", "NXX 411 is an N11 code"},
			{"x", "B", "not a digit, empty or A"}, {"x", "10", "not a digit"}, {"x", "-1", "not a digit"},
			{"x", "AA", "not a digit"},
			{"state", "d", "not 2 letters"},
			{"rate_center", "", "empty"},
		}, badCodes("ocn")...), badNumbers("lrn", false)...), badTimes("activated_at")...),
	}
	spec.run(t)

	t.Run("x", func(t *testing.T) {
		for x, want := range map[string]int{"": -1, "A": -1, "a": -1, " A ": -1, "0": 0, "9": 9} {
			got, err := readAll(ReadBlocks, csvFile(false, spec.cols, spec.with("x", x)), Options{})
			require.NoError(t, err, x)
			assert.Equal(t, want, got[0].X, x)
		}
	})

	t.Run("NANP rules", func(t *testing.T) {
		// The rows a lookup could never reach are refused with the file,
		// the line, the column and the rule.
		for _, tc := range []struct{ row, msg string }{
			{"911,555,,AB1C,DC,W", "blocks.csv:3: column npa: NPA 911 is an N11 code, which is not a geographic area code"},
			{"290,555,,AB1C,DC,W", "blocks.csv:3: column npa: NPA 290 is an N9X code, reserved for expanding the numbering plan, not a geographic area code"},
			{"999,555,,AB1C,DC,W", "blocks.csv:3: column npa: NPA 999 is an N9X code, reserved for expanding the numbering plan, not a geographic area code"},
			{"202,911,,AB1C,DC,W", "blocks.csv:3: column nxx: NXX 911 is an N11 code, which is reserved for service codes such as 411 and 911 and never assigned as an exchange code"},
		} {
			in := "npa,nxx,x,ocn,state,rate_center\n202,555,,AB1C,DC,W\n" + tc.row + "\n"
			err := ReadBlocks(strings.NewReader(in), "blocks.csv", Options{}, func(*Block) error { return nil })
			require.EqualError(t, err, tc.msg)
			assert.ErrorIs(t, err, nanp.ErrInvalid)
		}
	})

	t.Run("optional columns", func(t *testing.T) {
		got, err := readAll(ReadBlocks, "npa,nxx,x,ocn,state,rate_center\n202,555,,1234,DC,WASHINGTON\n", Options{})
		require.NoError(t, err)
		assert.Equal(t, []Block{{NPA: 202, NXX: 555, X: -1, OCN: "1234", State: "DC", RateCenter: "WASHINGTON", Line: 2}}, got)

		got, err = readAll(ReadBlocks, csvFile(false, spec.cols, spec.with("lrn", ""), spec.with("activated_at", "")), Options{})
		require.NoError(t, err)
		assert.Zero(t, got[0].LRN)
		assert.Zero(t, got[1].ActivatedAt)
	})
}

var portedSpec = fileSpec[Ported]{
	read:     ReadPorted,
	cols:     []string{"tn", "lrn", "spid", "activated_at"},
	good:     []string{"2025550123", "12025550000", "ab1c", "20240102030405"},
	want:     Ported{TN: 2025550123, LRN: 2025550000, SPID: "AB1C", ActivatedAt: 1704164645},
	setLine:  func(v *Ported, l int) { v.Line = l },
	required: []string{"tn", "lrn", "spid", "activated_at"},
	bad: append(append(append(badNumbers("tn", true), badNumbers("lrn", true)...),
		badCodes("spid")...), badTimes("activated_at")...),
}

func TestReadPorted(t *testing.T) {
	portedSpec.run(t)

	t.Run("error message", func(t *testing.T) {
		_, err := readAll(ReadPorted, csvFile(false, portedSpec.cols, portedSpec.with("lrn", "20255")), Options{})
		assert.EqualError(t, err, `f.csv:2: column lrn: not a 10-digit NANP number: "20255"`)
		assert.ErrorIs(t, err, nanp.ErrInvalid)

		_, err = readAll(ReadPorted, csvFile(false, portedSpec.cols, portedSpec.with("tn", "9115550123")), Options{})
		assert.EqualError(t, err, `f.csv:2: column tn: NPA 911 is an N11 code, which is not a geographic area code: "9115550123"`)
		assert.ErrorIs(t, err, nanp.ErrInvalid)
		var re *nanp.RuleError
		require.ErrorAs(t, err, &re)
		assert.Equal(t, "NPA", re.Part)
		assert.Equal(t, 911, re.Code)

		_, err = readAll(ReadPorted, csvFile(false, portedSpec.cols, portedSpec.with("tn", strings.Repeat("9", 100))), Options{})
		assert.ErrorContains(t, err, `"`+strings.Repeat("9", 40)+`"...`, "long values are cut short")
	})
}

func TestReadMessaging(t *testing.T) {
	spec := fileSpec[Messaging]{
		read: ReadMessaging,
		cols: []string{"tn", "provider", "enabled", "country", "country_code", "reference_id"},
		good: []string{"12025550123", "Syniverse, Inc.", "TRUE", "us", "1", "ref-1, \"a\""},
		want: Messaging{TN: 2025550123, Provider: "Syniverse, Inc.", Enabled: true, Country: "US",
			CountryCode: "1", ReferenceID: "ref-1, \"a\""},
		setLine:  func(v *Messaging, l int) { v.Line = l },
		required: []string{"tn", "provider", "enabled", "country", "country_code", "reference_id"},
		bad: append(badNumbers("tn", true),
			badValue{"provider", "a\x1bb", "control character"},
			badValue{"enabled", "", "not one of true/false/1/0/Y/N"},
			badValue{"enabled", "on", "not one of"},
			badValue{"country", "", "empty"}, badValue{"country", "USA", "not 2 letters"},
			badValue{"country", "U1", "not 2 letters"},
			badValue{"country_code", "", "empty"}, badValue{"country_code", "1234", "not 1 to 3 digits"},
			badValue{"country_code", "+1", "not 1 to 3 digits"},
			badValue{"reference_id", "a\x1bb", "control character"},
		),
	}
	spec.run(t)

	got, err := readAll(ReadMessaging, csvFile(false, spec.cols, spec.with("enabled", "0"), spec.with("provider", "")), Options{})
	require.NoError(t, err)
	assert.False(t, got[0].Enabled)
	assert.Empty(t, got[1].Provider)
}

func TestReadCNAM(t *testing.T) {
	spec := fileSpec[CNAM]{
		read:     ReadCNAM,
		cols:     []string{"tn", "name"},
		good:     []string{"2025550123", "  ACME, INC.  "},
		want:     CNAM{TN: 2025550123, Name: "ACME, INC."},
		setLine:  func(v *CNAM, l int) { v.Line = l },
		required: []string{"tn", "name"},
		bad: append(badNumbers("tn", true),
			badValue{"name", "", "empty"},
			badValue{"name", "    ", "empty"},
			badValue{"name", "ABCDEFGHIJKLMNOP", "name is 16 characters, longer than 15"},
			badValue{"name", " ABCDEFGHIJKLMNOPQRSTUVWXYZ ", "name is 26 characters, longer than 15"},
			badValue{"name", "CAFÉ", "not printable ASCII"},
			badValue{"name", "A\tB", "not printable ASCII"},
			badValue{"name", "ÉÉÉÉÉÉÉÉÉÉÉÉÉÉÉÉ", "16 characters"},
		),
	}
	spec.run(t)

	got, err := readAll(ReadCNAM, csvFile(false, spec.cols, spec.with("name", " ABCDEFGHIJKLMNO "), spec.with("name", "~")), Options{})
	require.NoError(t, err)
	assert.Equal(t, "ABCDEFGHIJKLMNO", got[0].Name, "15 characters after trimming")
	assert.Equal(t, "~", got[1].Name)
}

func TestReadTrust(t *testing.T) {
	spec := fileSpec[Trust]{
		read:     ReadTrust,
		cols:     []string{"tn", "spam_type", "complaint_count", "first_reported", "last_reported"},
		good:     []string{"2025550123", "robocall", "4294967295", "2024-01-01T00:00:00-05:00", "20240201000000"},
		want:     Trust{TN: 2025550123, SpamType: spamtype.Robocall, Complaints: 4294967295, FirstReported: 1704085200, LastReported: 1706745600},
		setLine:  func(v *Trust, l int) { v.Line = l },
		required: []string{"tn", "spam_type", "complaint_count", "first_reported", "last_reported"},
		bad: append(append(append(badNumbers("tn", true),
			badValue{"spam_type", "JUNK", "not NONE, SPAM, SCAM, ROBOCALL or TELEMARKETER"},
			badValue{"spam_type", "SPAMS", "not NONE"},
			badValue{"complaint_count", "", "not a whole number below 2^32"},
			badValue{"complaint_count", "-1", "not a whole number"},
			badValue{"complaint_count", "+1", "not a whole number"},
			badValue{"complaint_count", "1.5", "not a whole number"},
			badValue{"complaint_count", "1_000", "not a whole number"},
			badValue{"complaint_count", "4294967296", "not a whole number below 2^32"},
			badValue{"last_reported", "2023-12-31T00:00:00Z", "before first_reported"},
		), badTimes("first_reported")...), badTimes("last_reported")...),
	}
	spec.run(t)

	for in, want := range map[string]string{"": spamtype.None, "none": spamtype.None, "Spam": spamtype.Spam, "SCAM": spamtype.Scam,
		"telemarketer": spamtype.Telemarketer, "ROBOCALL": spamtype.Robocall} {
		got, err := readAll(ReadTrust, csvFile(false, spec.cols, spec.with("spam_type", in)), Options{})
		require.NoError(t, err, in)
		assert.Equal(t, want, got[0].SpamType, in)
	}
	got, err := readAll(ReadTrust, csvFile(false, spec.cols,
		spec.with("first_reported", ""), spec.with("last_reported", ""), spec.with("complaint_count", "007")), Options{})
	require.NoError(t, err)
	assert.Zero(t, got[0].FirstReported)
	assert.Zero(t, got[1].LastReported)
	assert.EqualValues(t, 7, got[2].Complaints)
}

func TestReadUpdates(t *testing.T) {
	spec := fileSpec[Update]{
		read:     ReadUpdates,
		cols:     []string{"action", "tn", "lrn", "spid", "activated_at"},
		good:     []string{"u", "2025550123", "2025550000", "ab1c", "2024-01-02T03:04:05Z"},
		want:     Update{Action: ActionUpdate, TN: 2025550123, LRN: 2025550000, SPID: "AB1C", ActivatedAt: 1704164645},
		setLine:  func(v *Update, l int) { v.Line = l },
		required: []string{"action", "tn", "lrn", "spid", "activated_at"},
		bad: append(append(append(append([]badValue{
			{"action", "", "not A, U or D"}, {"action", "X", "not A, U or D"}, {"action", "add", "not A, U or D"},
		}, badNumbers("tn", true)...), badNumbers("lrn", true)...), badCodes("spid")...), badTimes("activated_at")...),
	}
	spec.run(t)

	got, err := readAll(ReadUpdates, "action,tn,lrn,spid,activated_at\n"+
		"A,2025550123,2025550000,1234,\n"+
		"d,2025550123,,,\n"+
		"D,2025550124,2025550000,abcd,20240102030405\n", Options{})
	require.NoError(t, err)
	assert.Equal(t, []Update{
		{Action: ActionAdd, TN: 2025550123, LRN: 2025550000, SPID: "1234", Line: 2},
		{Action: ActionDelete, TN: 2025550123, Line: 3},
		{Action: ActionDelete, TN: 2025550124, LRN: 2025550000, SPID: "ABCD", ActivatedAt: 1704164645, Line: 4},
	}, got)

	for _, row := range []string{"D,,,,", "D,2025550123,123,,", "D,2025550123,,12,", "D,2025550123,,,x", "A,2025550123,,1234,", "A,2025550123,2025550000,,"} {
		_, err := readAll(ReadUpdates, "action,tn,lrn,spid,activated_at\n"+row+"\n", Options{})
		var re *RowError
		assert.ErrorAs(t, err, &re, row)
	}
}

// TestSVTypeColumn: ported.csv and the update feed take the NPAC SV Type
// in an optional sv_type column, as a subscription version's field 21 is
// read: 0 to 10, empty for none.
func TestSVTypeColumn(t *testing.T) {
	var got []SVType
	err := ReadPorted(strings.NewReader("tn,lrn,spid,activated_at,sv_type\n2025550123,2025550000,AB1C,,1\n2025550124,2025550000,AB1C,,\n2025550125,2025550000,AB1C,,10\n"),
		"ported.csv", Options{}, func(p *Ported) error { got = append(got, p.SVType); return nil })
	require.NoError(t, err)
	assert.Equal(t, []SVType{SVTypeWireless, SVTypeNone, maxSVType}, got)

	got = nil
	err = ReadUpdates(strings.NewReader("action,tn,lrn,spid,activated_at,sv_type\nA,2025550123,2025550000,AB1C,,3\nD,2025550124,,,,\n"),
		"feed", Options{}, func(u *Update) error { got = append(got, u.SVType); return nil })
	require.NoError(t, err)
	assert.Equal(t, []SVType{SVTypeVoWiFi, SVTypeNone}, got)

	for _, bad := range []string{"11", "-1", "x", "001"} {
		err = ReadPorted(strings.NewReader("tn,lrn,spid,activated_at,sv_type\n2025550123,2025550000,AB1C,,"+bad+"\n"),
			"ported.csv", Options{}, func(*Ported) error { return nil })
		var re *RowError
		require.ErrorAs(t, err, &re, bad)
		assert.Equal(t, "sv_type", re.Column)
		assert.Contains(t, re.Reason, "not a number from 0 to 10", bad)
	}
}
