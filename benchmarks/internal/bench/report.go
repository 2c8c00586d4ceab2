package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// SystemOrder is the order systems appear in tables and charts.
var SystemOrder = []string{"lnpdb", "map", "sqlite", "redis", "bbolt", "floor"}

// Case returns the case with the given ID, or nil.
func (r *Results) Case(id string) *CaseResult {
	for i := range r.Cases {
		if r.Cases[i].ID == id {
			return &r.Cases[i]
		}
	}
	return nil
}

// System returns the named system's info, or nil.
func (r *Results) System(name string) *SystemInfo {
	for i := range r.Systems {
		if r.Systems[i].Name == name {
			return &r.Systems[i]
		}
	}
	return nil
}

// RunRatio is the median over runs of a's time per number divided by b's in
// the same run; 0 if either is missing.
func (r *Results) RunRatio(a, b string) float64 {
	ca, cb := r.Case(a), r.Case(b)
	if ca == nil || cb == nil || len(ca.NsPerNumber) != len(cb.NsPerNumber) {
		return 0
	}
	var rs []float64
	for k := range ca.NsPerNumber {
		rs = append(rs, ca.NsPerNumber[k]/cb.NsPerNumber[k])
	}
	return median(rs)
}

// Target is one row of ARCHITECTURE.md's targets table as this run measured it.
type Target struct {
	Figure, Goal, Measured, Verdict string
}

