package trust_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/golden"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/lnpdb/lnpdb/trust"
)

// The golden numbers; branch lists the reasons each must give, which
// together cover every deduction.
var trustCases = []golden.Case{
	{Case: "clean", Number: "12014810234", Branch: []string{}},
	{Case: "scam", Number: "12516007785", Branch: []string{trust.ReasonScam, trust.ReasonComplaints}},
	{Case: "scam, complaints capped at 30 points", Number: "12696301312", Branch: []string{trust.ReasonScam, trust.ReasonComplaints}},
	{Case: "robocall", Number: "12516009487", Branch: []string{trust.ReasonRobocall, trust.ReasonComplaints}},
	{Case: "robocall from a VoIP carrier", Number: "16613398507", Branch: []string{trust.ReasonRobocall, trust.ReasonComplaints, trust.ReasonVoIP}},
	{Case: "spam", Number: "12015828038", Branch: []string{trust.ReasonSpam, trust.ReasonComplaints}},
	{Case: "spam, ported within 7 days", Number: "14309955840", Branch: []string{trust.ReasonSpam, trust.ReasonComplaints, trust.ReasonPorted7D}},
	{Case: "spam, ported within 30 days", Number: "17065283604", Branch: []string{trust.ReasonSpam, trust.ReasonComplaints, trust.ReasonPorted30D}},
	{Case: "telemarketer", Number: "12173453503", Branch: []string{trust.ReasonTelemarketer, trust.ReasonComplaints}},
	{Case: "complaints without a spam type", Number: "12052892400", Branch: []string{trust.ReasonComplaints}},
	{Case: "ported within 7 days", Number: "12696300439", Branch: []string{trust.ReasonPorted7D}},
	{Case: "ported within 30 days", Number: "12052894594", Branch: []string{trust.ReasonPorted30D}},
	{Case: "pooled block activated within 7 days", Number: "15628419234", Branch: []string{trust.ReasonPooled7D}},
	{Case: "pooled block activated within 30 days", Number: "12139465234", Branch: []string{trust.ReasonPooled30D}},
	{Case: "VoIP code", Number: "12177510234", Branch: []string{trust.ReasonVoIP}},
	{Case: "ported to a VoIP carrier long ago", Number: "12025550123", Branch: []string{trust.ReasonVoIP}},
	{Case: "vacant code", Number: "12025560123", Branch: trust.ErrNotFound},
	{Case: "invalid", Number: "+44 20 7946 0000", Branch: trust.ErrInvalidNumber},
}

func TestGolden(t *testing.T) {
	golden.Run(t, "trust.json", trustCases, func(db *format.DB, c golden.Case) (trust.Result, error) {
		return trust.Lookup(db, c.Number, trust.Options{Now: golden.Now})
	}, func(r trust.Result) any { return r.Reasons })
}

func TestErrorsAreTheRootSentinels(t *testing.T) {
	golden.Sentinels(t, trust.ErrInvalidNumber, trust.ErrNotFound, trust.ErrClosed)
}

func TestNowDefaultsToTheClock(t *testing.T) {
	db := testdb.Sample(t)
	// Ported on 2026-11-21: recent at the golden clock, old a year later.
	r, err := trust.Lookup(db, "12696300439", trust.Options{Now: golden.Now})
	require.NoError(t, err)
	assert.Equal(t, []string{trust.ReasonPorted7D}, r.Reasons)
	r, err = trust.Lookup(db, "12696300439", trust.Options{Now: golden.Now.AddDate(1, 0, 0)})
	require.NoError(t, err)
	assert.NotContains(t, r.Reasons, trust.ReasonPorted7D)
	if time.Now().After(golden.Now.AddDate(0, 0, 30)) {
		r, err = trust.Lookup(db, "12696300439", trust.Options{})
		require.NoError(t, err)
		assert.NotContains(t, r.Reasons, trust.ReasonPorted7D)
		assert.NotContains(t, r.Reasons, trust.ReasonPorted30D)
	}
}

func TestReasonsMarshalAsEmptyList(t *testing.T) {
	db := testdb.Sample(t)
	r, err := trust.Lookup(db, "12014810234", trust.Options{Now: golden.Now})
	require.NoError(t, err)
	assert.Contains(t, string(golden.WireBody(t, r, nil)), `"reasons":[]`)
}

func BenchmarkLookup(b *testing.B) {
	db := testdb.Sample(b)
	opt := trust.Options{Now: golden.Now}
	for _, c := range []struct{ name, number string }{
		{"clean", "12014810234"}, {"deductions", "14309955840"}, {"vacant", "12025560123"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = trust.Lookup(db, c.number, opt)
			}
		})
	}
}
