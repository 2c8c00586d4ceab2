package lnpdb_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
)

// TestParseNumber: every form CONTRACT §1 accepts gives the one Number,
// whose String is the canonical form and National the 10 digits; a number
// that breaks a NANP rule is ErrInvalidNumber, saying which rule.
func TestParseNumber(t *testing.T) {
	want, err := lnpdb.ParseNumber("12025550123")
	require.NoError(t, err)
	assert.Equal(t, "12025550123", want.String())
	assert.Equal(t, uint64(2025550123), want.National())
	assert.False(t, want.IsZero())
	for _, in := range []string{"2025550123", "+1 (202) 555-0123", "202.555.0123", "tel:+1-202-555-0123;npdi"} {
		n, err := lnpdb.ParseNumber(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, n, in)
	}
	for in, why := range map[string]string{
		"":             "",
		"12025550123x": "",
		"19115550123":  "NPA 911 is an N11 code",
		"12020550123":  "NXX 055 starts with 0",
	} {
		n, err := lnpdb.ParseNumber(in)
		require.ErrorIs(t, err, lnpdb.ErrInvalidNumber, in)
		assert.Contains(t, err.Error(), why, in)
		assert.True(t, n.IsZero(), in)
	}
	var zero lnpdb.Number
	assert.Equal(t, "", zero.String())
	assert.Zero(t, zero.National())
}

// TestParseNumberCanonicalAllocatesNothing: a canonical number's Number
// holds the input itself.
func TestParseNumberCanonicalAllocatesNothing(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage counters allocate")
	}
	s := "12025550123"
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		if _, err := lnpdb.ParseNumber(s); err != nil {
			panic(err)
		}
	}))
}
