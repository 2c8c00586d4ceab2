package source

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTime(t *testing.T) {
	unix := func(s string) int64 {
		tm, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err)
		return tm.Unix()
	}
	tests := []struct {
		in   string
		want int64
		err  error
	}{
		{"", 0, nil},
		{"20240102030405", unix("2024-01-02T03:04:05Z"), nil},
		{"2024-01-02T03:04:05Z", unix("2024-01-02T03:04:05Z"), nil},
		{"2024-01-02t03:04:05z", unix("2024-01-02T03:04:05Z"), nil},
		{"2024-01-02T03:04:05.999999999Z", unix("2024-01-02T03:04:05Z"), nil},
		{"2024-01-02T03:04:05+05:30", unix("2024-01-01T21:34:05Z"), nil},
		{"2024-01-02T03:04:05-08:00", unix("2024-01-02T11:04:05Z"), nil},
		{"2024-02-29T00:00:00Z", unix("2024-02-29T00:00:00Z"), nil},
		{"20000229000000", unix("2000-02-29T00:00:00Z"), nil},
		{"1970-01-01T00:00:00Z", 0, nil},
		{"19700101000001", 1, nil},
		{"2105-12-31T23:59:59Z", maxTime - 1, nil},
		{"21051231235959", maxTime - 1, nil},

		{"2106-01-01T00:00:00Z", 0, ErrTimeRange},
		{"21060101000000", 0, ErrTimeRange},
		{"1969-12-31T23:59:59Z", 0, ErrTimeRange},
		{"19691231235959", 0, ErrTimeRange},
		{"1970-01-01T00:30:00+01:00", 0, ErrTimeRange},
		{"2105-12-31T23:59:59-00:01", 0, ErrTimeRange},

		{"2023-02-29T00:00:00Z", 0, ErrTimeSyntax},
		{"20230229000000", 0, ErrTimeSyntax},
		{"20241301000000", 0, ErrTimeSyntax},
		{"20240100000000", 0, ErrTimeSyntax},
		{"20240101240000", 0, ErrTimeSyntax},
		{"20240101006000", 0, ErrTimeSyntax},
		{"20240101000060", 0, ErrTimeSyntax},
		{"2024010100000a", 0, ErrTimeSyntax},
		{"2024-01-02 03:04:05Z", 0, ErrTimeSyntax},
		{"2024-01-02T03:04:05", 0, ErrTimeSyntax},
		{"2024-01-02T03:04:05.Z", 0, ErrTimeSyntax},
		{"2024-01-02T03:04:05,5Z", 0, ErrTimeSyntax},
		{"2024-01-02T03:04:05+0530", 0, ErrTimeSyntax},
		{"2024-01-02T03:04:05+24:00", 0, ErrTimeSyntax},
		{"2024-01-02T03:04:05+05:60", 0, ErrTimeSyntax},
		{"2024-01-02T03:04:60Z", 0, ErrTimeSyntax},
		{"2024-1-02T03:04:05Z", 0, ErrTimeSyntax},
		{"+024-01-02T03:04:05Z", 0, ErrTimeSyntax},
		{"2024-01-02", 0, ErrTimeSyntax},
		{"1704164645", 0, ErrTimeSyntax},
		{"yesterday", 0, ErrTimeSyntax},
		{" 20240102030405", 0, ErrTimeSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTime(tt.in)
			if tt.err != nil {
				assert.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			gotBytes, err := parseTime([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.want, gotBytes, "bytes")
		})
	}
}

// fixedWidth reports whether s starts with digits where RFC 3339 puts them:
// YYYY-MM-DDTHH:MM:SS.
// rfc3339Offset reports whether s ends in Z or in a numeric offset whose
// hours are 00–23 and minutes 00–59, as RFC 3339's time-numoffset requires.
func rfc3339Offset(s string) bool {
	if strings.HasSuffix(s, "Z") || strings.HasSuffix(s, "z") {
		return true
	}
	if len(s) < 6 {
		return false
	}
	o := s[len(s)-6:]
	if (o[0] != '+' && o[0] != '-') || o[3] != ':' {
		return false
	}
	return o[1] <= '2' && (o[1] < '2' || o[2] <= '3') && o[4] <= '5'
}

func fixedWidth(s string) bool {
	if len(s) < 20 {
		return false
	}
	for _, i := range []int{0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18} {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func TestDaysFromCivil(t *testing.T) {
	for d := time.Date(1969, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() < 2107; d = d.AddDate(0, 0, 1) {
		require.Equal(t, d.Unix()/86400, daysFromCivil(d.Year(), int(d.Month()), d.Day()), d.Format(time.DateOnly))
	}
	for _, y := range []int{0, 1, 399, 400, 1600, 9999} {
		d := time.Date(y, 2, 28, 0, 0, 0, 0, time.UTC)
		require.Equal(t, d.Unix()/86400, daysFromCivil(y, 2, 28), y)
	}
}

func TestParseBool(t *testing.T) {
	for _, s := range []string{"true", "TRUE", "True", "1", "Y", "y"} {
		got, err := ParseBool(s)
		require.NoError(t, err, s)
		assert.True(t, got, s)
	}
	for _, s := range []string{"false", "FALSE", "fAlSe", "0", "N", "n"} {
		got, err := ParseBool(s)
		require.NoError(t, err, s)
		assert.False(t, got, s)
	}
	for _, s := range []string{"", "yes", "no", "t", "f", "2", "truee", " true", "ture"} {
		_, err := ParseBool(s)
		assert.ErrorIs(t, err, ErrBool, s)
	}
}

func FuzzParseTime(f *testing.F) {
	for _, s := range []string{
		"", "20240102030405", "2024-01-02T03:04:05Z", "2024-01-02T03:04:05.5+05:30",
		"1970-01-01T00:00:00Z", "2105-12-31T23:59:59Z", "2106-01-01T00:00:00Z",
		"2024-02-30T00:00:00Z", "2024-01-02t03:04:05z", "99999999999999",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTime(s)
		// What the standard library reads as RFC 3339 in range, so do we,
		// if it has RFC 3339's fixed-width fields (the library also takes a
		// one-digit hour, a comma before fractional seconds, and offsets of
		// 24 hours or 60 minutes, which RFC 3339 does not allow).
		if std, stdErr := time.Parse(time.RFC3339, s); stdErr == nil && std.Unix() >= 0 && std.Unix() < maxTime &&
			fixedWidth(s) && !strings.Contains(s, ",") && rfc3339Offset(s) {
			require.NoError(t, err, "%q", s)
			require.Equal(t, std.Unix(), got, "%q", s)
		}
		gotBytes, errBytes := parseTime([]byte(s))
		require.Equal(t, got, gotBytes)
		require.Equal(t, err, errBytes)
		if err != nil {
			require.True(t, err == ErrTimeSyntax || err == ErrTimeRange, "%v", err)
			return
		}
		require.True(t, got >= 0 && got < maxTime, "%d out of range", got)
		if s == "" {
			require.Zero(t, got)
			return
		}
		// Every accepted time means what the standard library says it means.
		var want time.Time
		if len(s) == 14 {
			want, err = time.Parse("20060102150405", s)
		} else {
			norm := []byte(s)
			norm[10] = 'T'
			if norm[len(norm)-1] == 'z' {
				norm[len(norm)-1] = 'Z'
			}
			want, err = time.Parse(time.RFC3339, string(norm))
		}
		require.NoError(t, err, "accepted %q", s)
		require.Equal(t, want.Unix(), got, "%q", s)
		require.False(t, strings.ContainsAny(s, " ,"), "%q", s)
	})
}
