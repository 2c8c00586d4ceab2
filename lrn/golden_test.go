package lrn_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/internal/testdb"
	"github.com/lnpdb/lnpdb/lrn"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// golden is one entry of a golden file: a lookup and its wire body.
type golden struct {
	Case      string          `json:"case"`
	Number    string          `json:"number"`
	Enhanced  bool            `json:"enhanced,omitempty"`
	Messaging bool            `json:"messaging,omitempty"`
	Body      json.RawMessage `json:"body"`

	// branch is how the case must resolve: a Source, or the error it must
	// be; it keeps the cases honest when the sample changes.
	branch any
}

// The golden numbers, by the branch of CONTRACT §2 they take in the sample.
var lrnCases = []golden{
	{Case: "ported", Number: "12025550123", branch: lrn.SourcePorted},
	{Case: "ported, enhanced: carrier is the new SPID, rate center stays", Number: "12025550123", Enhanced: true, branch: lrn.SourcePorted},
	{Case: "ported, messaging from the new carrier's default", Number: "12025550123", Messaging: true, branch: lrn.SourcePorted},
	{Case: "ported, enhanced and messaging", Number: "12025550123", Enhanced: true, Messaging: true, branch: lrn.SourcePorted},
	{Case: "ported, NPAC-format activation time", Number: "12014811095", Enhanced: true, Messaging: true, branch: lrn.SourcePorted},
	{Case: "ported, messaging record", Number: "12015826348", Enhanced: true, Messaging: true, branch: lrn.SourcePorted},
	{Case: "ported from a landline to a wireless carrier", Number: "12037769497", Enhanced: true, branch: lrn.SourcePorted},
	{Case: "ported within the last 7 days", Number: "12696300439", branch: lrn.SourcePorted},
	{Case: "pooled thousands-block", Number: "12052890234", branch: lrn.SourcePooled},
	{Case: "pooled thousands-block, enhanced and messaging: no provider", Number: "12052890234", Enhanced: true, Messaging: true, branch: lrn.SourcePooled},
	{Case: "pooled thousands-block activated within the last 7 days", Number: "15628419234", Enhanced: true, branch: lrn.SourcePooled},
	{Case: "thousands-block without LRN (retained): routes on itself", Number: "12052892234", Enhanced: true, Messaging: true, branch: lrn.SourceCode},
	{Case: "split code, block without a thousands row: the code row", Number: "12052899234", Enhanced: true, branch: lrn.SourceCode},
	{Case: "plain code, routes on itself", Number: "12014810234", branch: lrn.SourceCode},
	{Case: "plain code, enhanced and messaging", Number: "12014810234", Enhanced: true, Messaging: true, branch: lrn.SourceCode},
	{Case: "plain code 202-555", Number: "12025550000", Enhanced: true, branch: lrn.SourceCode},
	{Case: "plain code, VoIP carrier, Hawaii time", Number: "18084160123", Enhanced: true, Messaging: true, branch: lrn.SourceCode},
	{Case: "input with punctuation echoes canonical", Number: "+1 (202) 555-0123", branch: lrn.SourcePorted},
	{Case: "ten digits", Number: "2014810234", branch: lrn.SourceCode},
	{Case: "dotted", Number: "201.481.0234", branch: lrn.SourceCode},
	{Case: "tel URI", Number: "tel:+12025550123;npdi;rn=+17718860000", branch: lrn.SourcePorted},
	{Case: "vacant code", Number: "12025560123", branch: lrn.ErrNotFound},
	{Case: "vacant code, enhanced and messaging", Number: "12025560123", Enhanced: true, Messaging: true, branch: lrn.ErrNotFound},
	{Case: "vacant toll-free code", Number: "18005550123", branch: lrn.ErrNotFound},
	{Case: "invalid: too short", Number: "12345", branch: lrn.ErrInvalidNumber},
	{Case: "invalid: 10 digits with a leading 1", Number: "1202555012", branch: lrn.ErrInvalidNumber},
	{Case: "invalid: N11 area code", Number: "14115550123", branch: lrn.ErrInvalidNumber},
	{Case: "invalid: N9X area code", Number: "12905550123", branch: lrn.ErrInvalidNumber},
	{Case: "invalid: N11 exchange", Number: "12024110123", branch: lrn.ErrInvalidNumber},
	{Case: "invalid: country code 44", Number: "+44 20 7946 0000", branch: lrn.ErrInvalidNumber},
	{Case: "invalid: letters", Number: "1202555O123", branch: lrn.ErrInvalidNumber},
	{Case: "invalid: empty", Number: "", branch: lrn.ErrInvalidNumber},
}

func TestGolden(t *testing.T) {
	db := testdb.Sample(t)
	got := make([]golden, len(lrnCases))
	for i, c := range lrnCases {
		r, err := lrn.Lookup(db, c.Number, lrn.Options{Enhanced: c.Enhanced, Messaging: c.Messaging})
		if want, ok := c.branch.(error); ok {
			assert.ErrorIs(t, err, want, c.Case)
		} else {
			assert.Equal(t, c.branch, r.Source, c.Case)
		}
		c.Body = wireBody(t, r, err)
		got[i] = c
	}
	checkGolden(t, "lrn.json", got)
}

// wireBody is the REST body for a lookup's answer: the result, or the
// CONTRACT §6 error body.
func wireBody(t *testing.T, v any, err error) json.RawMessage {
	t.Helper()
	if err != nil {
		v = errorBodyFor(t, err)
	}
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// errorBody is the CONTRACT §6 error body, fields in wire order.
type errorBody struct {
	Error   string `json:"error"`
	Code    string `json:"code"`
	Details string `json:"details"`
}

func errorBodyFor(t *testing.T, err error) errorBody {
	t.Helper()
	switch {
	case errors.Is(err, lnpdb.ErrInvalidNumber):
		return errorBody{"Invalid phone number format", "INVALID_PHONE_NUMBER", "Phone number must be 11 digits starting with 1"}
	case errors.Is(err, lnpdb.ErrNotFound):
		return errorBody{"Number not found", "NUMBER_NOT_FOUND", "The number's NPA-NXX code is not assigned to any carrier"}
	}
	t.Fatalf("unexpected error: %v", err)
	return errorBody{}
}

// checkGolden compares got with testdata/golden/name, or rewrites the file
// with -update. Bodies compare byte for byte in compact form.
func checkGolden(t *testing.T, name string, got []golden) {
	t.Helper()
	path := filepath.Join("..", "testdata", "golden", name)
	if *update {
		b, err := json.MarshalIndent(got, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
		return
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create it")
	var want []golden
	require.NoError(t, json.Unmarshal(b, &want))
	require.Len(t, got, len(want), "cases differ from %s; run go test -update", path)
	for i := range want {
		var compact bytes.Buffer
		require.NoError(t, json.Compact(&compact, want[i].Body))
		assert.Equal(t, want[i].Case, got[i].Case)
		assert.Equal(t, want[i].Number, got[i].Number, want[i].Case)
		assert.Equal(t, compact.String(), string(got[i].Body), "%s: %s", want[i].Case, want[i].Number)
	}
}
