package messaging_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/internal/golden"
	"github.com/lnpdb/lnpdb/internal/testdb"
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
	db := testdb.Sample(t)
	got := make([]golden.Case, len(messagingCases))
	for i, c := range messagingCases {
		r, err := messaging.Lookup(db, c.Number)
		if want, ok := c.Branch.(error); ok {
			assert.ErrorIs(t, err, want, c.Case)
		} else {
			assert.Equal(t, c.Branch, r.Source, c.Case)
		}
		c.Body = golden.WireBody(t, r, err)
		got[i] = c
	}
	golden.Check(t, "messaging.json", got)
}

func TestErrorsAreTheRootSentinels(t *testing.T) {
	assert.Same(t, lnpdb.ErrInvalidNumber, messaging.ErrInvalidNumber)
	assert.Same(t, lnpdb.ErrNotFound, messaging.ErrNotFound)
	assert.Same(t, lnpdb.ErrClosed, messaging.ErrClosed)
}

func TestClosed(t *testing.T) {
	db := testdb.Open(t, lnpdb.Sample())
	assert.NoError(t, db.Close())
	_, err := messaging.Lookup(db, "12025550123")
	assert.ErrorIs(t, err, messaging.ErrClosed)
}

func TestZeroAllocs(t *testing.T) {
	db := testdb.Sample(t)
	for _, n := range []string{"12015826348", "12025550123", "12052890234", "12025560123"} {
		assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = messaging.Lookup(db, n) }), n)
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
				_, _ = messaging.Lookup(db, c.number)
			}
		})
	}
}
