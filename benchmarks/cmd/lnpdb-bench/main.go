// Command lnpdb-bench runs the side-by-side benchmarks on one generated
// source directory and its lnpdb table: it loads the same ported numbers
// into a Go map, SQLite, Redis and bbolt, checks that every system gives the
// same answers as the map on a sample of the queries, times every system on
// the same query sequence together with the memory floor, and writes the
// raw figures as JSON (lnpdb-report turns them into tables and a chart).
//
//	lnpdb-bench -src SRC -table T.lnpdb -work DIR -redis 127.0.0.1:PORT -out results/1M.json
//
// run.sh runs it with everything set up; see README.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/benchmarks/internal/bench"
)

func main() {
	testing.Init()
	var (
		src         = flag.String("src", "", "source directory (lnpdb gen output)")
		table       = flag.String("table", "", "lnpdb table built from -src")
		work        = flag.String("work", "", "directory for the peers' files (SQLite, bbolt)")
		out         = flag.String("out", "", "JSON file to write")
		label       = flag.String("label", "", "size label, e.g. 10M")
		systems     = flag.String("systems", "lnpdb,map,sqlite,redis,bbolt", "systems to measure, comma-separated")
		skip        = flag.String("skip", "", "systems not measured, with the reason: NAME=REASON;NAME=REASON (they get a row saying so)")
		redisAddr   = flag.String("redis", "", "Redis server address (host:port)")
		runs        = flag.Int("runs", 5, "rounds of every benchmark (figures are medians over rounds)")
		benchtime   = flag.String("benchtime", "1s", "time per benchmark per round")
		nq          = flag.Int("queries", 1<<20, "queries in the sequence (a power of two)")
		sample      = flag.Int("check", 50000, "queries whose answers are compared across systems before timing")
		loadTimeout = flag.Duration("load-timeout", 20*time.Minute, "time box for one peer's load; past it the peer is reported as not fitting")
		buildJSON   = flag.String("build-info", "", "JSON with the script's gen and build figures (gen_seconds, gen_bytes, build_seconds, build_peak_rss_bytes)")
		seed        = flag.Int64("seed", 1, "the gen seed (recorded) and the query seed")
		mix         = flag.String("mix", bench.MixProbe, "query mix: "+strings.Join(bench.Mixes, " or ")+" (where the vacant quarter is drawn: vacant codes of NPAs holding ported numbers, or anywhere)")
		variants    = flag.String("lnpdb-variants", "default", "lnpdb configurations, comma-separated: default (always timed) and any of "+variantNames()+", each the table opened once more with its Open options and timed on one goroutine")
	)
	flag.Parse()
	if *src == "" || *table == "" || *out == "" || *work == "" {
		fmt.Fprintln(os.Stderr, "lnpdb-bench: -src, -table, -work and -out are required")
		os.Exit(2)
	}
	if err := flag.Set("test.benchtime", *benchtime); err != nil {
		fatal(err)
	}
	want := map[string]bool{}
	for s := range strings.SplitSeq(*systems, ",") {
		want[strings.TrimSpace(s)] = true
	}
	h := &harness{res: &bench.Results{Label: *label, Date: time.Now().UTC(), Machine: bench.ReadMachine(),
		Runs: *runs, Benchtime: *benchtime, Seed: *seed, CheckSample: *sample}}
	if *buildJSON != "" {
		b, err := os.ReadFile(*buildJSON)
		if err != nil {
			fatal(err)
		}
		if err := json.Unmarshal(b, &h.res.LNPDB); err != nil {
			fatal(fmt.Errorf("%s: %w", *buildJSON, err))
		}
	}
	for s := range strings.SplitSeq(*skip, ";") {
		if name, reason, ok := strings.Cut(s, "="); ok {
			h.notMeasured(name, reason)
			delete(want, name)
		}
	}
	for v := range strings.SplitSeq(*variants, ",") {
		switch v = strings.TrimSpace(v); {
		case v == "default" || v == "":
		case bench.Variants[v] != nil:
			h.variants = append(h.variants, v)
		default:
			fatal(fmt.Errorf("-lnpdb-variants: no configuration %q (there are default, %s)", v, variantNames()))
		}
	}
	h.mix = *mix
	if err := h.run(want, *src, *table, *work, *redisAddr, *nq, *sample, *runs, *loadTimeout, uint64(*seed)); err != nil {
		fatal(err)
	}
	b, err := json.MarshalIndent(h.res, "", "  ")
	if err != nil {
		fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		fatal(err)
	}
	if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
		fatal(err)
	}
	fmt.Fprintf(os.Stderr, "wrote %s\n", *out)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "lnpdb-bench:", err)
	os.Exit(1)
}

