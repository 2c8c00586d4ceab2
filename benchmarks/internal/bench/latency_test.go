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

// The older floor targets are judged as the latency targets are: a median
// under the limit whose rounds straddle it is within the noise, not met.
func TestFloorTargetsJudgedBeyondTheNoise(t *testing.T) {
	r := &Results{Ported: 100_000_000, Cases: []CaseResult{
		{ID: "floor/read/1", Median: 100, NsPerNumber: []float64{100, 100, 100, 100, 100}},
		// Rounds at 1.8×, 1.9×, 1.95×, 2.3× and 2.4× the floor: median 1.95×.
		{ID: "lnpdb/lookup/1", Median: 195, XFloor: 1.95, NsPerNumber: []float64{180, 190, 195, 230, 240}},
		// All rounds under 3×.
		{ID: "lnpdb/lookup-full/1", Median: 280, XFloor: 2.8, NsPerNumber: []float64{270, 275, 280, 285, 290}},
	}}
	verdicts := map[string]string{}
	for _, tg := range r.Targets() {
		verdicts[tg.Goal] = tg.Verdict
		if tg.Goal == "≤ 2× the memory floor; 0 allocs/op" {
			assert.Contains(t, tg.Measured, "1.95× (IQR 1.90×–2.30×) floor")
		}
	}
	assert.Equal(t, "within the noise", verdicts["≤ 2× the memory floor; 0 allocs/op"])
	assert.Equal(t, "met", verdicts["≤ 3× the memory floor; 0 allocs/op"])
}
