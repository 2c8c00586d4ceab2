package lrn_test

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// oracle answers lookups by the plainest possible reading of a source
// directory's CSV files (DATA.md) and of CONTRACT §2–§5, sharing no code with
// the builder or the lookup packages: the property tests hold the packages
// to it.
type oracle struct {
	carriers  map[string]oCarrier    // by OCN
	rcs       map[string]oRateCenter // by state + "|" + upper-case rate center name
	codes     map[uint64]oBlock      // by NPA-NXX, e.g. 202555
	thousands map[uint64]oBlock      // by NPA-NXX-X, e.g. 2025550
	ported    map[uint64]oPorted     // by 10-digit number
	messaging map[uint64]oMessaging
	cnam      map[uint64]string
	trust     map[uint64]oTrust
}

type oCarrier struct {
	ocn, name, typ, msgProvider string
	msgEnabled                  bool
}

type oRateCenter struct {
	state, name, lata, city, county, zip, zone string
}

type oBlock struct {
	ocn, rcKey string
	lrn        uint64 // 10 digits, 0 if none
	activated  int64
}

type oPorted struct {
	lrn       uint64
	spid      string
	activated int64
	svType    string // ported.csv's sv_type: the NPAC value, or ""
}

type oMessaging struct {
	provider, country, countryCode, referenceID string
	enabled                                     bool
}

type oTrust struct {
	spamType    string
	complaints  uint64
	first, last int64
}

// readCSV calls fn with each data row of dir/name as a map from lower-case
// column name to trimmed value; a missing optional file is no rows.
func readCSV(t testing.TB, dir, name string, fn func(row map[string]string)) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	header, err := r.Read()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for i := range header {
		header[i] = strings.ToLower(strings.TrimSpace(header[i]))
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		row := map[string]string{}
		for i, v := range rec {
			row[header[i]] = strings.TrimSpace(v)
		}
		fn(row)
	}
}

func loadOracle(t testing.TB, dir string) *oracle {
	t.Helper()
	o := &oracle{
		carriers: map[string]oCarrier{}, rcs: map[string]oRateCenter{},
		codes: map[uint64]oBlock{}, thousands: map[uint64]oBlock{},
		ported: map[uint64]oPorted{}, messaging: map[uint64]oMessaging{},
		cnam: map[uint64]string{}, trust: map[uint64]oTrust{},
	}
	readCSV(t, dir, "carriers.csv", func(r map[string]string) {
		ocn := strings.ToUpper(r["ocn"])
		o.carriers[ocn] = oCarrier{ocn: ocn, name: r["name"], typ: r["carrier_type"],
			msgProvider: r["messaging_provider"], msgEnabled: parseBool(t, r["messaging_enabled"])}
	})
	readCSV(t, dir, "ratecenters.csv", func(r map[string]string) {
		rc := oRateCenter{state: strings.ToUpper(r["state"]), name: r["rate_center"], lata: r["lata"],
			city: r["city"], county: r["county"], zip: r["zip_code"], zone: r["timezone"]}
		o.rcs[rc.state+"|"+strings.ToUpper(rc.name)] = rc
	})
	readCSV(t, dir, "blocks.csv", func(r map[string]string) {
		npa, _ := strconv.ParseUint(r["npa"], 10, 64)
		nxx, _ := strconv.ParseUint(r["nxx"], 10, 64)
		b := oBlock{ocn: strings.ToUpper(r["ocn"]), rcKey: strings.ToUpper(r["state"]) + "|" + strings.ToUpper(r["rate_center"]),
			lrn: parseTN(t, r["lrn"]), activated: parseTime(t, r["activated_at"])}
		if x := r["x"]; x == "" || strings.EqualFold(x, "A") {
			o.codes[npa*1000+nxx] = b
		} else {
			o.thousands[(npa*1000+nxx)*10+uint64(x[0]-'0')] = b
		}
	})
	readCSV(t, dir, "ported.csv", func(r map[string]string) {
		o.ported[parseTN(t, r["tn"])] = oPorted{lrn: parseTN(t, r["lrn"]), spid: strings.ToUpper(r["spid"]), activated: parseTime(t, r["activated_at"]), svType: r["sv_type"]}
	})
	readCSV(t, dir, "messaging.csv", func(r map[string]string) {
		o.messaging[parseTN(t, r["tn"])] = oMessaging{provider: r["provider"], enabled: parseBool(t, r["enabled"]),
			country: strings.ToUpper(r["country"]), countryCode: r["country_code"], referenceID: r["reference_id"]}
	})
	readCSV(t, dir, "cnam.csv", func(r map[string]string) {
		o.cnam[parseTN(t, r["tn"])] = r["name"]
	})
	readCSV(t, dir, "trust.csv", func(r map[string]string) {
		st := strings.ToUpper(r["spam_type"])
		if st == "" {
			st = "NONE"
		}
		c, err := strconv.ParseUint(r["complaint_count"], 10, 32)
		if err != nil {
			t.Fatalf("trust.csv: complaint_count %q", r["complaint_count"])
		}
		o.trust[parseTN(t, r["tn"])] = oTrust{spamType: st, complaints: c,
			first: parseTime(t, r["first_reported"]), last: parseTime(t, r["last_reported"])}
	})
	return o
}