// faster says how much faster lnpdb is, given the peer's time over lnpdb's.
func faster(x float64) string {
	switch {
	case x >= 10:
		return fmt.Sprintf("%.0f× faster", x)
	case x >= 1:
		return fmt.Sprintf("%.2f× faster", x)
	}
	return fmt.Sprintf("%.2f× slower", 1/x)
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

// Targets evaluates the targets of ARCHITECTURE.md ("Performance: what the
// benchmarks must show") that this run measured.
func (r *Results) Targets() []Target {
	var ts []Target
	at100M := r.Ported >= 100_000_000
	scale := ""
	if !at100M {
		scale = fmt.Sprintf(" (target set for 100M; here %s)", r.Label)
	}
	floorCase := func(id, figure, goal string, limit float64) {
		c := r.Case(id)
		if c == nil {
			return
		}
		// Judged as the latency targets are: on the rounds' ratios, met or
		// not met only beyond the noise.
		measured, v := fmt.Sprintf("%.2f×", c.XFloor), verdict(c.XFloor <= limit)
		if rs := r.RoundRatios(id, "floor/read/1"); rs != nil {
			s := spreadOf(rs)
			measured, v = s.String(), s.AtMost(limit)
		}
		if c.AllocsPerCall != 0 {
			v = verdict(false)
		}
		ts = append(ts, Target{figure + scale, goal,
			fmt.Sprintf("%s floor (%s vs %s); %s allocs/op", measured, ns(c.Median), ns(r.Case("floor/read/1").Median), num(c.AllocsPerCall)), v})
	}
	floorCase("lnpdb/lookup/1", "LRN lookup (lrn.Lookup), random hits and misses, one goroutine", "≤ 2× the memory floor; 0 allocs/op", 2)
	floorCase("lnpdb/lookup-full/1", "LRN + enhanced + messaging, one goroutine", "≤ 3× the memory floor; 0 allocs/op", 3)
	for _, p := range []struct{ batch, loop, what string }{
		{"lnpdb/lookupmany/1", "lnpdb/lookup/1", "lrn.LookupMany vs a loop over lrn.Lookup"},
		{"lnpdb/lookupmany-full/1", "lnpdb/lookup-full/1", "lrn.LookupMany vs lrn.Lookup, enhanced+messaging"},
		{"lnpdb/getmany/1", "lnpdb/get/1", "db.GetMany vs a loop over db.Get"},
	} {
		if x := r.RunRatio(p.loop, p.batch); x > 0 {
			ts = append(ts, Target{"batch lookups: " + p.what, "≥ 4× the throughput", fmt.Sprintf("%.2f×", x), verdict(x >= 4)})
		}
	}
	if c := r.Case("lnpdb/lookup/1"); c != nil && c.XMap > 0 {
		m, l := r.System("map"), r.System("lnpdb")
		mem := float64(l.MemoryBytes) / float64(m.MemoryBytes)
		ts = append(ts, Target{"vs a Go map holding the same records (lrn.Lookup vs m[tn], one goroutine; whole table file vs map heap)",
			"≥ 1.5× faster at ≤ 25 % of its memory",
			fmt.Sprintf("%s; %.0f %% of its memory (%s vs %s)", faster(1/c.XMap), 100*mem, bytesStr(l.MemoryBytes), bytesStr(m.MemoryBytes)),
			verdict(1/c.XMap >= 1.5 && mem <= 0.25)})
	}
	for _, p := range []struct{ peer, what string }{
		{"sqlite/lookup/1", "SQLite (prepared SELECT by primary key)"},
		{"redis/lookup/1", "Redis (HMGET, one round trip per number)"},
		{"redis/pipelined/1", "Redis pipelined vs lrn.LookupMany"},
	} {
		l := "lnpdb/lookup/1"
		if strings.Contains(p.peer, "pipelined") {
			l = "lnpdb/lookupmany/1"
		}
		if x := r.RunRatio(p.peer, l); x > 0 {
			ts = append(ts, Target{"vs " + p.what + ", one goroutine", "≥ 30× faster", faster(x), verdict(x >= 30)})
		}
	}
	ts = append(ts, Target{"file size, all sections" + scale, "≤ 12 bytes per ported number",
		fmt.Sprintf("%.2f B/number (%s)", r.LNPDB.BytesPerPorted, bytesStr(r.LNPDB.FileBytes)), verdict(r.LNPDB.BytesPerPorted <= 12)})
	ts = append(ts, Target{"`Open`", "independent of table size", fmt.Sprintf("%.2f ms (compare sizes in README.md)", r.LNPDB.OpenNs/1e6), "see README"})
	if r.LNPDB.BuildSeconds > 0 {
		v := "n/a below 100M"
		if at100M {
			v = verdict(r.LNPDB.BuildSeconds <= 240 && r.LNPDB.BuildPeakRSS <= 4<<30)
		}
		ts = append(ts, Target{"build, 100M ported numbers, 2 cores", "≤ 4 min, peak RSS ≤ 4 GB",
			fmt.Sprintf("%s, peak RSS %s (%s)", secs(r.LNPDB.BuildSeconds), bytesStr(r.LNPDB.BuildPeakRSS), r.Label), v})
	}
	return ts
}

// WriteMarkdown writes the results table of one run.
func (r *Results) WriteMarkdown(w io.Writer, png string) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("# lnpdb and its peers, %s ported numbers, %s query mix\n\n", r.Label, r.Queries.MixName())
	p("Generated by `benchmarks/run.sh %d` on %s. ", r.Ported, r.Date.Format("2006-01-02 15:04 MST"))
	p("Machine: %d CPUs (`nproc`), GOMAXPROCS %d, %s%s, %s RAM, Linux %s, %s. ",
		r.Machine.NProc, r.Machine.GOMAXPROCS, r.Machine.CPU, map[bool]string{true: " (virtual machine)", false: ""}[r.Machine.Hypervisor],
		bytesStr(r.Machine.MemTotal), r.Machine.Kernel, r.Machine.GoVersion)
	p("Every figure is the **median of %d runs**; a run times each benchmark for %s, all benchmarks in a new shuffled order each round. ", r.Runs, r.Benchtime)
	p("Ratios (× floor, × map) are taken within each round and their median reported, so drift between rounds cancels.\n\n")
	p("%s ", r.Queries.MixSentence())
	p("All cores means %d goroutines (`b.RunParallel`), Redis's unpipelined case %d.\n\n", r.Machine.GOMAXPROCS, r.Machine.GOMAXPROCS*RedisProcs)
	for _, n := range r.Notes {
		p("%s\n\n", n)
	}
	if png != "" {
		p("![ns per number, log scale](%s)\n\n", png)
	}

	p("## Targets (ARCHITECTURE.md, \"Performance: what the benchmarks must show\")\n\n")
	p("| figure | target | measured | |\n|---|---|---|---|\n")
	for _, t := range r.Targets() {
		p("| %s | %s | %s | %s |\n", t.Figure, t.Goal, t.Measured, t.Verdict)
	}
	p("| REST over loopback | ≥ 50 %% of bare net/http, p99 ≤ 10 ms | not measured here (HTTP adapter benchmarks) | |\n\n")

	configs := r.Configs()
	p("## Latency targets: one cache line per lookup (%s query mix)\n\n", r.Queries.MixName())
	p("The targets of table format version 3, beside those above, which they sharpen: latency of dependent lookups rather than a loop's throughput, judged on the probe query mix (every query probes the table). ")
	p("Each figure is the median over the %d rounds of a ratio taken within a round, with the interquartile range of those ratios; a target is met or not met only when the whole interquartile range is on one side of it, else it is within the noise. ", r.Runs)
	p("Columns: the default `format.Open`")
	for _, v := range r.Variants {
		p(", and %s: the same table opened once more with the `%s` options (one goroutine)", VariantSystem(v), v)
	}
	p(".\n\n| figure | target |")
	for _, c := range configs {
		p(" %s | |", c)
	}
	p("\n|---|---|%s\n", strings.Repeat("---|---|", len(configs)))
	for _, t := range r.LatencyTargets() {
		p("| %s | %s |", t.Figure, t.Goal)
		for i := range t.Measured {
			p(" %s | %s |", t.Measured[i], t.Verdict[i])
		}
		p("\n")
	}
	p("\n")

	p("## Lookups\n\n")
	p("ns per number looked up (a batch call's time divided by its %d numbers); × floor and × map: that time over the memory floor's and the Go map's in the same round and mode (lower is faster); allocs per call; noise: the interquartile range of the runs over their median.\n\n", Batch)
	p("| system | operation | 1 goroutine | × floor | × map | allocs | all cores | × floor | × map | allocs | noise 1 / all |\n")
	p("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, sys := range r.systemOrder() {
		seen := map[string]bool{}
		for _, c := range r.Cases {
			if c.System != sys || c.Parallel || c.Dependent {
				continue
			}
			base := strings.TrimSuffix(c.ID, "/1")
			if seen[base] {
				continue
			}
			seen[base] = true
			pc := r.Case(base + "/all-cores")
			perCall := ""
			if c.PerCall > 1 {
				perCall = fmt.Sprintf(" (batches of %d)", c.PerCall)
			}
			p("| %s | %s%s | %s | %s | %s | %s |", sys, c.Name, perCall, ns(c.Median), x(c.XFloor), x(c.XMap), num(c.AllocsPerCall))
			if pc != nil {
				p(" %s | %s | %s | %s | %.0f %% / %.0f %% |\n", ns(pc.Median), x(pc.XFloor), x(pc.XMap), num(pc.AllocsPerCall), 100*iqr(c.NsPerNumber), 100*iqr(pc.NsPerNumber))
			} else {
				p(" | | | | %.0f %% |\n", 100*iqr(c.NsPerNumber))
			}
		}
	}
	p("\n## Dependent latency\n\n")
	p("One goroutine; each query's number is chosen by the previous answer (the next index in the sequence skips 0–7 queries by a value computed from the answer's bytes and the step count, so that the walk sweeps the queries rather than circling a few whose lines stay cached), so a lookup cannot start before the one before it has answered: the time is a lookup's latency, like the memory floor's dependent reads (a vacant answer carries no bytes, so once the CPU has predicted its not-found branch the next lookup may start early). ")
	p("× floor and × map: over the floor's and the map's dependent case in the same round, medians over rounds.\n\n")
	p("| system | operation | ns | × floor | × map (dependent) | allocs | noise |\n|---|---|--:|--:|--:|--:|--:|\n")
	for _, sys := range r.systemOrder() {
		for _, c := range r.Cases {
			if c.System == sys && (c.Dependent || c.ID == "floor/read/1") {
				p("| %s | %s | %s | %s | %s | %s | %.0f %% |\n", sys, c.Name, ns(c.Median), x(c.XFloor), x(r.RunRatio(c.ID, "map/lookup-dep/1")), num(c.AllocsPerCall), 100*iqr(c.NsPerNumber))
			}
		}
	}
	p("\n## Load and footprint\n\n")
	p("Load: from the source CSVs to ready to answer. lnpdb: `lnpdb build` (all sections: ported, messaging, CNAM, trust, blocks). ")
	p("Peers: ported.csv parsed once with the library's reader (%s) — plus, for SQLite and bbolt, sorted by number (%s) for their fastest bulk load — plus their own insert.\n\n",
		secs(r.ReadCSVSeconds), secs(r.SortSeconds))
	p("| system | status | load | of which insert | memory to answer at full speed | B/number | on disk | RSS growth |\n|---|---|--:|--:|---|--:|--:|--:|\n")
	for _, sys := range SystemOrder {
		s := r.System(sys)
		if s == nil {
			continue
		}
		if s.Status != "ok" {
			p("| %s | %s | | | | | | |\n", sys, s.Status)
			continue
		}
		p("| %s | ok | %s | %s | %s (%s) | %.1f | %s | %s |\n", sys, secs(s.LoadSeconds), secs(s.InsertSeconds),
			bytesStr(s.MemoryBytes), s.MemoryKind, float64(s.MemoryBytes)/float64(r.Ported), orDash(s.DiskBytes), orDash(s.RSSDeltaBytes))
	}
	p("\n## The lnpdb table\n\n")
	p("| | |\n|---|---|\n")
	if r.LNPDB.GenSeconds > 0 {
		p("| `lnpdb gen` | %s, %s of CSV, peak RSS %s |\n", secs(r.LNPDB.GenSeconds), bytesStr(r.LNPDB.GenBytes), bytesStr(r.LNPDB.GenPeakRSS))
	}
	if r.LNPDB.BuildSeconds > 0 {
		p("| `lnpdb build` | %s, peak RSS %s (/usr/bin/time -v) |\n", secs(r.LNPDB.BuildSeconds), bytesStr(r.LNPDB.BuildPeakRSS))
	}
	p("| file | %s, %.2f bytes per ported number |\n", bytesStr(r.LNPDB.FileBytes), r.LNPDB.BytesPerPorted)
	p("| `format.Open` | %.2f ms (median of 5) |\n", r.LNPDB.OpenNs/1e6)
	var secParts []string
	for _, s := range r.LNPDB.Sections {
		if s.Length > 0 {
			secParts = append(secParts, fmt.Sprintf("%s %s (%.2f B/number)", s.ID, bytesStr(int64(s.Length)), float64(s.Length)/float64(r.Ported)))
		}
	}
	p("| sections | %s |\n", strings.Join(secParts, ", "))
	p("\n## Noise\n\n")
	var spreads, iqrs []float64
	worst, worstID := 0.0, ""
	worstIQR, worstIQRID := 0.0, ""
	for _, c := range r.Cases {
		spreads = append(spreads, c.Spread)
		if c.Spread > worst {
			worst, worstID = c.Spread, c.ID
		}
		q := iqr(c.NsPerNumber)
		iqrs = append(iqrs, q)
		if q > worstIQR {
			worstIQR, worstIQRID = q, c.ID
		}
	}
	p("Over the %d runs of each benchmark: interquartile range over the median, median over benchmarks %.0f %%, worst %.0f %% (%s); full spread (max − min over the median) median %.0f %%, worst %.0f %% (%s). ",
		r.Runs, 100*median(iqrs), 100*worstIQR, worstIQRID, 100*median(spreads), 100*worst, worstID)
	p("Load average before each round and at the end: %s. ", strings.Join(r.LoadAvg, "; "))
	p("The machine is a shared virtual machine: other work on it moves absolute times from round to round, which is why the targets are ratios within a round.\n")
}

