package httpapi

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/lnpdb/lnpdb/lrn"
	"github.com/lnpdb/lnpdb/messaging"
)

// encodingJSON is what encoding/json's Encoder writes for v without HTML
// escaping: the bytes writeJSON sends.
func encodingJSON(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return b.String()
}

// TestAppendLRNIsEncodingJSON holds the LRN encoder to encoding/json's bytes
// for every sample number, with and without enhanced and messaging data.
func TestAppendLRNIsEncodingJSON(t *testing.T) {
	db := testdb.Sample(t)
	numbers := sampleNumbers(t)
	require.NotEmpty(t, numbers)
	for _, n := range numbers {
		for _, opt := range []lrn.Options{{}, {Enhanced: true}, {Messaging: true}, {Enhanced: true, Messaging: true}} {
			r, err := lrn.Lookup(db, n, opt)
			require.NoError(t, err, n)
			w := httptest.NewRecorder()
			writeLRN(w, &r)
			require.Equal(t, encodingJSON(t, &r), w.Body.String(), "%s %+v", n, opt)
			assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
		}
	}
}

// TestAppendStringIsEncodingJSON covers the strings a table could hold but
// the sample does not.
func TestAppendStringIsEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"", "AT&T Mobility", `Q"uote`, `back\slash`, "<script>", "tab\there", "nul\x00",
		"Señor Telecom", "bad \xff utf-8", "line\u2028sep", "\u00e9\u4e2d", "~", "\x7f",
	} {
		want := strings.TrimSuffix(encodingJSON(t, s), "\n")
		assert.Equal(t, want, string(appendString(nil, s)), "%q", s)
	}
}

// TestAppendLRNCoversResult fails when lrn.Result gains a wire field that
// appendLRN does not write: every exported field of the result and its
// enhanced data is set, and the bytes must still be encoding/json's.
func TestAppendLRNCoversResult(t *testing.T) {
	db := testdb.Sample(t)
	r, err := lrn.Lookup(db, sampleNumbers(t)[0], lrn.Options{Enhanced: true, Messaging: true})
	require.NoError(t, err)
	fill(reflect.ValueOf(&r).Elem(), "x<&>\"")
	r.ActivatedAt = lnpdb.Unix(1552576166)
	require.False(t, r.Enhanced.IsZero())
	require.False(t, r.Messaging.IsZero())
	assert.Equal(t, encodingJSON(t, &r), string(append(appendLRN(nil, &r), '\n')))

	// The wire fields appendLRN knows, by struct; a new one fails here.
	for _, c := range []struct {
		v    any
		want int
	}{{lrn.Result{}, 5}, {lrn.Enhanced{}, 10}, {messaging.Info{}, 5}} {
		ty := reflect.TypeOf(c.v)
		n := 0
		for f := range ty.Fields() {
			if f.IsExported() && f.Tag.Get("json") != "-" {
				n++
			}
		}
		assert.Equal(t, c.want, n, "wire fields of %s: teach appendLRN the new one", ty)
	}
}

// fill sets every exported string and bool field under v.
func fill(v reflect.Value, s string) {
	for i := range v.NumField() {
		f := v.Field(i)
		if !v.Type().Field(i).IsExported() {
			continue
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString(s + v.Type().Field(i).Name)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Struct:
			if f.Type() != reflect.TypeOf(lnpdb.Time{}) {
				fill(f, s)
			}
		}
	}
}

func TestWriteLRNAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop buffers")
	}
	db := testdb.Sample(t)
	r, err := lrn.Lookup(db, "12025550123", lrn.Options{Enhanced: true, Messaging: true})
	require.NoError(t, err)
	w := &discardWriter{h: make(map[string][]string)}
	writeLRN(w, &r) // the pool's first buffer
	assert.Zero(t, testing.AllocsPerRun(100, func() { writeLRN(w, &r) }))
}

func TestAppendWireTimeIsAppendWire(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	east := time.FixedZone("east", 5*3600+30*60)
	for i := range 20000 {
		sec := rng.Int64N(300*365*86400) - 100*365*86400
		tm := lnpdb.Unix(sec)
		if i%5 == 0 {
			tm = lnpdb.Time{Time: tm.In(east)}
		}
		require.Equal(t, string(tm.AppendWire(nil)), string(appendWireTime(nil, tm)), "%d", sec)
	}
	for _, tm := range []lnpdb.Time{lnpdb.Unix(1), {Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, {Time: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)}} {
		require.Equal(t, string(tm.AppendWire(nil)), string(appendWireTime(nil, tm)))
	}
}
