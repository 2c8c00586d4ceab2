package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A target is met or not met only when the rounds' interquartile range is
// on one side of it.
func TestSpreadVerdicts(t *testing.T) {
	for _, c := range []struct {
		rounds          []float64
		limit           float64
		atMost, atLeast string
	}{
		{[]float64{1.0, 1.1, 1.2}, 1.25, "met", "**not met**"},
		{[]float64{1.0, 1.1, 1.2}, 0.9, "**not met**", "met"},
		{[]float64{1.0, 1.2, 1.4}, 1.2, "within the noise", "within the noise"},
		{[]float64{1.3, 1.0, 2.0, 1.1, 1.2}, 1.15, "within the noise", "within the noise"},
		{[]float64{1.3, 1.0, 2.0, 1.1, 1.2}, 1.3, "met", "within the noise"},
		{[]float64{1.3, 1.0, 2.0, 1.1, 1.2}, 1.35, "met", "**not met**"},
	} {
		s := spreadOf(c.rounds)
		assert.Equal(t, c.atMost, s.AtMost(c.limit), "%v ≤ %v (%v)", c.rounds, c.limit, s)
		assert.Equal(t, c.atLeast, s.AtLeast(c.limit), "%v ≥ %v (%v)", c.rounds, c.limit, s)
	}
	s := spreadOf([]float64{4, 1, 3, 2, 5})
	assert.Equal(t, Spread{3, 2, 4}, s)
	assert.Equal(t, "3.00× (IQR 2.00×–4.00×)", s.String())
}

// Round ratios pair the rounds of two cases.
func TestRoundRatios(t *testing.T) {
	r := &Results{Cases: []CaseResult{
		{ID: "a", NsPerNumber: []float64{10, 30, 20}},
		{ID: "b", NsPerNumber: []float64{5, 10, 10}},
		{ID: "c", NsPerNumber: []float64{5}},
	}}
	assert.Equal(t, []float64{2, 3, 2}, r.RoundRatios("a", "b"))
	assert.Nil(t, r.RoundRatios("a", "c"), "different round counts")
	assert.Nil(t, r.RoundRatios("a", "missing"))
}
