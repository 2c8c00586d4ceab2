package lrn_test

import (
	"testing"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/golden"
	"github.com/lnpdb/lnpdb/lrn"
)

// The golden numbers, by the branch of CONTRACT §2 they take in the sample.
var lrnCases = []golden.Case{
	{Case: "ported", Number: "12025550123", Branch: lrn.SourcePorted},
	{Case: "ported, enhanced: carrier is the new SPID, rate center stays", Number: "12025550123", Enhanced: true, Branch: lrn.SourcePorted},
	{Case: "ported, messaging from the new carrier's default", Number: "12025550123", Messaging: true, Branch: lrn.SourcePorted},
	{Case: "ported, enhanced and messaging", Number: "12025550123", Enhanced: true, Messaging: true, Branch: lrn.SourcePorted},
	{Case: "ported, NPAC-format activation time", Number: "12014811095", Enhanced: true, Messaging: true, Branch: lrn.SourcePorted},
	{Case: "ported, messaging record", Number: "12015826348", Enhanced: true, Messaging: true, Branch: lrn.SourcePorted},
	{Case: "ported from a landline to a wireless carrier", Number: "12037769497", Enhanced: true, Branch: lrn.SourcePorted},
	{Case: "ported within the last 7 days", Number: "12696300439", Branch: lrn.SourcePorted},
	{Case: "pooled thousands-block", Number: "12052890234", Branch: lrn.SourcePooled},
	{Case: "pooled thousands-block, enhanced and messaging: no provider", Number: "12052890234", Enhanced: true, Messaging: true, Branch: lrn.SourcePooled},
	{Case: "pooled thousands-block activated within the last 7 days", Number: "15628419234", Enhanced: true, Branch: lrn.SourcePooled},
	{Case: "thousands-block without LRN (retained): routes on itself", Number: "12052892234", Enhanced: true, Messaging: true, Branch: lrn.SourceCode},
	{Case: "split code, block without a thousands row: the code row", Number: "12052899234", Enhanced: true, Branch: lrn.SourceCode},
	{Case: "plain code, routes on itself", Number: "12014810234", Branch: lrn.SourceCode},
	{Case: "plain code, enhanced and messaging", Number: "12014810234", Enhanced: true, Messaging: true, Branch: lrn.SourceCode},
	{Case: "plain code 202-555", Number: "12025550000", Enhanced: true, Branch: lrn.SourceCode},
	{Case: "plain code, VoIP carrier, Hawaii time", Number: "18084160123", Enhanced: true, Messaging: true, Branch: lrn.SourceCode},
	{Case: "input with punctuation echoes canonical", Number: "+1 (202) 555-0123", Branch: lrn.SourcePorted},
	{Case: "ten digits", Number: "2014810234", Branch: lrn.SourceCode},
	{Case: "dotted", Number: "201.481.0234", Branch: lrn.SourceCode},
	{Case: "tel URI", Number: "tel:+12025550123;npdi;rn=+17718860000", Branch: lrn.SourcePorted},
	{Case: "vacant code", Number: "12025560123", Branch: lrn.ErrNotFound},
	{Case: "vacant code, enhanced and messaging", Number: "12025560123", Enhanced: true, Messaging: true, Branch: lrn.ErrNotFound},
	{Case: "vacant toll-free code", Number: "18005550123", Branch: lrn.ErrNotFound},
	{Case: "invalid: too short", Number: "12345", Branch: lrn.ErrInvalidNumber},
	{Case: "invalid: 10 digits with a leading 1", Number: "1202555012", Branch: lrn.ErrInvalidNumber},
	{Case: "invalid: N11 area code", Number: "14115550123", Branch: lrn.ErrInvalidNumber},
	{Case: "invalid: N9X area code", Number: "12905550123", Branch: lrn.ErrInvalidNumber},
	{Case: "invalid: N11 exchange", Number: "12024110123", Branch: lrn.ErrInvalidNumber},
	{Case: "invalid: 911 as area code", Number: "19115550123", Branch: lrn.ErrInvalidNumber},
	{Case: "invalid: N9X area code 999", Number: "+1 999 555 0123", Branch: lrn.ErrInvalidNumber},
	{Case: "invalid: 911 as exchange", Number: "12029110123", Branch: lrn.ErrInvalidNumber},
	{Case: "invalid: exchange starts with 0", Number: "(202) 055-0123", Branch: lrn.ErrInvalidNumber},
	{Case: "invalid: country code 44", Number: "+44 20 7946 0000", Branch: lrn.ErrInvalidNumber},
	{Case: "invalid: letters", Number: "1202555O123", Branch: lrn.ErrInvalidNumber},
	{Case: "invalid: empty", Number: "", Branch: lrn.ErrInvalidNumber},
}

func TestGolden(t *testing.T) {
	golden.Run(t, "lrn.json", lrnCases, func(db *format.DB, c golden.Case) (lrn.Result, error) {
		return lrn.Lookup(db, c.Number, lrn.Options{Enhanced: c.Enhanced, Messaging: c.Messaging})
	}, func(r lrn.Result) any { return r.Source })
}
