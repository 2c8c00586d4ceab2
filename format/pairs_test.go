package format

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPairsSVType: a route keeps its SV Type through the PAIRS section,
// and one past the NPAC's range is damage.
func TestPairsSVType(t *testing.T) {
	ps := []lrnPair{{0, 1, SVTypeNone}, {1, 0, SVTypeVoIP}, {0, 1, MaxSVType}}
	got, err := decodePairs(encodePairs(ps, []uint32{0, 1}), 2, 2)
	require.NoError(t, err)
	assert.Equal(t, ps, got)

	_, err = decodePairs(encodePairs([]lrnPair{{0, 0, MaxSVType + 1}}, []uint32{0}), 1, 1)
	require.ErrorContains(t, err, "SV Type 12")
	assert.Equal(t, "sv-type-10", MaxSVType.String())
	assert.Equal(t, "vowifi", SVTypeVoWiFi.String())
}