type harness struct {
	res      *bench.Results
	mix      string
	variants []string
}

func variantNames() string {
	var names []string
	for v := range bench.Variants {
		names = append(names, v)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func (h *harness) notMeasured(name, reason string) {
	h.res.Systems = append(h.res.Systems, bench.SystemInfo{Name: name, Status: reason})
}

func (h *harness) run(want map[string]bool, src, table, work, redisAddr string, nq, sample, runs int, loadTimeout time.Duration, seed uint64) error {
	ctx := context.Background()
	r := h.res

	// The ported numbers, parsed once with the library's reader.
	t := bench.StartTimer()
	recs, err := bench.ReadPorted(src)
	if err != nil {
		return err
	}
	r.ReadCSVSeconds = t.Seconds()
	r.Ported = len(recs)
	logf("read %d ported numbers in %.1fs", len(recs), r.ReadCSVSeconds)
	t = bench.StartTimer()
	if err := bench.SortRecs(recs); err != nil {
		return err
	}
	r.SortSeconds = t.Seconds()
	q, err := bench.MakeQueries(src, recs, nq, seed, h.mix)
	if err != nil {
		return err
	}
	r.Queries = bench.QueryInfo{Mix: q.Mix, Count: q.Len(), Hits: q.Hits, MissAssigned: q.MissAssigned, MissVacant: q.MissVacant, VacantPopulated: q.VacantPopulated}
	logf("%d queries (mix %s): %d hits, %d assigned unported, %d vacant (%d of them in NPAs holding ported numbers)",
		q.Len(), q.Mix, q.Hits, q.MissAssigned, q.MissVacant, q.VacantPopulated)

	systems := map[string]bench.System{}
	var cases []bench.Case

	// lnpdb: always opened, it sizes the memory floor.
	l, openNs, err := bench.OpenLNPDB(table)
	if err != nil {
		return err
	}
	l.Close()
	heap0, rss0 := bench.HeapInUse(), bench.RSS()
	if l, err = bench.ReopenLNPDB(table); err != nil {
		return err
	}
	defer l.Close()
	dicts := bench.HeapInUse() - heap0
	info := l.DB.Info()
	r.LNPDB.FileBytes = info.Size
	r.LNPDB.BytesPerPorted = float64(info.Size) / float64(max(1, info.Counts.Ported))
	r.LNPDB.OpenNs = openNs
	r.LNPDB.Sections = r.LNPDB.Sections[:0]
	for _, s := range info.Sections {
		r.LNPDB.Sections = append(r.LNPDB.Sections, struct {
			ID     string `json:"id"`
			Length uint64 `json:"length"`
		}{s.ID, s.Length})
	}
	if info.Counts.Ported != len(recs) {
		return fmt.Errorf("the table holds %d ported numbers, ported.csv %d", info.Counts.Ported, len(recs))
	}
	warm(l, q)
	r.Systems = append(r.Systems, bench.SystemInfo{Name: "lnpdb", Status: "ok", LoadSeconds: r.LNPDB.BuildSeconds,
		MemoryBytes: info.Size + dicts, MemoryKind: fmt.Sprintf("mapped file, all sections, + %.1f MiB of dictionaries decoded at Open", float64(dicts)/(1<<20)),
		DiskBytes: info.Size, RSSDeltaBytes: bench.RSS() - rss0})
	logf("lnpdb: %d bytes (%.2f B/number), Open %.0f µs", info.Size, r.LNPDB.BytesPerPorted, openNs/1e3)
	if want["lnpdb"] {
		cases = append(cases, bench.LNPDBCases(l.DB, q)...)
	}
	for _, v := range h.variants {
		lv, err := bench.ReopenLNPDB(table, bench.Variants[v]...)
		if err != nil {
			return fmt.Errorf("lnpdb variant %s: %w", v, err)
		}
		defer lv.Close()
		warm(lv, q)
		systems[bench.VariantSystem(v)] = lv
		r.Variants = append(r.Variants, v)
		cases = append(cases, bench.LNPDBVariantCases(v, lv.DB, q)...)
		logf("lnpdb variant %s opened", v)
	}

	// The Go map: the reference answers, so always loaded.
	heap0, rss0 = bench.HeapInUse(), bench.RSS()
	t = bench.StartTimer()
	m := bench.LoadMap(recs)
	ins := t.Seconds()
	heap := bench.HeapInUse() - heap0
	r.Systems = append(r.Systems, bench.SystemInfo{Name: "map", Status: "ok", LoadSeconds: r.ReadCSVSeconds + ins, InsertSeconds: ins,
		MemoryBytes: heap, MemoryKind: "Go heap", RSSDeltaBytes: bench.RSS() - rss0})
	logf("map: %.1fs, %d bytes of heap (%.1f B/number)", ins, heap, float64(heap)/float64(len(recs)))
	if want["map"] {
		cases = append(cases, bench.MapCases(m, q)...)
	}

	for _, f := range []struct {
		name, file string
		load       func(context.Context, string, []bench.Rec) error
		open       func(string) (bench.System, error)
		cases      func(bench.System, *bench.Queries) []bench.Case
	}{
		{"sqlite", "ported.sqlite", bench.LoadSQLite,
			func(path string) (bench.System, error) { return bench.OpenSQLite(path, runtime.GOMAXPROCS(0)) },
			func(s bench.System, q *bench.Queries) []bench.Case { return bench.SQLiteCases(s.(*bench.SQLite), q) }},
		{"bbolt", "ported.bolt", bench.LoadBolt,
			func(path string) (bench.System, error) { return bench.OpenBolt(path) },
			func(s bench.System, q *bench.Queries) []bench.Case { return bench.BoltCases(s.(*bench.Bolt), q) }},
	} {
		if !want[f.name] {
			continue
		}
		path := filepath.Join(work, f.file)
		lctx, cancel := context.WithTimeout(ctx, loadTimeout)
		t = bench.StartTimer()
		err := f.load(lctx, path, recs)
		ins := t.Seconds()
		cancel()
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			h.notMeasured(f.name, fmt.Sprintf("load did not finish within the %s time box", loadTimeout))
			os.Remove(path)
		case err != nil:
			return fmt.Errorf("%s: %w", f.name, err)
		default:
			rss0 := bench.RSS()
			s, err := f.open(path)
			if err != nil {
				return err
			}
			defer s.Close()
			warm(s, q)
			size := bench.FileSize(path)
			r.Systems = append(r.Systems, bench.SystemInfo{Name: f.name, Status: "ok", LoadSeconds: r.ReadCSVSeconds + r.SortSeconds + ins, InsertSeconds: ins,
				MemoryBytes: size, MemoryKind: "mapped file", DiskBytes: size, RSSDeltaBytes: bench.RSS() - rss0})
			logf("%s: %.1fs, %d bytes", f.name, ins, size)
			systems[f.name] = s
			cases = append(cases, f.cases(s, q)...)
		}
	}

	if want["redis"] {
		if redisAddr == "" {
			return fmt.Errorf("redis: no -redis address")
		}
		rc, err := bench.DialRedis(ctx, redisAddr, runtime.GOMAXPROCS(0)*bench.RedisProcs+4)
		if err != nil {
			return err
		}
		defer rc.Close()
		lctx, cancel := context.WithTimeout(ctx, loadTimeout)
		t = bench.StartTimer()
		err = rc.Load(lctx, recs)
		ins := t.Seconds()
		timedOut := errors.Is(err, context.DeadlineExceeded) || errors.Is(lctx.Err(), context.DeadlineExceeded)
		cancel()
		switch {
		case timedOut:
			h.notMeasured("redis", fmt.Sprintf("load did not finish within the %s time box", loadTimeout))
			rc.C.FlushAll(ctx)
		case err != nil && strings.Contains(err.Error(), "OOM"):
			used, _, _ := rc.UsedMemory(ctx)
			h.notMeasured("redis", fmt.Sprintf("did not fit: the server reached its maxmemory (%.1f GiB used) before all %d numbers were loaded", float64(used)/(1<<30), len(recs)))
			rc.C.FlushAll(ctx)
		case err != nil:
			return fmt.Errorf("redis: %w", err)
		default:
			used, rss, err := rc.UsedMemory(ctx)
			if err != nil {
				return err
			}
			r.Systems = append(r.Systems, bench.SystemInfo{Name: "redis", Status: "ok", LoadSeconds: r.ReadCSVSeconds + ins, InsertSeconds: ins,
				MemoryBytes: used, MemoryKind: fmt.Sprintf("server's used_memory; its RSS %.1f MiB", float64(rss)/(1<<20))})
			logf("redis: %.1fs, used_memory %d (%.1f B/number)", ins, used, float64(used)/float64(len(recs)))
			systems["redis"] = rc
			cases = append(cases, bench.RedisCases(rc, q)...)
		}
	}
	recs = nil

	// The memory floor over a buffer as large as the table.
	t = bench.StartTimer()
	floor := bench.NewFloor(info.Size, seed, runtime.GOMAXPROCS(0))
	logf("memory floor: %d-byte buffer ready in %.1fs", floor.Size, t.Seconds())
	r.Systems = append(r.Systems, bench.SystemInfo{Name: "floor", Status: "ok", MemoryBytes: floor.Size, MemoryKind: floor.MemoryKind()})
	cases = append(cases, bench.FloorCases(floor)...)

	// Every system must give the same answers before any is timed.
	systems["lnpdb"] = l
	hits, err := bench.Check(m, l.DB, systems, q, sample)
	if err != nil {
		return fmt.Errorf("answers disagree; nothing was timed:\n%w", err)
	}
	r.CheckHits = hits
	names := make([]string, 0, len(systems))
	for n := range systems {
		names = append(names, n)
	}
	slices.Sort(names)
	logf("check: %s and the map agree on %d queries (%d hits)", strings.Join(names, ", "), min(sample, q.Len()), hits)
	r.Notes = append(r.Notes, fmt.Sprintf("Answers checked before timing: %s (lnpdb through Get, GetMany, lrn.Lookup and lrn.LookupMany, plain and enhanced+messaging) agree with the Go map on the first %d queries (%d hits).",
		strings.Join(names, ", "), min(sample, q.Len()), hits))

	runtime.GC()
	r.Cases, r.LoadAvg = bench.RunCases(cases, runs, os.Stderr, bench.LoadAvg)
	runtime.KeepAlive(m)
	return nil
}

// warm asks s every query once, so that a mapped file's pages are resident
// and mapped before anything is timed.
func warm(s bench.System, q *bench.Queries) {
	for _, tn := range q.TNs {
		if _, err := s.Lookup(tn); err != nil {
			fatal(err)
		}
	}
}
