package format_test

import (
	"encoding/csv"
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// oracle is a straightforward reading of a source directory with
// encoding/csv, independent of the builder, to check what a table answers.
type oracle struct {
	carriers map[string][]string // ocn → row
	rcs      map[string][]string // state|rate_center → row
	codes    map[uint64][]string // npa*1000+nxx → whole-code row
	thou     map[uint64][]string // npa*10000+nxx*10+x → thousands row
	ported   map[uint64][]string // tn → row (tn, lrn, spid, activated_at, sv_type)
	msg      map[uint64][]string
	cnam     map[uint64]string
	trust    map[uint64][]string
}

func readCSV(t testing.TB, fsys fs.FS, name string) (map[string]int, [][]string) {
	t.Helper()
	f, err := fsys.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	cols := map[string]int{}
	for i, h := range rows[0] {
		cols[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))] = i
	}
	return cols, rows[1:]
}

func tn10(t testing.TB, s string) uint64 {
	t.Helper()
	s = strings.TrimPrefix(s, "1")
	if len(s) == 11 {
		s = s[1:]
	}
	v, err := strconv.ParseUint(s, 10, 64)
	require.NoError(t, err)
	return v
}

// unixTime parses the source's time forms the obvious way.
func unixTime(t testing.TB, s string) int64 {
	t.Helper()
	if s == "" {
		return 0
	}
	if len(s) == 14 && !strings.ContainsAny(s, "-:T") {
		v, err := time.Parse("20060102150405", s)
		require.NoError(t, err)
		return v.Unix()
	}
	v, err := time.Parse(time.RFC3339, s)
	require.NoError(t, err)
	return v.Unix()
}

func loadOracle(t testing.TB, fsys fs.FS) *oracle {
	o := &oracle{carriers: map[string][]string{}, rcs: map[string][]string{}, codes: map[uint64][]string{}, thou: map[uint64][]string{},
		ported: map[uint64][]string{}, msg: map[uint64][]string{}, cnam: map[uint64]string{}, trust: map[uint64][]string{}}
	pick := func(cols map[string]int, row []string, names ...string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			if c, ok := cols[n]; ok && c < len(row) {
				out[i] = strings.TrimSpace(row[c])
			}
		}
		return out
	}
	cols, rows := readCSV(t, fsys, "carriers.csv")
	for _, r := range rows {
		v := pick(cols, r, "ocn", "name", "carrier_type", "messaging_provider", "messaging_enabled")
		o.carriers[v[0]] = v
	}
	cols, rows = readCSV(t, fsys, "ratecenters.csv")
	for _, r := range rows {
		v := pick(cols, r, "state", "rate_center", "lata", "city", "county", "zip_code", "timezone")
		o.rcs[v[0]+"|"+strings.ToUpper(v[1])] = v
	}
	cols, rows = readCSV(t, fsys, "blocks.csv")
	for _, r := range rows {
		v := pick(cols, r, "npa", "nxx", "x", "ocn", "state", "rate_center", "lrn", "activated_at")
		npa, _ := strconv.ParseUint(v[0], 10, 64)
		nxx, _ := strconv.ParseUint(v[1], 10, 64)
		if v[2] == "" || strings.EqualFold(v[2], "A") {
			o.codes[npa*1000+nxx] = v
		} else {
			x, _ := strconv.ParseUint(v[2], 10, 64)
			o.thou[npa*10000+nxx*10+x] = v
		}
	}
	cols, rows = readCSV(t, fsys, "ported.csv")
	for _, r := range rows {
		v := pick(cols, r, "tn", "lrn", "spid", "activated_at", "sv_type")
		o.ported[tn10(t, v[0])] = v
	}
	cols, rows = readCSV(t, fsys, "messaging.csv")
	for _, r := range rows {
		v := pick(cols, r, "tn", "provider", "enabled", "country", "country_code", "reference_id")
		o.msg[tn10(t, v[0])] = v
	}
	cols, rows = readCSV(t, fsys, "cnam.csv")
	for _, r := range rows {
		v := pick(cols, r, "tn", "name")
		o.cnam[tn10(t, v[0])] = v[1]
	}
	cols, rows = readCSV(t, fsys, "trust.csv")
	for _, r := range rows {
		v := pick(cols, r, "tn", "spam_type", "complaint_count", "first_reported", "last_reported")
		o.trust[tn10(t, v[0])] = v
	}
	return o
}

// blockRow returns the most specific block row of a number, or nil.
func (o *oracle) blockRow(tn uint64) []string {
	if r := o.thou[tn/1000]; r != nil {
		return r
	}
	return o.codes[tn/10000]
}

func parseBool(s string) bool {
	switch strings.ToLower(s) {
	case "true", "1", "y":
		return true
	}
	return false
}
