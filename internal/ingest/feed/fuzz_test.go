package feed

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/core/nanp"
)

// checkUpdates is what must hold of every parsed feed.
func checkUpdates(t *testing.T, ups []format.Update) {
	t.Helper()
	for i, u := range ups {
		if u.Action != format.Add && u.Action != format.Modify && u.Action != format.Delete {
			t.Fatalf("update %d: action %q", i, u.Action)
		}
		if !nanp.Number(u.TN).Valid() {
			t.Fatalf("update %d: tn %d", i, u.TN)
		}
		if u.Action != format.Delete && (!nanp.Number(u.LRN).Valid() || len(u.SPID) != 4) {
			t.Fatalf("update %d: %+v", i, u)
		}
		if u.ActivatedAt < 0 {
			t.Fatalf("update %d: activated_at %d", i, u.ActivatedAt)
		}
	}
}

// asJSON writes updates as a JSON feed.
func asJSON(t *testing.T, ups []format.Update) []byte {
	t.Helper()
	rows := make([]map[string]any, len(ups))
	for i, u := range ups {
		row := map[string]any{"action": string(rune(u.Action)), "tn": strconv.FormatUint(u.TN, 10), "lrn": "", "spid": u.SPID}
		if u.LRN != 0 {
			row["lrn"] = strconv.FormatUint(u.LRN, 10)
		}
		if u.ActivatedAt != 0 {
			row["activated_at"] = u.ActivatedAt
		}
		if u.SVType != format.SVTypeNone {
			row["sv_type"] = int(u.SVType) - 1 // the NPAC's value: format's is one more
		}
		rows[i] = row
	}
	b, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// roundTrip checks that a parsed feed written as JSON parses to itself.
func roundTrip(t *testing.T, ups []format.Update) {
	t.Helper()
	again, err := ParseJSON(asJSON(t, ups))
	if err != nil {
		t.Fatalf("%+v as JSON: %v", ups, err)
	}
	if len(again) != len(ups) {
		t.Fatalf("%d updates, then %d", len(ups), len(again))
	}
	for i := range ups {
		if again[i] != ups[i] {
			t.Fatalf("update %d: %+v, then %+v", i, ups[i], again[i])
		}
	}
}

// fuzzParse holds parse to what a feed must be: whatever it accepts is a
// batch of valid updates that survives a round trip.
func fuzzParse(f *testing.F, parse func([]byte) ([]format.Update, error)) {
	f.Fuzz(func(t *testing.T, body []byte) {
		ups, err := parse(body)
		if err != nil {
			return
		}
		checkUpdates(t, ups)
		roundTrip(t, ups)
	})
}

func FuzzFeedCSV(f *testing.F) {
	for _, s := range []string{
		"action,tn,lrn,spid,activated_at\nU,2025550123,7327370999,0987,2026-11-20T10:00:00Z\n",
		"action,tn,lrn,spid,activated_at\nd,12025550123,,,\nA,2025550124,17718860000,1506,20240102030405\n",
		"tn,action,spid,lrn,activated_at\n2025550123,u,0987,7327370999,\n",
		"action,tn,lrn,spid,activated_at\nX,1,2,3,4\n",
		"action,tn,lrn,spid,activated_at,sv_type\nA,2025550124,17718860000,1506,,5\nU,2025550125,17718860000,1506,,11\n",
		"",
	} {
		f.Add([]byte(s))
	}
	fuzzParse(f, ParseCSV)
}

func FuzzFeedJSON(f *testing.F) {
	for _, s := range []string{
		`[{"action":"U","tn":"2025550123","lrn":"7327370999","spid":"0987","activated_at":"2026-11-20T10:00:00Z"}]`,
		`[{"action":"D","tn":"12025550123"},{"action":"a","tn":"2025550124","lrn":"7718860000","spid":"1506","activated_at":1790000000}]`,
		`[{"action":"U","tn":2025550123}]`,
		`[{"action":"A","tn":"2025550124","lrn":"7718860000","spid":"1506","sv_type":3},{"action":"A","tn":"2025550125","lrn":"7718860000","spid":"1506","sv_type":"12"}]`,
		`[{"action":"U","tn":"2025550123\n","lrn":"7327370999","spid":"0987"}]`,
		`{"action":"U"}`,
		`[]`,
	} {
		f.Add([]byte(s))
	}
	fuzzParse(f, ParseJSON)
}
