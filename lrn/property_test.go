package lrn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cnam"
	"github.com/lnpdb/lnpdb/internal/ingest/gen"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/lnpdb/lnpdb/lrn"
	"github.com/lnpdb/lnpdb/messaging"
	"github.com/lnpdb/lnpdb/trust"
)

// goldenNow is the fixed clock of the trust tests.
var goldenNow = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

// TestMatchesOracle holds every lookup package to the oracle over a
// generated table, for random numbers: hits of every per-number file,
// numbers in pooled and plain blocks, and misses, in several input forms.
func TestMatchesOracle(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a generated table")
	}
	dir := t.TempDir()
	_, err := gen.Generate(context.Background(), dir, gen.Config{
		Seed: 7, Ported: 20000, Messaging: gen.DefaultMessaging, CNAM: gen.DefaultCNAM, Trust: 0.1,
	})
	require.NoError(t, err)
	db := testdb.Open(t, os.DirFS(dir))
	o := loadOracle(t, dir)
	rng := rand.New(rand.NewPCG(7, 11))
	numbers := o.pick(rng, 4000)
	require.NotEmpty(t, numbers)

	var vacant, ported, pooled, code int
	reasons, cnamSources, msgSources := map[string]int{}, map[cnam.Source]int{}, map[messaging.Source]int{}
	inputs := make([]string, len(numbers))
	// into is reused across numbers and options, as a front end reuses
	// its Result: nothing of one answer may survive into the next.
	var into lrn.Result
	var (
		intoCNAM  cnam.Result
		intoMsg   messaging.Result
		intoTrust trust.Result
	)
	for i, n := range numbers {
		in := inputForm(n, i)
		inputs[i] = in
		for _, opt := range []lrn.Options{{}, {Enhanced: true}, {Messaging: true}, {Enhanced: true, Messaging: true}} {
			r, err := lrn.Lookup(db, in, opt)
			before := into
			if errInto := lrn.LookupInto(db, in, opt, &into); err == nil {
				assert.NoError(t, errInto, in)
				assert.Equal(t, r, into, "LookupInto(%s, %+v)", in, opt)
			} else {
				assert.Equal(t, err, errInto, in)
				assert.Equal(t, before, into, "LookupInto(%s, %+v) failed: *r as it was", in, opt)
			}
			want := o.lrnBody(t, n, opt.Enhanced, opt.Messaging)
			if !checkBody(t, "lrn", in, want, r, err) || want == nil {
				continue
			}
			b, _ := o.block(n)
			p, isPorted := o.ported[n]
			wantSource := lrn.SourceCode
			switch {
			case isPorted:
				wantSource = lrn.SourcePorted
				assert.Equal(t, p.spid, r.SPID, in)
			case b.lrn != 0:
				wantSource = lrn.SourcePooled
				assert.Equal(t, b.ocn, r.SPID, in)
			default:
				assert.Equal(t, b.ocn, r.SPID, in)
			}
			assert.Equal(t, wantSource, r.Source, in)
			assert.Equal(t, isPorted, r.Ported, in)
			if opt.Enhanced {
				assert.Equal(t, o.rcs[b.rcKey].zone, r.Enhanced.IANAZone, in)
				want := o.svLineType(n)
				if want == "" {
					want = lrn.LineTypeOf(o.current(n).typ).String()
				}
				assert.Equal(t, want, r.Enhanced.LineType.String(), in)
			}
		}
		switch r, err := lrn.Lookup(db, in, lrn.Options{}); {
		case err != nil:
			vacant++
		case r.Source == lrn.SourcePorted:
			ported++
		case r.Source == lrn.SourcePooled:
			pooled++
		default:
			code++
		}
		r1, err := cnam.Lookup(db, in, cnam.Options{})
		checkBody(t, "cnam", in, o.cnamBody(n), r1, err)
		r2, err := messaging.Lookup(db, in, messaging.Options{})
		checkBody(t, "messaging", in, o.messagingBody(n), r2, err)
		r3, err := trust.Lookup(db, in, trust.Options{Now: goldenNow})
		checkBody(t, "trust", in, o.trustBody(n, goldenNow), r3, err)
		// The Into forms, into results reused from number to number.
		sameInto(t, "cnam", in, r1, &intoCNAM, func() error { return cnam.LookupInto(db, in, cnam.Options{}, &intoCNAM) })
		sameInto(t, "messaging", in, r2, &intoMsg, func() error { return messaging.LookupInto(db, in, messaging.Options{}, &intoMsg) })
		sameInto(t, "trust", in, r3, &intoTrust, func() error {
			return trust.LookupInto(db, in, trust.Options{Now: goldenNow}, &intoTrust)
		})
		// One parse serves the four lookups, which answer as their string
		// forms do.
		num, err := lnpdb.ParseNumber(in)
		require.NoError(t, err, in)
		both := lrn.Options{Enhanced: true, Messaging: true}
		rs, errS := lrn.Lookup(db, in, both)
		rn, errN := lrn.LookupNumber(db, num, both)
		assert.Equal(t, errS, errN, in)
		assert.Equal(t, rs, rn, in)
		sameInto(t, "cnam number", in, r1, &intoCNAM, func() error { return cnam.LookupNumberInto(db, num, cnam.Options{}, &intoCNAM) })
		sameInto(t, "messaging number", in, r2, &intoMsg, func() error {
			return messaging.LookupNumberInto(db, num, messaging.Options{}, &intoMsg)
		})
		sameInto(t, "trust number", in, r3, &intoTrust, func() error {
			return trust.LookupNumberInto(db, num, trust.Options{Now: goldenNow}, &intoTrust)
		})
		for _, reason := range r3.Reasons {
			reasons[reason]++
		}
		cnamSources[r1.Source]++
		msgSources[r2.Source]++
	}
	t.Logf("trust reasons: %v; cnam sources: %v; messaging sources: %v", reasons, cnamSources, msgSources)
	t.Logf("%d numbers: %d ported, %d pooled, %d code, %d vacant", len(numbers), ported, pooled, code, vacant)
	for _, c := range []int{vacant, ported, pooled, code} {
		assert.NotZero(t, c, "every resolution step must be exercised")
	}
	for _, r := range []string{trust.ReasonScam, trust.ReasonRobocall, trust.ReasonSpam, trust.ReasonTelemarketer,
		trust.ReasonComplaints, trust.ReasonPorted7D, trust.ReasonPorted30D, trust.ReasonPooled7D, trust.ReasonPooled30D, trust.ReasonVoIP} {
		assert.NotZero(t, reasons[r], "trust reason %s must be exercised", r)
	}
	for _, s := range []cnam.Source{cnam.SourceRecord, cnam.SourceWireless, cnam.SourceLocation} {
		assert.NotZero(t, cnamSources[s], "CNAM source %s must be exercised", s)
	}
	for _, s := range []messaging.Source{messaging.SourceRecord, messaging.SourceCarrierDefault, messaging.SourceNone} {
		assert.NotZero(t, msgSources[s], "messaging source %s must be exercised", s)
	}

	// LookupMany answers exactly what Lookup does, invalid inputs included.
	inputs = append(inputs, "", "12025550123x", "+44 20 7946 0000", "1911555012")
	rng.Shuffle(len(inputs), func(i, j int) { inputs[i], inputs[j] = inputs[j], inputs[i] })
	opt := lrn.Options{Enhanced: true, Messaging: true}
	answers := lrn.LookupMany(db, inputs, opt, make([]lrn.Answer, 1, 8))[1:]
	require.Len(t, answers, len(inputs))
	for i, in := range inputs {
		r, err := lrn.Lookup(db, in, opt)
		assert.Equal(t, err, answers[i].Err, in)
		assert.Equal(t, r, answers[i].Result, in)
	}
}

