package lrn_test

import (
	"encoding/csv"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/internal/testutil/golden"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/lnpdb/lnpdb/lrn"
)

func TestErrorsAreTheRootSentinels(t *testing.T) {
	golden.Sentinels(t, lrn.ErrInvalidNumber, lrn.ErrNotFound, lrn.ErrClosed)
}

func TestZeroAllocs(t *testing.T) {
	db := testdb.Sample(t)
	for _, opt := range []lrn.Options{{}, {Enhanced: true}, {Messaging: true}, {Enhanced: true, Messaging: true}} {
		for _, n := range []string{"12025550123", "12052890234", "12014810234"} {
			_, err := lrn.Lookup(db, n, opt)
			require.NoError(t, err)
			allocs := testing.AllocsPerRun(100, func() { _, _ = lrn.Lookup(db, n, opt) })
			assert.Zero(t, allocs, "Lookup(%s, %+v)", n, opt)
			var r lrn.Result
			allocs = testing.AllocsPerRun(100, func() { _ = lrn.LookupInto(db, n, opt, &r) })
			assert.Zero(t, allocs, "LookupInto(%s, %+v)", n, opt)
		}
	}
	// Misses and invalid input allocate nothing either, nor does a miss
	// written in a form that is not canonical (a hit in such a form
	// allocates its canonical PhoneNumber).
	for _, n := range []string{"12025560123", "12345", "1202555O123", "+1 (202) 556-0123", "202.556.0123"} {
		for _, opt := range []lrn.Options{{}, {Enhanced: true}} {
			_, err := lrn.Lookup(db, n, opt)
			require.Error(t, err, n)
			allocs := testing.AllocsPerRun(100, func() { _, _ = lrn.Lookup(db, n, opt) })
			assert.Zero(t, allocs, "Lookup(%s, %+v)", n, opt)
		}
	}
}

func TestLookupManyZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items")
	}
	db := testdb.Sample(t)
	numbers := benchNumbers(t, 1000)
	for _, opt := range []lrn.Options{{Enhanced: true, Messaging: true}, {}} {
		out := lrn.LookupMany(db, numbers, opt, nil)
		allocs := testing.AllocsPerRun(20, func() {
			out = lrn.LookupMany(db, numbers, opt, out[:0])
		})
		assert.Zero(t, allocs, "%+v", opt)
	}
}

func TestLookupMany(t *testing.T) {
	db := testdb.Sample(t)
	numbers := append(benchNumbers(t, 700), "bogus", "+1 (201) 481-0234", "12025560123")
	prefix := lrn.Answer{Err: lrn.ErrNotFound}
	var out []lrn.Answer
	// Reusing one slice across options: nothing of an earlier call's answers
	// may survive in a later one.
	for _, opt := range []lrn.Options{{Enhanced: true, Messaging: true}, {}, {Messaging: true}, {Enhanced: true}, {}} {
		out = lrn.LookupMany(db, numbers, opt, append(out[:0], prefix))
		require.Len(t, out, 1+len(numbers))
		assert.Equal(t, prefix, out[0], "LookupMany appends")
		for i, n := range numbers {
			r, err := lrn.Lookup(db, n, opt)
			assert.Equal(t, lrn.Answer{Result: r, Err: err}, out[1+i], "%s %+v", n, opt)
		}
	}
	assert.Empty(t, lrn.LookupMany(db, nil, lrn.Options{}, nil))
}