// systemOrder is SystemOrder with the lnpdb variants after lnpdb.
func (r *Results) systemOrder() []string {
	var out []string
	for _, s := range SystemOrder {
		out = append(out, s)
		if s == "lnpdb" {
			out = append(out, r.Configs()[1:]...)
		}
	}
	return out
}

// WriteSummary writes one compact table over several sizes.
func WriteSummary(w io.Writer, rs []*Results) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	slices.SortFunc(rs, func(a, b *Results) int {
		if a.Ported != b.Ported {
			return a.Ported - b.Ported
		}
		return slices.Index(Mixes, a.Queries.MixName()) - slices.Index(Mixes, b.Queries.MixName())
	})
	p("| | %s |\n|---|%s\n", strings.Join(labels(rs), " | "), strings.Repeat("--:|", len(rs)))
	row := func(name string, f func(r *Results) string) {
		p("| %s |", name)
		for _, r := range rs {
			p(" %s |", f(r))
		}
		p("\n")
	}
	caseRow := func(name, id string, withMap bool) {
		row(name, func(r *Results) string {
			c := r.Case(id)
			if c == nil {
				s := r.System(strings.Split(id, "/")[0])
				if s != nil && s.Status != "ok" {
					return "not run: " + s.Status
				}
				return "—"
			}
			s := fmt.Sprintf("%s (%s floor", ns(c.Median), x(c.XFloor))
			if withMap && c.XMap > 0 {
				s += ", " + x(c.XMap) + " map"
			}
			return s + ")"
		})
	}
	caseRow("memory floor, ns per dependent read", "floor/read/1", false)
	caseRow("lnpdb `lrn.Lookup`, dependent", "lnpdb/lookup-dep/1", true)
	caseRow("lnpdb `lrn.Lookup` enhanced+messaging, dependent", "lnpdb/lookup-full-dep/1", true)
	caseRow("Go map, dependent", "map/lookup-dep/1", false)
	caseRow("lnpdb `lrn.Lookup`", "lnpdb/lookup/1", true)
	caseRow("lnpdb `lrn.Lookup` enhanced+messaging", "lnpdb/lookup-full/1", true)
	caseRow("lnpdb `db.Get(FieldPorted)`", "lnpdb/get/1", true)
	caseRow("lnpdb `lrn.LookupMany`, per number", "lnpdb/lookupmany/1", true)
	caseRow("lnpdb `db.GetMany`, per number", "lnpdb/getmany/1", true)
	caseRow("Go map", "map/lookup/1", false)
	caseRow("SQLite", "sqlite/lookup/1", true)
	caseRow("Redis HMGET", "redis/lookup/1", true)
	caseRow("Redis pipelined, per number", "redis/pipelined/1", true)
	caseRow("bbolt", "bbolt/lookup/1", true)
	caseRow("lnpdb `lrn.Lookup`, all cores", "lnpdb/lookup/all-cores", true)
	row("lnpdb file, B/ported number", func(r *Results) string {
		return fmt.Sprintf("%.2f (%s)", r.LNPDB.BytesPerPorted, bytesStr(r.LNPDB.FileBytes))
	})
	row("Go map heap, B/number", func(r *Results) string { return perNumber(r, "map") })
	row("SQLite file, B/number", func(r *Results) string { return perNumber(r, "sqlite") })
	row("Redis used_memory, B/number", func(r *Results) string { return perNumber(r, "redis") })
	row("bbolt file, B/number", func(r *Results) string { return perNumber(r, "bbolt") })
	row("`lnpdb gen`", func(r *Results) string { return secs(r.LNPDB.GenSeconds) })
	row("`lnpdb build` time, peak RSS", func(r *Results) string {
		return fmt.Sprintf("%s, %s", secs(r.LNPDB.BuildSeconds), bytesStr(r.LNPDB.BuildPeakRSS))
	})
	row("`format.Open`", func(r *Results) string { return fmt.Sprintf("%.2f ms", r.LNPDB.OpenNs/1e6) })
	row("load: map / SQLite / Redis / bbolt", func(r *Results) string {
		var parts []string
		for _, s := range []string{"map", "sqlite", "redis", "bbolt"} {
			si := r.System(s)
			switch {
			case si == nil:
				parts = append(parts, "—")
			case si.Status != "ok":
				parts = append(parts, "not run")
			default:
				parts = append(parts, secs(si.LoadSeconds))
			}
		}
		return strings.Join(parts, " / ")
	})
	row("runs (medians of); noise: IQR/median, median / worst benchmark", func(r *Results) string {
		var sp []float64
		for _, c := range r.Cases {
			sp = append(sp, iqr(c.NsPerNumber))
		}
		return fmt.Sprintf("%d; %.0f %% / %.0f %%", r.Runs, 100*median(sp), 100*slices.Max(sp))
	})
}

