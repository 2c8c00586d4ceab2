package bench

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/format/build"
	"github.com/lnpdb/lnpdb/internal/ingest/gen"
)

// The harness end to end on a small table: every system loads, agrees with
// the map, runs every benchmark once, and the report renders. Redis joins
// when LNPDB_BENCH_REDIS names a server it may flush (e.g. 127.0.0.1:6379).
func TestHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	ctx := context.Background()
	if _, err := gen.Generate(ctx, src, gen.Config{Seed: 3, Ported: 20000,
		Messaging: gen.DefaultMessaging, CNAM: gen.DefaultCNAM, Trust: gen.DefaultTrust}); err != nil {
		t.Fatal(err)
	}
	table := filepath.Join(dir, "t.lnpdb")
	if _, err := build.Build(ctx, os.DirFS(src), table, build.Options{}); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadPorted(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := SortRecs(recs); err != nil {
		t.Fatal(err)
	}
	q, err := MakeQueries(src, recs, 1<<12, 1, MixProbe)
	if err != nil {
		t.Fatal(err)
	}
	if q.Hits != 1<<11 || q.MissAssigned != 1<<10 || q.MissVacant != 1<<10 {
		t.Fatalf("query mix %d/%d/%d", q.Hits, q.MissAssigned, q.MissVacant)
	}

	l, _, err := OpenLNPDB(table)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	m := LoadMap(recs)
	if err := LoadSQLite(ctx, filepath.Join(dir, "p.sqlite"), recs); err != nil {
		t.Fatal(err)
	}
	s, err := OpenSQLite(filepath.Join(dir, "p.sqlite"), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := LoadBolt(ctx, filepath.Join(dir, "p.bolt"), recs); err != nil {
		t.Fatal(err)
	}
	b, err := OpenBolt(filepath.Join(dir, "p.bolt"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	lv, err := ReopenLNPDB(table, Variants["verify"]...)
	if err != nil {
		t.Fatal(err)
	}
	defer lv.Close()
	systems := map[string]System{"lnpdb": l, "sqlite": s, "bbolt": b, VariantSystem("verify"): lv}
	cases := append(LNPDBCases(l.DB, q), LNPDBVariantCases("verify", lv.DB, q)...)
	cases = append(cases, MapCases(m, q)...)
	cases = append(cases, SQLiteCases(s, q)...)
	cases = append(cases, BoltCases(b, q)...)
	if addr := os.Getenv("LNPDB_BENCH_REDIS"); addr != "" {
		r, err := DialRedis(ctx, addr, 4)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if err := r.Load(ctx, recs); err != nil {
			t.Fatal(err)
		}
		systems["redis"] = r
		cases = append(cases, RedisCases(r, q)...)
	}
	cases = append(cases, FloorCases(NewFloor(FileSize(table), 1, 2))...)

	hits, err := Check(m, l.DB, systems, q, q.Len())
	if err != nil {
		t.Fatal(err)
	}
	if hits != q.Hits {
		t.Errorf("check saw %d hits, want %d", hits, q.Hits)
	}

	// A wrong answer anywhere fails the check, naming the system.
	var tn uint64
	for _, x := range q.TNs {
		if _, ok := m.M[x]; ok {
			tn = x
			break
		}
	}
	good := m.M[tn]
	bad := good
	bad.LRN++
	m.M[tn] = bad
	_, err = Check(m, l.DB, systems, q, q.Len())
	var ce *CheckError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "lrn.LookupMany") || !strings.Contains(err.Error(), "sqlite") {
		t.Fatalf("a changed map entry: %v", err)
	}
	m.M[tn] = good

	bt := flag.Lookup("test.benchtime")
	old := bt.Value.String()
	bt.Value.Set("20x")
	defer bt.Value.Set(old)
	res, loads := RunCases(cases, 2, testWriter{t}, LoadAvg)
	if len(loads) != 3 {
		t.Errorf("%d load averages, want 3", len(loads))
	}
	r := &Results{Label: "20k", Ported: len(recs), Date: time.Now(), Machine: ReadMachine(), Runs: 2, Benchtime: "20x", Variants: []string{"verify"},
		Queries: QueryInfo{Mix: q.Mix, Count: q.Len(), Hits: q.Hits, MissAssigned: q.MissAssigned, MissVacant: q.MissVacant, VacantPopulated: q.VacantPopulated},
		Cases:   res, Systems: []SystemInfo{{Name: "lnpdb", Status: "ok", MemoryBytes: 1}, {Name: "map", Status: "ok", MemoryBytes: 4}, {Name: "redis", Status: "did not fit"}}}
	for _, c := range r.Cases {
		if c.Median <= 0 || len(c.NsPerNumber) != 2 {
			t.Errorf("%s: %+v", c.ID, c)
		}
		if c.XFloor <= 0 || c.XMap <= 0 {
			t.Errorf("%s: ratios %v %v", c.ID, c.XFloor, c.XMap)
		}
	}
	if c := r.Case("lnpdb/lookup/1"); c == nil || c.AllocsPerCall != 0 {
		t.Errorf("lrn.Lookup allocates: %+v", c)
	}
	var md bytes.Buffer
	r.WriteMarkdown(&md, "x.png")
	for _, c := range []string{"lnpdb/lookup-dep/1", "lnpdb/lookup-full-dep/1", "lnpdb/get-dep/1", "map/lookup-dep/1", "lnpdb@verify/lookup-dep/1", "lnpdb@verify/lookupmany/1"} {
		if r.Case(c) == nil {
			t.Errorf("no case %s", c)
		}
	}
	if c := r.Case("lnpdb/lookup-dep/1"); c == nil || !c.Dependent || c.AllocsPerCall != 0 {
		t.Errorf("dependent lrn.Lookup: %+v", c)
	}
	lt := r.LatencyTargets()
	if len(lt) != 6 {
		t.Errorf("%d latency targets, want 6 (4 timed, the variant's, bytes): %+v", len(lt), lt)
	}
	for _, l := range lt {
		if len(l.Measured) != 2 || l.Measured[1] == "—" {
			t.Errorf("latency target %q lacks the variant: %q", l.Figure, l.Measured)
		}
	}
	for _, want := range []string{"median of 2 runs", "≤ 2× the memory floor", "| redis | did not fit |", "| lnpdb | lrn.Lookup |",
		"probe query mix", "Query mix **probe**", "## Latency targets", "≤ 1.25× floor", "lnpdb@verify", "## Dependent latency", "| lnpdb | lrn.Lookup, dependent |", "| floor | dependent random 8-byte read |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md.String())
		}
	}
	if err := r.WritePNG(filepath.Join(dir, "x.png")); err != nil {
		t.Fatal(err)
	}
	var sum bytes.Buffer
	WriteSummary(&sum, []*Results{r})
	if !strings.Contains(sum.String(), "| 20k, probe |") {
		t.Errorf("summary:\n%s", sum.String())
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
