package gen

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
	_ "time/tzdata" // the checks load every rate center's IANA zone

	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/internal/core/nanp"
)

// The rows of a generated directory as the checks read them back.
type (
	carrierRow struct{ name, ctype, provider, enabled string }
	rcRow      struct{ lata, city, tz string }
	blockRow   struct {
		ocn, state, rc, lrn string
		at                  time.Time
	}
	portedRow struct {
		lrn, spid string
		at        time.Time
		npac      bool // activated_at written as yyyymmddhhmmss
	}
	msgRow   struct{ provider, enabled, refID string }
	trustRow struct {
		spamType    string
		complaints  int
		first, last time.Time
	}
)

type dirData struct {
	carriers    map[string]carrierRow
	rateCenters map[string]rcRow    // state|rate_center
	codes       map[int]blockRow    // npa*1000+nxx: the whole-code row
	blocks      map[int]blockRow    // (npa*1000+nxx)*10+x
	ported      map[int64]portedRow // 10-digit TN
	messaging   map[int64]msgRow
	cnam        map[int64]string
	trust       map[int64]trustRow
}

var (
	ocnRE   = regexp.MustCompile(`^[0-9A-Z]{4}$`)
	cnamRE  = regexp.MustCompile(`^[A-Z][A-Z' ]*[A-Z]$`)
	zipRE   = regexp.MustCompile(`^[0-9]{5}$`)
	lataRE  = regexp.MustCompile(`^[0-9]{3}$`)
	digitRE = regexp.MustCompile(`^[0-9]+$`)
)

func readCSV(t *testing.T, dir, name, header string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, name))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err, name)
	require.NotEmpty(t, rows, name)
	want, err := csv.NewReader(stringsReader(header)).Read()
	require.NoError(t, err)
	require.Equal(t, want, rows[0], "%s header", name)
	return rows[1:]
}

// parseTN checks a 10-digit (or 11 with a leading 1) NANP number and returns
// it as 10 digits.
func parseTN(t *testing.T, s string) int64 {
	t.Helper()
	if len(s) == 11 && s[0] == '1' {
		s = s[1:]
	}
	require.Len(t, s, 10, "number %q", s)
	require.Regexp(t, digitRE, s)
	n, _ := strconv.ParseInt(s, 10, 64)
	npa, nxx := int(n/10_000_000), int(n/10_000%1000)
	require.True(t, nanp.ValidNPA(npa), "NPA of %s", s)
	require.True(t, nanp.ValidNXX(nxx), "NXX of %s", s)
	return n
}

func parseWhen(t *testing.T, s string) (time.Time, bool) {
	t.Helper()
	if len(s) == 14 {
		v, err := time.Parse("20060102150405", s)
		require.NoError(t, err)
		return v, true
	}
	v, err := time.Parse(time.RFC3339, s)
	require.NoError(t, err)
	return v, false
}