// TestLookupManyConverted: in a batch whose inputs are in other forms
// than the canonical here and there (its first, one in the middle, its
// last, next to invalid ones), each answer's PhoneNumber is its own
// number's canonical form, and the batch after it, all canonical,
// answers from its own inputs.
func TestLookupManyConverted(t *testing.T) {
	db := testdb.Sample(t)
	canonical := benchNumbers(t, 600)
	numbers := slices.Clone(canonical)
	for _, i := range []int{0, 1, 77, 78, 200, 255, 300, 511} {
		numbers[i] = "+1 (" + canonical[i][1:4] + ") " + canonical[i][4:7] + "-" + canonical[i][7:]
	}
	numbers[100], numbers[400] = "bogus", "+1"
	for _, opt := range []lrn.Options{{}, {Enhanced: true}, {Messaging: true}} {
		out := lrn.LookupMany(db, numbers, opt, nil)
		require.Len(t, out, len(numbers))
		for i, n := range numbers {
			r, err := lrn.Lookup(db, n, opt)
			require.Equal(t, lrn.Answer{Result: r, Err: err}, out[i], "%d %s %+v", i, n, opt)
		}
		again := lrn.LookupMany(db, canonical[256:512], opt, out[:0])
		for i, n := range canonical[256:512] {
			r, err := lrn.Lookup(db, n, opt)
			require.Equal(t, lrn.Answer{Result: r, Err: err}, again[i], "%d %s %+v", i, n, opt)
		}
	}
}

// LookupManyNumbers answers as LookupMany of the numbers' canonical forms,
// over several batches, appending to out; the zero Number is an invalid
// number; reusing out it allocates nothing.
func TestLookupManyNumbers(t *testing.T) {
	db := testdb.Sample(t)
	var numbers []lnpdb.Number
	for _, s := range append(benchNumbers(t, 700), "+1 (201) 481-0234", "12025560123") {
		n, err := lnpdb.ParseNumber(s)
		require.NoError(t, err, s)
		numbers = append(numbers, n)
	}
	numbers = append(numbers, lnpdb.Number{})
	canonical := make([]string, len(numbers))
	for i, n := range numbers {
		canonical[i] = n.String()
	}
	prefix := lrn.Answer{Err: lrn.ErrNotFound}
	var out []lrn.Answer
	for _, opt := range []lrn.Options{{Enhanced: true, Messaging: true}, {}, {Messaging: true}, {Enhanced: true}} {
		want := lrn.LookupMany(db, canonical, opt, []lrn.Answer{prefix})
		out = lrn.LookupManyNumbers(db, numbers, opt, append(out[:0], prefix))
		require.Equal(t, want, out, "%+v", opt)
		assert.ErrorIs(t, out[len(out)-1].Err, lnpdb.ErrInvalidNumber, "the zero Number")
		if !raceEnabled { // the race detector makes sync.Pool drop items
			allocs := testing.AllocsPerRun(20, func() {
				out = lrn.LookupManyNumbers(db, numbers, opt, out[:0])
			})
			assert.Zero(t, allocs, "%+v", opt)
		}
	}
	assert.Empty(t, lrn.LookupManyNumbers(db, nil, lrn.Options{}, nil))
}

// TestLookupManyBatchOfOneKind: a batch whose numbers are all of one kind
// (ported, pooled, in an assigned code, vacant) answers as single lookups
// do; a count of a kind reaches the batch's size, which a byte does not
// hold.
func TestLookupManyBatchOfOneKind(t *testing.T) {
	db := testdb.Sample(t)
	byKind := map[lrn.Source]string{}
	vacant := ""
	for _, n := range benchNumbers(t, 700) {
		r, err := lrn.Lookup(db, n, lrn.Options{})
		switch {
		case errors.Is(err, lrn.ErrNotFound):
			vacant = n
		case err == nil:
			byKind[r.Source] = n
		}
	}
	require.Len(t, byKind, 3, "the sample has ported, pooled and code numbers")
	require.NotEmpty(t, vacant)
	for _, n := range []string{byKind[lrn.SourcePorted], byKind[lrn.SourcePooled], byKind[lrn.SourceCode], vacant} {
		numbers := slices.Repeat([]string{n}, 600)
		for _, opt := range []lrn.Options{{}, {Enhanced: true}, {Messaging: true}} {
			r, err := lrn.Lookup(db, n, opt)
			for i, a := range lrn.LookupMany(db, numbers, opt, nil) {
				require.Equal(t, lrn.Answer{Result: r, Err: err}, a, "%s %+v, answer %d", n, opt, i)
			}
		}
	}
}