// sameInto checks that into, the Into form's result after call, equals
// want, Lookup's result, when Lookup answered (want is then not zero), and
// that a failed call left it as it was.
func sameInto[R any](t *testing.T, what, in string, want R, into *R, call func() error) {
	t.Helper()
	before := *into
	err := call()
	var zero R
	if reflect.DeepEqual(want, zero) {
		assert.Error(t, err, "%s %s", what, in)
		assert.Equal(t, before, *into, "%s %s failed: *r as it was", what, in)
		return
	}
	assert.NoError(t, err, "%s %s", what, in)
	assert.Equal(t, want, *into, "%s %s", what, in)
}

// checkBody compares a lookup's answer with the oracle's expected body (nil:
// not found) and reports whether they agree.
func checkBody(t *testing.T, what, in string, want obj, got any, err error) bool {
	t.Helper()
	if want == nil {
		return assert.ErrorIs(t, err, lrn.ErrNotFound, "%s %s", what, in)
	}
	if !assert.NoError(t, err, "%s %s", what, in) {
		return false
	}
	b, err := json.Marshal(got)
	require.NoError(t, err)
	var body obj
	require.NoError(t, json.Unmarshal(b, &body))
	return assert.Equal(t, want, body, "%s %s", what, in)
}

// inputForm writes n in one of the CONTRACT §1 forms, chosen by i.
func inputForm(n uint64, i int) string {
	s := fmt.Sprintf("%010d", n)
	switch i % 4 {
	case 1:
		return "+1 (" + s[:3] + ") " + s[3:6] + "-" + s[6:]
	case 2:
		return s
	case 3:
		return "tel:+1" + s + ";npdi"
	}
	return "1" + s
}