// readDir reads a generated directory back with encoding/csv and checks
// every rule DATA.md sets and the shape gen promises.
func readDir(t *testing.T, dir string) *dirData {
	t.Helper()
	d := &dirData{
		carriers: map[string]carrierRow{}, rateCenters: map[string]rcRow{},
		codes: map[int]blockRow{}, blocks: map[int]blockRow{},
		ported: map[int64]portedRow{}, messaging: map[int64]msgRow{},
		cnam: map[int64]string{}, trust: map[int64]trustRow{},
	}
	for _, r := range readCSV(t, dir, FileCarriers, "ocn,name,carrier_type,messaging_provider,messaging_enabled") {
		require.Regexp(t, ocnRE, r[0])
		_, dup := d.carriers[r[0]]
		require.False(t, dup, "duplicate OCN: %v", r[0])
		require.Contains(t, []string{typeWireless, typeILEC, typeCLEC, typeVOIP}, r[2])
		require.NotEmpty(t, r[1])
		require.Equal(t, r[3] == "", r[4] == "", "provider and enabled go together: %v", r)
		if r[4] != "" {
			require.Contains(t, []string{"true", "false"}, r[4])
		}
		d.carriers[r[0]] = carrierRow{name: r[1], ctype: r[2], provider: r[3], enabled: r[4]}
	}
	for _, r := range readCSV(t, dir, FileRateCenters, "state,rate_center,lata,city,county,zip_code,timezone") {
		key := r[0] + "|" + r[1]
		_, dup := d.rateCenters[key]
		require.False(t, dup, "duplicate rate center: %v", key)
		require.Regexp(t, lataRE, r[2])
		require.Regexp(t, zipRE, r[5])
		_, err := time.LoadLocation(r[6])
		require.NoError(t, err, "time zone of %s", key)
		d.rateCenters[key] = rcRow{lata: r[2], city: r[3], tz: r[6]}
	}
	for _, r := range readCSV(t, dir, FileBlocks, "npa,nxx,x,ocn,state,rate_center,lrn,activated_at") {
		npa, _ := strconv.Atoi(r[0])
		nxx, _ := strconv.Atoi(r[1])
		require.True(t, nanp.ValidNPA(npa) && nanp.ValidNXX(nxx), "%v", r)
		require.True(t, d.hasCarrier(r[3]), "block OCN %s", r[3])
		_, rcOK := d.rateCenters[r[4]+"|"+r[5]]
		require.True(t, rcOK, "block rate center")
		b := blockRow{ocn: r[3], state: r[4], rc: r[5], lrn: r[6]}
		code := npa*1000 + nxx
		if r[2] == "" {
			require.Empty(t, r[6], "a whole-code row has no LRN")
			_, dup := d.codes[code]
			require.False(t, dup, "duplicate code: %v", code)
			d.codes[code] = b
			continue
		}
		x, err := strconv.Atoi(r[2])
		require.NoError(t, err)
		require.True(t, x >= 0 && x <= 9)
		whole, ok := d.codes[code]
		require.True(t, ok, "block row before or without its code row: %v", r)
		require.Equal(t, whole.state+whole.rc, b.state+b.rc, "a block lies in its code's rate center")
		_, dup := d.blocks[code*10+x]
		require.False(t, dup, "duplicate block: %v", code*10+x)
		require.Equal(t, r[6] == "", r[7] == "", "lrn and activated_at go together: %v", r)
		if r[7] != "" {
			b.at, _ = parseWhen(t, r[7])
		}
		d.blocks[code*10+x] = b
	}
	for _, r := range readCSV(t, dir, FilePorted, "tn,lrn,spid,activated_at,sv_type") {
		tn := parseTN(t, r[0])
		require.Contains(t, []string{"", "0", "1", "2", "3", "4", "5"}, r[4], "sv_type of %s", r[0])
		_, dup := d.ported[tn]
		require.False(t, dup, "duplicate ported TN: %v", tn)
		require.True(t, d.hasCarrier(r[2]), "SPID %s", r[2])
		at, npac := parseWhen(t, r[3])
		d.ported[tn] = portedRow{lrn: r[1], spid: r[2], at: at, npac: npac}
	}
	for _, r := range readCSV(t, dir, FileMessaging, "tn,provider,enabled,country,country_code,reference_id") {
		tn := parseTN(t, r[0])
		_, dup := d.messaging[tn]
		require.False(t, dup, "duplicate messaging TN: %v", tn)
		require.Contains(t, messagingProviders, r[1])
		require.Contains(t, []string{"true", "false"}, r[2])
		require.Equal(t, []string{"US", "1"}, r[3:5])
		require.NotEmpty(t, r[5])
		d.messaging[tn] = msgRow{provider: r[1], enabled: r[2], refID: r[5]}
	}
	for _, r := range readCSV(t, dir, FileCNAM, "tn,name") {
		tn := parseTN(t, r[0])
		_, dup := d.cnam[tn]
		require.False(t, dup, "duplicate CNAM TN: %v", tn)
		require.LessOrEqual(t, len(r[1]), maxCNAM, r[1])
		require.Regexp(t, cnamRE, r[1])
		d.cnam[tn] = r[1]
	}
	for _, r := range readCSV(t, dir, FileTrust, "tn,spam_type,complaint_count,first_reported,last_reported") {
		tn := parseTN(t, r[0])
		_, dup := d.trust[tn]
		require.False(t, dup, "duplicate trust TN: %v", tn)
		require.Contains(t, spamTypes, r[1])
		n, err := strconv.Atoi(r[2])
		require.NoError(t, err)
		require.GreaterOrEqual(t, n, 0)
		first, _ := parseWhen(t, r[3])
		last, _ := parseWhen(t, r[4])
		require.False(t, last.Before(first), "first_reported after last_reported: %v", r)
		d.trust[tn] = trustRow{spamType: r[1], complaints: n, first: first, last: last}
	}

	// Cross-file rules: numbers lie in assigned codes; LRNs are numbers of
	// their carrier in the same state and LATA; times lie in range.
	from := time.Unix(portingStart, 0)
	for _, m := range []map[int64]bool{keys(d.ported), keys(d.messaging), keys(d.cnam), keys(d.trust)} {
		for tn := range m {
			_, ok := d.codes[codeOf(tn)]
			require.True(t, ok, "%d is not in an assigned code", tn)
		}
	}
	for tn, p := range d.ported {
		lrn := parseTN(t, p.lrn)
		d.requireLRN(t, lrn, p.spid, tn)
		require.False(t, p.at.Before(from) || !p.at.Before(now), "activated_at %v of %d", p.at, tn)
	}
	for k, b := range d.blocks {
		if b.lrn == "" {
			continue
		}
		tn := int64(k/10)*10_000 + int64(k%10)*1000
		d.requireLRN(t, parseTN(t, b.lrn), b.ocn, tn)
		require.False(t, b.at.Before(from) || !b.at.Before(now), "block activated_at %v", b.at)
	}
	return d
}

// requireLRN checks that lrn is a number held by ocn (by its most specific
// block row) in tn's state and LATA.
func (d *dirData) requireLRN(t *testing.T, lrn int64, ocn string, tn int64) {
	t.Helper()
	home := d.owner(lrn)
	require.Equal(t, ocn, home.ocn, "LRN %d of %s serving %d is held by %s", lrn, ocn, tn, home.ocn)
	at := d.owner(tn)
	require.Equal(t, at.state, home.state, "LRN %d for %d in another state", lrn, tn)
	require.Equal(t, d.rateCenters[at.state+"|"+at.rc].lata, d.rateCenters[home.state+"|"+home.rc].lata,
		"LRN %d for %d in another LATA", lrn, tn)
}

// owner returns the most specific block row of tn: its thousands-block
// row, else its code row.
func (d *dirData) owner(tn int64) blockRow {
	code := codeOf(tn)
	if b, ok := d.blocks[code*10+int(tn/1000%10)]; ok {
		return b
	}
	return d.codes[code]
}

func codeOf(tn int64) int { return int(tn / 10_000) }

func keys[V any](m map[int64]V) map[int64]bool {
	out := make(map[int64]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

func (d *dirData) hasCarrier(ocn string) bool { _, ok := d.carriers[ocn]; return ok }
