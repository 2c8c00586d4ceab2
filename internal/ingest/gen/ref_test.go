package gen

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/internal/core/nanp"
)

func TestReference(t *testing.T) {
	ref, err := loadReference()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(ref.npas), 350)
	states := map[string]bool{}
	for _, n := range ref.npas {
		assert.True(t, nanp.ValidNPA(n.npa), "NPA %d", n.npa)
		require.NotEmpty(t, n.places, "NPA %d", n.npa)
		for _, p := range n.places {
			assert.Equal(t, n.state, ref.places[p].state, "NPA %d serves a city of its state", n.npa)
		}
		states[n.state] = true
	}
	assert.GreaterOrEqual(t, len(states), 51, "every state and DC")
	for _, p := range ref.places {
		_, err := time.LoadLocation(p.tz)
		assert.NoError(t, err, p.city)
		assert.Regexp(t, zipRE, p.zip, p.city)
		assert.Regexp(t, lataRE, p.lata, p.city)
	}
	// Known facts.
	zone := func(npa int) (string, string) {
		for _, n := range ref.npas {
			if n.npa == npa {
				return n.state, ref.places[n.places[0]].tz
			}
		}
		return "", ""
	}
	for _, tc := range []struct {
		npa       int
		state, tz string
	}{
		{202, "DC", "America/New_York"},
		{312, "IL", "America/Chicago"},
		{907, "AK", "America/Anchorage"},
		{808, "HI", "Pacific/Honolulu"},
		{602, "AZ", "America/Phoenix"},
		{915, "TX", "America/Denver"},
		{213, "CA", "America/Los_Angeles"},
		{303, "CO", "America/Denver"},
		{317, "IN", "America/Indiana/Indianapolis"},
		{787, "PR", "America/Puerto_Rico"},
	} {
		st, tz := zone(tc.npa)
		assert.Equal(t, tc.state, st, "state of %d", tc.npa)
		assert.Equal(t, tc.tz, tz, "time zone of %d", tc.npa)
	}
}

func TestParseReferenceErrors(t *testing.T) {
	const head = "npa,state,city,county,zip_code,lata,timezone\n"
	for _, tc := range []struct{ name, text string }{
		{"N11 NPA", head + "211,DC,Washington,District of Columbia,20001,236,America/New_York\n"},
		{"N9X NPA", head + "292,DC,Washington,District of Columbia,20001,236,America/New_York\n"},
		{"overlay first", head + "771,DC,Washington,,,,\n"},
		{"two states", head + "202,DC,Washington,District of Columbia,20001,236,America/New_York\n202,MD,Rockville,Montgomery,20850,236,America/New_York\n"},
		{"city twice", head + "202,DC,Washington,District of Columbia,20001,236,America/New_York\n771,DC,Washington,District of Columbia,20001,236,America/New_York\n"},
	} {
		_, err := parseReference(tc.text)
		assert.Error(t, err, tc.name)
	}
}