// pick returns about count numbers, deterministic for rng: hits of every
// per-number file, numbers in thousands-blocks and whole codes, and random
// valid numbers (mostly vacant).
func (o *oracle) pick(rng *rand.Rand, count int) []uint64 {
	var out []uint64
	per := count / 8
	some := func(keys []uint64, k int, number func(key uint64) uint64) {
		for range min(k, len(keys)) {
			out = append(out, number(keys[rng.IntN(len(keys))]))
		}
	}
	same := func(k uint64) uint64 { return k }
	some(slices.Sorted(maps.Keys(o.ported)), 2*per, same)
	some(slices.Sorted(maps.Keys(o.messaging)), per, same)
	some(slices.Sorted(maps.Keys(o.cnam)), per, same)
	some(slices.Sorted(maps.Keys(o.trust)), per, same)
	some(slices.Sorted(maps.Keys(o.thousands)), per, func(k uint64) uint64 { return k*1000 + rng.Uint64N(1000) })
	some(slices.Sorted(maps.Keys(o.codes)), per, func(k uint64) uint64 { return k*10000 + rng.Uint64N(10000) })
	for len(out) < count {
		npa, nxx := 200+rng.Uint64N(800), 200+rng.Uint64N(800)
		if npa%100 == 11 || npa/10%10 == 9 || nxx%100 == 11 {
			continue
		}
		out = append(out, (npa*1000+nxx)*10000+rng.Uint64N(10000))
	}
	return out
}

// TestLookupNumberZero: the zero Number is no number, for every lookup.
func TestLookupNumberZero(t *testing.T) {
	db := testdb.Sample(t)
	var zero lnpdb.Number
	_, err := lrn.LookupNumber(db, zero, lrn.Options{})
	assert.ErrorIs(t, err, lnpdb.ErrInvalidNumber)
	_, err = cnam.LookupNumber(db, zero, cnam.Options{})
	assert.ErrorIs(t, err, lnpdb.ErrInvalidNumber)
	_, err = messaging.LookupNumber(db, zero, messaging.Options{})
	assert.ErrorIs(t, err, lnpdb.ErrInvalidNumber)
	_, err = trust.LookupNumber(db, zero, trust.Options{})
	assert.ErrorIs(t, err, lnpdb.ErrInvalidNumber)
}

// TestLookupNumberAllocatesNothing: a parsed number's LRN lookup, plain or
// enhanced with messaging, allocates nothing, whatever form it was parsed
// from.
func TestLookupNumberAllocatesNothing(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage counters allocate")
	}
	db := testdb.Sample(t)
	n, err := lnpdb.ParseNumber("+1 (202) 555-0123")
	require.NoError(t, err)
	var r lrn.Result
	for _, opt := range []lrn.Options{{}, {Enhanced: true, Messaging: true}} {
		assert.Zero(t, testing.AllocsPerRun(100, func() {
			if err := lrn.LookupNumberInto(db, n, opt, &r); err != nil {
				panic(err)
			}
		}), "%+v", opt)
	}
}