// parseTN returns the 10-digit number of a tn or lrn column, 0 for "".
func parseTN(t testing.TB, s string) uint64 {
	if s == "" {
		return 0
	}
	if len(s) == 11 && s[0] == '1' {
		s = s[1:]
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || len(s) != 10 {
		t.Fatalf("bad number %q", s)
	}
	return v
}

func parseTime(t testing.TB, s string) int64 {
	if s == "" {
		return 0
	}
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		if v, err = time.Parse("20060102150405", s); err != nil {
			t.Fatalf("bad time %q", s)
		}
	}
	return v.Unix()
}

func parseBool(t testing.TB, s string) bool {
	switch strings.ToUpper(s) {
	case "TRUE", "1", "Y":
		return true
	case "FALSE", "0", "N", "":
		return false
	}
	t.Fatalf("bad flag %q", s)
	return false
}

// canon is the 11-digit form of a 10-digit number.
func canon(n uint64) string { return "1" + strconv.FormatUint(n, 10) }

// wireTime is the CONTRACT §2 time form.
func wireTime(sec int64) string {
	return time.Unix(sec, 0).UTC().Format("2006-01-02T15:04:05-07:00")
}

// standardOffset is a zone's UTC offset without daylight saving, as -0500.
func standardOffset(t testing.TB, zone string) string {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	_, jan := time.Date(2026, 1, 15, 12, 0, 0, 0, loc).Zone()
	_, jul := time.Date(2026, 7, 15, 12, 0, 0, 0, loc).Zone()
	off := min(jan, jul)
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	return fmt.Sprintf("%s%02d%02d", sign, off/3600, off%3600/60)
}

// block returns the number's most specific block row.
func (o *oracle) block(n uint64) (oBlock, bool) {
	if b, ok := o.thousands[n/1000]; ok {
		return b, true
	}
	b, ok := o.codes[n/10000]
	return b, ok
}

// current returns the number's current carrier.
func (o *oracle) current(n uint64) oCarrier {
	if p, ok := o.ported[n]; ok {
		return o.carriers[p.spid]
	}
	b, _ := o.block(n)
	return o.carriers[b.ocn]
}

// svLineType is the line type the number's SV Type names (DATA.md): NPAC
// 0 wireline, 1 wireless, 4 prepaid wireless, 2 and 3 VoIP and VoWiFi, 5
// class 2 interconnected VoIP; "" where it names none and the carrier's
// type decides.
func (o *oracle) svLineType(n uint64) string {
	switch o.ported[n].svType {
	case "0":
		return "landline"
	case "1", "4":
		return "mobile"
	case "2", "3", "5":
		return "voip"
	}
	return ""
}

// vacant reports whether the number has nowhere to route.
func (o *oracle) vacant(n uint64) bool {
	_, ported := o.ported[n]
	_, assigned := o.block(n)
	return !ported && !assigned
}

// obj is an expected JSON object, compared with a decoded response.
type obj = map[string]any

// lrnBody is the expected REST body of an LRN lookup of n, nil when vacant.
func (o *oracle) lrnBody(t testing.TB, n uint64, enhanced, withMessaging bool) obj {
	if o.vacant(n) {
		return nil
	}
	body := obj{"phone_number": canon(n)}
	b, _ := o.block(n)
	if p, ok := o.ported[n]; ok {
		body["lrn"] = canon(p.lrn)
		if p.activated != 0 {
			body["lrn_activated_at"] = wireTime(p.activated)
		}
	} else if b.lrn != 0 {
		body["lrn"] = canon(b.lrn)
		if b.activated != 0 {
			body["lrn_activated_at"] = wireTime(b.activated)
		}
	} else {
		body["lrn"] = canon(n)
	}
	if enhanced {
		c := o.current(n)
		rc := o.rcs[b.rcKey]
		body["enhanced_lrn_data"] = obj{
			"carrier": c.name, "carrier_type": c.typ, "ocn": c.ocn,
			"city": rc.city, "state": rc.state, "county": rc.county, "zip_code": rc.zip,
			"lata": rc.lata, "rate_center": rc.name, "timezone": standardOffset(t, rc.zone),
		}
	}
	if withMessaging {
		body["messaging"] = o.messagingInfo(n)
	}
	return body
}

