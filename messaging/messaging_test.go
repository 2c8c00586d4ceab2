package messaging_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/golden"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/lnpdb/lnpdb/messaging"
)

// The golden numbers, by the rule of CONTRACT §4 they take in the sample.
var messagingCases = []golden.Case{
	{Case: "record, on a ported number", Number: "12015826348", Branch: messaging.SourceRecord},
	{Case: "record, disabled", Number: "12015821270", Branch: messaging.SourceRecord},
	{Case: "no record, the ported carrier's default, not the block's", Number: "12025550123", Branch: messaging.SourceCarrierDefault},
	{Case: "no record, the block carrier's default (disabled)", Number: "12014810234", Branch: messaging.SourceCarrierDefault},
	{Case: "no record, no carrier default", Number: "12052890234", Branch: messaging.SourceNone},
	{Case: "input with punctuation", Number: "+1.201.582.6348", Branch: messaging.SourceRecord},
	{Case: "vacant code", Number: "12025560123", Branch: messaging.ErrNotFound},
	{Case: "invalid", Number: "22025550123", Branch: messaging.ErrInvalidNumber},
}

func TestGolden(t *testing.T) {
	golden.Run(t, "messaging.json", messagingCases, func(db *format.DB, c golden.Case) (messaging.Result, error) {
		return messaging.Lookup(db, c.Number, messaging.Options{})
	}, func(r messaging.Result) any { return r.Source })
}

func TestErrorsAreTheRootSentinels(t *testing.T) {
	golden.Sentinels(t, messaging.ErrInvalidNumber, messaging.ErrNotFound, messaging.ErrClosed)
}

func TestZeroAllocs(t *testing.T) {
	db := testdb.Sample(t)
	for _, n := range []string{"12015826348", "12025550123", "12052890234", "12025560123"} {
		assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = messaging.Lookup(db, n, messaging.Options{}) }), n)
	}
}

func BenchmarkLookup(b *testing.B) {
	db := testdb.Sample(b)
	for _, c := range []struct{ name, number string }{
		{"record", "12015826348"}, {"carrier_default", "12025550123"}, {"none", "12052890234"}, {"vacant", "12025560123"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = messaging.Lookup(db, c.number, messaging.Options{})
			}
		})
	}
}

// TestLookupIntoReused: LookupInto into one Result, reused from number to
// number in every order of the golden cases, answers what Lookup answers
// (every field is overwritten), and leaves it as it was on an error.
func TestLookupIntoReused(t *testing.T) {
	db := testdb.Sample(t)
	var r messaging.Result
	for _, first := range messagingCases {
		if _, isErr := first.Branch.(error); isErr {
			continue
		}
		for _, c := range messagingCases {
			require.NoError(t, messaging.LookupInto(db, first.Number, messaging.Options{}, &r), first.Number)
			before := r
			want, werr := messaging.Lookup(db, c.Number, messaging.Options{})
			err := messaging.LookupInto(db, c.Number, messaging.Options{}, &r)
			require.Equal(t, werr != nil, err != nil, c.Number)
			if err != nil {
				assert.Equal(t, before, r, "%s: left alone on an error", c.Number)
			} else {
				assert.Equal(t, want, r, "%s after %s", c.Number, first.Number)
			}
		}
	}
}