func TestClosed(t *testing.T) {
	db := testdb.Open(t, lnpdb.Sample())
	require.NoError(t, db.Close())
	_, err := lrn.Lookup(db, "12025550123", lrn.Options{Enhanced: true})
	assert.ErrorIs(t, err, lrn.ErrClosed)
	for _, a := range lrn.LookupMany(db, []string{"12025550123", "bogus"}, lrn.Options{}, nil) {
		assert.Error(t, a.Err)
	}
	assert.ErrorIs(t, lrn.LookupMany(db, []string{"12025550123"}, lrn.Options{}, nil)[0].Err, lrn.ErrClosed)
}

func TestResultJSONOmitsWhatWasNotAsked(t *testing.T) {
	db := testdb.Sample(t)
	r, err := lrn.Lookup(db, "12014810234", lrn.Options{})
	require.NoError(t, err)
	assert.True(t, r.Enhanced.IsZero())
	assert.True(t, r.Messaging.IsZero())
	assert.True(t, r.ActivatedAt.IsZero())
	r, err = lrn.Lookup(db, "12014810234", lrn.Options{Enhanced: true, Messaging: true})
	require.NoError(t, err)
	assert.False(t, r.Enhanced.IsZero())
	assert.False(t, r.Messaging.IsZero())
}

// benchNumbers returns count canonical numbers over the sample, a quarter
// of them ported and the rest spread over its codes and thousands-blocks,
// with one in eight in a vacant code.
func benchNumbers(t testing.TB, count int) []string {
	t.Helper()
	var ported, prefixes []string
	readSample(t, "ported.csv", func(r map[string]string) {
		tn := r["tn"]
		if len(tn) == 10 {
			tn = "1" + tn
		}
		ported = append(ported, tn)
	})
	readSample(t, "blocks.csv", func(r map[string]string) {
		prefixes = append(prefixes, "1"+r["npa"]+r["nxx"]+strings.Trim(r["x"], "Aa"))
	})
	require.NotEmpty(t, ported)
	require.NotEmpty(t, prefixes)
	out := make([]string, count)
	for i := range out {
		switch {
		case i%4 == 0:
			out[i] = ported[i/4%len(ported)]
		case i%8 == 1:
			out[i] = fmt.Sprintf("1202556%04d", i%10000) // 202-556 is vacant in the sample
		default:
			p := prefixes[i%len(prefixes)]
			out[i] = p + fmt.Sprintf("%04d", i*7919%10000)[len(p)-7:]
		}
	}
	return out
}

// readSample calls fn with each row of the embedded sample's file name, as
// a map from column name to value.
func readSample(t testing.TB, name string, fn func(map[string]string)) {
	t.Helper()
	f, err := lnpdb.Sample().Open(name)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	for _, row := range rows[1:] {
		m := map[string]string{}
		for i, col := range rows[0] {
			m[col] = row[i]
		}
		fn(m)
	}
}

// Lookups from many goroutines while the table closes see either answers
// or ErrClosed, never a crash or a torn answer.
func TestConcurrentWithClose(t *testing.T) {
	db := testdb.Open(t, lnpdb.Sample())
	numbers := benchNumbers(t, 512)
	want := lrn.LookupMany(db, numbers, lrn.Options{Enhanced: true, Messaging: true}, nil)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			var out []lrn.Answer
			for range 50 {
				if g%2 == 0 {
					out = lrn.LookupMany(db, numbers, lrn.Options{Enhanced: true, Messaging: true}, out[:0])
				} else {
					out = out[:0]
					for _, n := range numbers {
						r, err := lrn.Lookup(db, n, lrn.Options{Enhanced: true, Messaging: true})
						out = append(out, lrn.Answer{Result: r, Err: err})
					}
				}
				for i, a := range out {
					if !errors.Is(a.Err, lrn.ErrClosed) {
						assert.Equal(t, want[i], a, numbers[i])
					}
				}
			}
		})
	}
	require.NoError(t, db.Close())
	wg.Wait()
}
