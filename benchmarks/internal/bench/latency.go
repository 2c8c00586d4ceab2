package bench

import (
	"fmt"
	"slices"
	"strings"
)

// RoundRatios is a's time per number over b's, one ratio per round (both
// measured in the same round); nil if either is missing.
func (r *Results) RoundRatios(a, b string) []float64 {
	ca, cb := r.Case(a), r.Case(b)
	if ca == nil || cb == nil || len(ca.NsPerNumber) != len(cb.NsPerNumber) {
		return nil
	}
	rs := make([]float64, len(ca.NsPerNumber))
	for k := range ca.NsPerNumber {
		rs[k] = ca.NsPerNumber[k] / cb.NsPerNumber[k]
	}
	return rs
}

// Spread is the median of per-round ratios and their quartiles.
type Spread struct{ Median, Q1, Q3 float64 }

func spreadOf(rs []float64) Spread {
	if len(rs) == 0 {
		return Spread{}
	}
	return Spread{median(rs), quantile(rs, 0.25), quantile(rs, 0.75)}
}

func (s Spread) String() string {
	return fmt.Sprintf("%s (IQR %s–%s)", x(s.Median), x(s.Q1), x(s.Q3))
}

// AtMost judges "≤ limit" beyond the noise: met when even the upper
// quartile of the rounds is within it, not met when even the lower quartile
// exceeds it, and within the noise otherwise.
func (s Spread) AtMost(limit float64) string {
	switch {
	case s.Q3 <= limit:
		return "met"
	case s.Q1 > limit:
		return "**not met**"
	}
	return "within the noise"
}

// AtLeast judges "≥ limit" beyond the noise, as AtMost.
func (s Spread) AtLeast(limit float64) string {
	switch {
	case s.Q1 >= limit:
		return "met"
	case s.Q3 < limit:
		return "**not met**"
	}
	return "within the noise"
}

// quantile of xs at f in [0, 1], by linear interpolation.
func quantile(xs []float64, f float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	pos := f * float64(len(s)-1)
	i := int(pos)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}

// Configs are the lnpdb configurations this run timed: "lnpdb" (the
// default Open) and VariantSystem(v) for each variant.
func (r *Results) Configs() []string {
	cs := []string{"lnpdb"}
	for _, v := range r.Variants {
		cs = append(cs, VariantSystem(v))
	}
	return cs
}

// LatencyTarget is one row of the latency targets table: per configuration
// (Configs), what was measured and the verdict.
type LatencyTarget struct {
	Figure, Goal      string
	Measured, Verdict []string
}

// LatencyTargets evaluates the one-cache-line-per-lookup targets from each
// round's ratios: the median over rounds, met or not met only when the
// rounds' interquartile range is on one side of the limit.
func (r *Results) LatencyTargets() []LatencyTarget {
	configs := r.Configs()
	var ts []LatencyTarget
	add := func(figure, goal string, f func(sys string) (string, string)) {
		t := LatencyTarget{Figure: figure, Goal: goal}
		seen := false
		for _, sys := range configs {
			m, v := f(sys)
			seen = seen || m != "—"
			t.Measured, t.Verdict = append(t.Measured, m), append(t.Verdict, v)
		}
		if seen {
			ts = append(ts, t)
		}
	}
	floorRow := func(id, figure string, limit float64) {
		add(figure, fmt.Sprintf("≤ %.2f× floor", limit), func(sys string) (string, string) {
			rs := r.RoundRatios(sys+id, "floor/read/1")
			if rs == nil {
				return "—", ""
			}
			s := spreadOf(rs)
			return s.String() + " floor", s.AtMost(limit)
		})
	}
	floorRow("/lookup-dep/1", "`lrn.Lookup`, dependent latency (each query's number depends on the previous answer)", 1.25)
	add("`lrn.Lookup` in a loop vs a Go map of the same records (one goroutine; whole table file vs map heap)", "≥ 1.5× faster, at ≤ 25 % of its memory", func(sys string) (string, string) {
		rs := r.RoundRatios("map/lookup/1", sys+"/lookup/1")
		m, l := r.System("map"), r.System("lnpdb")
		if rs == nil || m == nil || l == nil || m.MemoryBytes == 0 {
			return "—", ""
		}
		s := spreadOf(rs)
		mem := float64(l.MemoryBytes) / float64(m.MemoryBytes)
		v := s.AtLeast(1.5)
		if mem > 0.25 {
			v = "**not met**"
		}
		return fmt.Sprintf("%s (map's time over lnpdb's %s); %.0f %% of its memory", faster(s.Median), s, 100*mem), v
	})
	floorRow("/lookup-full-dep/1", "`lrn.Lookup` enhanced + messaging, dependent latency", 1.5)
	add("`lrn.LookupMany`, per number (batches of 1024)", "≤ 0.25× floor, and ≥ 4× the loop", func(sys string) (string, string) {
		f := r.RoundRatios(sys+"/lookupmany/1", "floor/read/1")
		l := r.RoundRatios(sys+"/lookup/1", sys+"/lookupmany/1")
		if f == nil || l == nil {
			return "—", ""
		}
		sf, sl := spreadOf(f), spreadOf(l)
		v := sf.AtMost(0.25) + " / " + sl.AtLeast(4)
		return fmt.Sprintf("%s floor; %s the loop's throughput", sf, sl), v
	})
	if len(configs) > 1 {
		add("this configuration vs the default Open: time of dependent `lrn.Lookup` / loop / `lrn.LookupMany`", "figure", func(sys string) (string, string) {
			if sys == "lnpdb" {
				return "1 (the reference)", ""
			}
			var parts []string
			for _, id := range []string{"/lookup-dep/1", "/lookup/1", "/lookupmany/1"} {
				if rs := r.RoundRatios(sys+id, "lnpdb"+id); rs != nil {
					parts = append(parts, spreadOf(rs).String())
				}
			}
			if parts == nil {
				return "—", ""
			}
			return strings.Join(parts, " / "), ""
		})
	}
	bpn := r.LNPDB.BytesPerPorted
	add("bytes per ported number, whole file"+map[bool]string{true: "", false: fmt.Sprintf(" (target set for 100M; here %s)", r.Label)}[r.Ported >= 100_000_000],
		"≤ 12", func(string) (string, string) {
			return fmt.Sprintf("%.2f B/number", bpn), verdict(bpn <= 12)
		})
	return ts
}

// MixSentence says which query mix the run used and what it held.
func (q QueryInfo) MixSentence() string {
	var vac string
	switch q.MixName() {
	case MixProbe:
		vac = fmt.Sprintf("%d in vacant NPA-NXX codes of populated NPAs (NPAs that hold ported numbers; %d counted there), so that every query probes the table", q.MissVacant, q.VacantPopulated)
	default:
		vac = fmt.Sprintf("%d in vacant NPA-NXX codes drawn anywhere in the NANP", q.MissVacant)
		if q.Mix != "" {
			vac += fmt.Sprintf(" (%d of them in NPAs holding ported numbers; the others may be answered without touching the table)", q.VacantPopulated)
		}
	}
	return fmt.Sprintf("Query mix **%s**: the same sequence of %d numbers for every system: %d ported (hits), %d in assigned codes or blocks but not ported, %s; shuffled.",
		q.MixName(), q.Count, q.Hits, q.MissAssigned, vac)
}
