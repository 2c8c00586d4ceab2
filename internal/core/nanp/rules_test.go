package nanp

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRuleErrors(t *testing.T) {
	tests := []struct {
		in, rule string
	}{
		{"19115550123", "NPA 911 is an N11 code, which is not a geographic area code"},
		{"12115550123", "NPA 211 is an N11 code, which is not a geographic area code"},
		{"12905550123", "NPA 290 is an N9X code, reserved for expanding the numbering plan, not a geographic area code"},
		{"19995550123", "NPA 999 is an N9X code, reserved for expanding the numbering plan, not a geographic area code"},
		{"10205550123", "NPA 020 starts with 0, but an area code starts with 2-9"},
		{"11205550123", "NPA 120 starts with 1, but an area code starts with 2-9"},
		{"12029110123", "NXX 911 is an N11 code, which is reserved for service codes such as 411 and 911 and never assigned as an exchange code"},
		{"12020550123", "NXX 055 starts with 0, but an exchange code starts with 2-9"},
		{"tel:+12021550123;npdi", "NXX 155 starts with 1, but an exchange code starts with 2-9"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			_, _, err := Parse(tc.in)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalid)
			assert.Equal(t, "lnpdb: invalid phone number: "+tc.rule, err.Error())
			rule, ok := Rule(err)
			assert.True(t, ok)
			assert.Equal(t, tc.rule, rule)
			// Wrapped, as a caller may return it.
			rule, ok = Rule(fmt.Errorf("row 3: %w", err))
			assert.True(t, ok)
			assert.Equal(t, tc.rule, rule)
		})
	}
	// A malformed number breaks no NANP rule: it is not a number at all.
	for _, in := range []string{"", "202555012", "1202555012", "22025550123", "1-800-FLOWERS", "+44 20 7183 8750"} {
		_, _, err := Parse(in)
		require.ErrorIs(t, err, ErrInvalid, in)
		rule, ok := Rule(err)
		assert.False(t, ok, "%q: %v", in, err)
		assert.Empty(t, rule)
	}
	rule, ok := Rule(nil)
	assert.False(t, ok)
	assert.Empty(t, rule)
}

// ruleError checks that err is a *RuleError about part and code, and
// returns it.
func ruleError(t *testing.T, err error, part string, code int) *RuleError {
	t.Helper()
	var re *RuleError
	require.True(t, errors.As(err, &re))
	assert.Equal(t, part, re.Part)
	assert.Equal(t, code, re.Code)
	return re
}

func TestCheckCodes(t *testing.T) {
	var npas, nxxs int
	for c := range 1000 {
		npaErr, nxxErr := CheckNPA(c), CheckNXX(c)
		assert.Equal(t, npaErr == nil, ValidNPA(c), c)
		assert.Equal(t, nxxErr == nil, ValidNXX(c), c)
		// The one statement of the rules agrees with a number's validity.
		assert.Equal(t, npaErr == nil, Number(c*10_000_000+5550123).Valid(), "NPA %d", c)
		assert.Equal(t, nxxErr == nil, Number(2020000123+c*10_000).Valid(), "NXX %d", c)
		if npaErr == nil {
			npas++
		} else {
			assert.Contains(t, ruleError(t, npaErr, "NPA", c).Rule, fmt.Sprintf("NPA %03d ", c))
		}
		if nxxErr == nil {
			nxxs++
		} else {
			ruleError(t, nxxErr, "NXX", c)
		}
	}
	assert.Equal(t, 712, npas, "800 [2-9]XX less 8 N11 and 80 N9X")
	assert.Equal(t, 792, nxxs, "800 [2-9]XX less 8 N11")
	for _, c := range []int{-1, 1000, 2020} {
		assert.False(t, ValidNPA(c), c)
		assert.False(t, ValidNXX(c), c)
	}
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = CheckNPA(911) }))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = Rule(CheckNXX(911)) }))
}
