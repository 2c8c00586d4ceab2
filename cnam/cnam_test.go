package cnam_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lnpdb/lnpdb/cnam"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/golden"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// The golden numbers, by the rule of CONTRACT §3 they take in the sample.
var cnamCases = []golden.Case{
	{Case: "record, on a ported wireless number", Number: "12014814567", Branch: cnam.SourceRecord},
	{Case: "record", Number: "12025558258", Branch: cnam.SourceRecord},
	{Case: "no record, wireless code", Number: "12014810234", Branch: cnam.SourceWireless},
	{Case: "no record, ported from a landline to wireless", Number: "12037769497", Branch: cnam.SourceWireless},
	{Case: "no record, ported from wireless to VoIP: location", Number: "12025550123", Branch: cnam.SourceLocation},
	{Case: "no record, landline pooled block: city and state", Number: "12052890234", Branch: cnam.SourceLocation},
	{Case: "no record, VoIP code: location", Number: "18084160123", Branch: cnam.SourceLocation},
	{Case: "no record, long city cut to fit 15 characters", Number: "13865100123", Branch: cnam.SourceLocation},
	{Case: "input with punctuation", Number: "(201) 481-4567", Branch: cnam.SourceRecord},
	{Case: "vacant code", Number: "12025560123", Branch: cnam.ErrNotFound},
	{Case: "invalid", Number: "1202555012", Branch: cnam.ErrInvalidNumber},
}

func TestGolden(t *testing.T) {
	golden.Run(t, "cnam.json", cnamCases, func(db *format.DB, c golden.Case) (cnam.Result, error) {
		r, err := cnam.Lookup(db, c.Number, cnam.Options{})
		if err == nil {
			assert.LessOrEqual(t, len([]rune(r.CNAM)), cnam.MaxLen, c.Case)
		}
		return r, err
	}, func(r cnam.Result) any { return r.Source })
}

func TestErrorsAreTheRootSentinels(t *testing.T) {
	golden.Sentinels(t, cnam.ErrInvalidNumber, cnam.ErrNotFound, cnam.ErrClosed)
}

func TestWirelessAllocatesNothing(t *testing.T) {
	// A record's name is decompressed from the table and the location is
	// built, so those allocate; the wireless fallback and a miss do not.
	db := testdb.Sample(t)
	for _, n := range []string{"12014810234", "12025560123"} {
		assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = cnam.Lookup(db, n, cnam.Options{}) }), n)
	}
}

func BenchmarkLookup(b *testing.B) {
	db := testdb.Sample(b)
	for _, c := range []struct{ name, number string }{
		{"record", "12014814567"}, {"wireless", "12014810234"}, {"location", "12052890234"}, {"vacant", "12025560123"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = cnam.Lookup(db, c.number, cnam.Options{})
			}
		})
	}
}