func (o *oracle) messagingInfo(n uint64) obj {
	if m, ok := o.messaging[n]; ok {
		return obj{"provider": m.provider, "enabled": m.enabled, "country": m.country,
			"country_code": m.countryCode, "reference_id": m.referenceID}
	}
	c := o.current(n)
	if c.msgProvider != "" {
		return obj{"provider": c.msgProvider, "enabled": c.msgEnabled, "country": "US", "country_code": "1", "reference_id": ""}
	}
	return obj{"provider": "", "enabled": false, "country": "US", "country_code": "1", "reference_id": ""}
}

// messagingBody is the expected flat messaging body, nil when vacant.
func (o *oracle) messagingBody(n uint64) obj {
	if o.vacant(n) {
		return nil
	}
	i := o.messagingInfo(n)
	return obj{"phone_number": canon(n), "messaging_provider": i["provider"], "messaging_enabled": i["enabled"],
		"messaging_country": i["country"], "messaging_country_code": i["country_code"], "reference_id": i["reference_id"]}
}

// cnamBody is the expected CNAM body, nil when vacant.
func (o *oracle) cnamBody(n uint64) obj {
	if o.vacant(n) {
		return nil
	}
	name, ok := o.cnam[n]
	if !ok {
		if strings.EqualFold(o.current(n).typ, "WIRELESS") {
			name = "WIRELESS CALLER"
		} else {
			b, _ := o.block(n)
			rc := o.rcs[b.rcKey]
			city := rc.city
			if city == "" {
				city = rc.name
			}
			// CNAM carries 15 characters: the city gives way to the state.
			if r := []rune(city); len(r) > 15-1-len(rc.state) {
				city = strings.TrimSpace(string(r[:15-1-len(rc.state)]))
			}
			name = strings.ToUpper(city + " " + rc.state)
		}
	}
	return obj{"phone_number": canon(n), "cnam": name}
}

// trustBody is the expected trust body at now, nil when vacant.
func (o *oracle) trustBody(n uint64, now time.Time) obj {
	if o.vacant(n) {
		return nil
	}
	score, reasons := 100, []any{}
	tr, ok := o.trust[n]
	if !ok {
		tr.spamType = "NONE"
	}
	cost := map[string]int{"SCAM": 60, "ROBOCALL": 50, "SPAM": 40, "TELEMARKETER": 25}
	if c, ok := cost[tr.spamType]; ok {
		score -= c
		reasons = append(reasons, "SPAM_TYPE_"+tr.spamType)
	}
	if tr.complaints > 0 {
		score -= int(min(3*tr.complaints, 30))
		reasons = append(reasons, "COMPLAINTS")
	}
	var activated int64
	kind := "POOLED"
	if p, ok := o.ported[n]; ok {
		activated, kind = p.activated, "PORTED"
	} else if b, _ := o.block(n); b.lrn != 0 {
		activated = b.activated
	}
	if activated != 0 {
		at := time.Unix(activated, 0)
		switch {
		case at.After(now):
		case !at.Before(now.AddDate(0, 0, -7)):
			score -= 20
			reasons = append(reasons, kind+"_7D")
		case !at.Before(now.AddDate(0, 0, -30)):
			score -= 10
			reasons = append(reasons, kind+"_30D")
		}
	}
	if strings.EqualFold(o.current(n).typ, "VOIP") {
		score -= 10
		reasons = append(reasons, "VOIP_CARRIER")
	}
	score = max(0, score)
	level := "low"
	if score >= 70 {
		level = "high"
	} else if score >= 40 {
		level = "medium"
	}
	body := obj{"phone_number": canon(n), "trust_score": float64(score), "trust_level": level,
		"spam_type": tr.spamType, "complaint_count": float64(tr.complaints), "reasons": reasons}
	if tr.first != 0 {
		body["first_reported"] = wireTime(tr.first)
	}
	if tr.last != 0 {
		body["last_reported"] = wireTime(tr.last)
	}
	return body
}
