package cnam

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lnpdb/lnpdb/format"
)

func TestLocation(t *testing.T) {
	for _, tt := range []struct {
		city, name, state, want string
	}{
		{"Washington", "WASHINGTON", "DC", "WASHINGTON DC"},
		{"Salt Lake City", "SALT LAKE CITY", "UT", "SALT LAKE CI UT"},
		{"Ojai", "OJAI", "CA", "OJAI CA"},
		{"", "WAUKEGAN", "IL", "WAUKEGAN IL"},
		{"Twelve Chars", "X", "NY", "TWELVE CHARS NY"},
		{"Thirteen Char", "X", "NY", "THIRTEEN CHA NY"},
		{"Los  Angeles X", "X", "CA", "LOS  ANGELES CA"},
		{"Española", "ESPANOLA", "NM", "ESPAÑOLA NM"},
		{"Las Cruces del Norte", "X", "", "LAS CRUCES DEL"},
	} {
		rc := &format.RateCenter{City: tt.city, Name: tt.name, State: tt.state}
		assert.Equal(t, tt.want, location(rc), "%+v", tt)
	}
	assert.Equal(t, "", location(nil))
}