func orDash(b int64) string {
	if b == 0 {
		return "—"
	}
	return bytesStr(b)
}

// iqr is the interquartile range of xs over their median (quartiles by
// linear interpolation).
func iqr(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	return (quantile(xs, 0.75) - quantile(xs, 0.25)) / median(xs)
}

func perNumber(r *Results, sys string) string {
	s := r.System(sys)
	if s == nil {
		return "—"
	}
	if s.Status != "ok" {
		return "not run"
	}
	return fmt.Sprintf("%.1f", float64(s.MemoryBytes)/float64(r.Ported))
}

func labels(rs []*Results) []string {
	var l []string
	for _, r := range rs {
		l = append(l, r.Label+", "+r.Queries.MixName())
	}
	return l
}

// step is one range of a figure's print: from the threshold up, v/div
// printed with format.
type step struct {
	from, div float64
	format    string
}

// scaled prints v by the first step whose threshold it reaches; the last
// step prints anything below them all.
func scaled(v float64, steps []step) string {
	s := steps[len(steps)-1]
	for _, t := range steps {
		if v >= t.from {
			s = t
			break
		}
	}
	return fmt.Sprintf(s.format, v/s.div)
}

var (
	nsSteps   = []step{{1e6, 1e6, "%.2f ms"}, {1e4, 1e3, "%.1f µs"}, {100, 1, "%.0f ns"}, {0, 1, "%.1f ns"}}
	xSteps    = []step{{100, 1, "%.0f×"}, {10, 1, "%.1f×"}, {0, 1, "%.2f×"}}
	secsSteps = []step{{120, 60, "%.1f min"}, {10, 1, "%.0f s"}, {0, 1, "%.2f s"}}
)

func ns(v float64) string { return scaled(v, nsSteps) }

func x(v float64) string {
	if v == 0 {
		return "—"
	}
	return scaled(v, xSteps)
}

func num(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func secs(s float64) string {
	if s == 0 {
		return "—"
	}
	return scaled(s, secsSteps)
}

func bytesStr(b int64) string {
	const unit = 1024
	if b < 0 {
		return "−" + bytesStr(-b)
	}
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := int64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(b)/float64(div), "KMGTPE"[exp])
}
