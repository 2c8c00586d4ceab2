// Command lnpdb-instr is the instruction-counted hot path: it runs one
// lookup case over a query sequence inside a function of its own (measured),
// so that callgrind, told to collect inside that call only
// (--toggle-collect), counts the instructions of the lookups and of the
// caller's loop and nothing of the setup.
//
//	lnpdb-instr prepare -src SRC -table T.lnpdb -queries 65536 -out Q.txt
//	valgrind --tool=callgrind --collect-atstart=no --toggle-collect=main.measured \
//	    lnpdb-instr measure -table T.lnpdb -in Q.txt -case plain
//	lnpdb-instr report -n 65536 -out results/instructions.md plain=callgrind.out.plain ...
//
// prepare draws the benchmarks' probe mix (bench.MakeQueries: half ported
// numbers, a quarter assigned and not ported, a quarter in vacant codes of
// populated NPAs), checks every query's answer through every API against
// the source's ported.csv (bench.Check), and writes the queries, one
// canonical number a line. measure reads them, runs its case once to warm
// the caches and pools, and then once more inside the measured function.
// report turns callgrind's profiles into instructions per number and the
// profile's top functions. benchmarks/instructions/run.sh does all three.
package main

import (
	"bufio"
	"cmp"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lnpdb/lnpdb/benchmarks/internal/bench"
	"github.com/lnpdb/lnpdb/cnam"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/lrn"
	"github.com/lnpdb/lnpdb/messaging"
	"github.com/lnpdb/lnpdb/trust"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "prepare":
		prepare(args)
	case "measure":
		measure(args)
	case "report":
		report(args)
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: lnpdb-instr prepare|measure|report [flags]; see the package comment")
	os.Exit(2)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "lnpdb-instr:", err)
	os.Exit(1)
}

func prepare(args []string) {
	fs := flag.NewFlagSet("prepare", flag.ExitOnError)
	src := fs.String("src", "", "source directory (lnpdb gen output)")
	table := fs.String("table", "", "the table built from -src")
	n := fs.Int("queries", 1<<16, "queries (a power of two)")
	seed := fs.Uint64("seed", 1, "query seed")
	out := fs.String("out", "", "file to write the queries to")
	fs.Parse(args)
	if *src == "" || *table == "" || *out == "" {
		fatal(fmt.Errorf("prepare: -src, -table and -out are required"))
	}
	recs, err := bench.ReadPorted(*src)
	if err != nil {
		fatal(err)
	}
	if err := bench.SortRecs(recs); err != nil {
		fatal(err)
	}
	q, err := bench.MakeQueries(*src, recs, *n, *seed, bench.MixProbe)
	if err != nil {
		fatal(err)
	}
	db, err := format.Open(*table, format.IgnoreJournal())
	if err != nil {
		fatal(err)
	}
	defer db.Close()
	// Every query, through every API measured, against ported.csv.
	if _, err := bench.Check(bench.LoadMap(recs), db, nil, q, q.Len()); err != nil {
		fatal(err)
	}
	// LookupInto, which Check does not call, against Lookup, into one
	// Result reused as the measured loops reuse it.
	var into lrn.Result
	for _, c := range q.Canonical {
		for _, opt := range []lrn.Options{plain, full} {
			r, err := lrn.Lookup(db, c, opt)
			if errInto := lrn.LookupInto(db, c, opt, &into); errInto != err || err == nil && !reflect.DeepEqual(r, into) {
				fatal(fmt.Errorf("LookupInto(%s, %+v) = %+v, %v; Lookup: %+v, %v", c, opt, into, errInto, r, err))
			}
		}
	}
	// messaging.LookupInto and trust.LookupInto, into one Result each,
	// reused: messaging's answer is the one lrn.Lookup with messaging
	// gives (checked above), trust's the one trust.Lookup gives.
	var (
		intoMsg   messaging.Result
		intoTrust trust.Result
	)
	for _, c := range q.Canonical {
		r, err := lrn.Lookup(db, c, full)
		m := r.Messaging
		want := messaging.Result{PhoneNumber: r.PhoneNumber, Provider: m.Provider, Enabled: m.Enabled,
			Country: m.Country, CountryCode: m.CountryCode, ReferenceID: m.ReferenceID, Source: m.Source}
		if errInto := messaging.LookupInto(db, c, messaging.Options{}, &intoMsg); errInto != err || err == nil && intoMsg != want {
			fatal(fmt.Errorf("messaging.LookupInto(%s) = %+v, %v; lrn.Lookup's messaging: %+v, %v", c, intoMsg, errInto, want, err))
		}
		t, err := trust.Lookup(db, c, trustOpt)
		if errInto := trust.LookupInto(db, c, trustOpt, &intoTrust); errInto != err || err == nil && !reflect.DeepEqual(t, intoTrust) {
			fatal(fmt.Errorf("trust.LookupInto(%s) = %+v, %v; trust.Lookup: %+v, %v", c, intoTrust, errInto, t, err))
		}
	}
	f, err := os.Create(*out)
	if err != nil {
		fatal(err)
	}
	w := bufio.NewWriter(f)
	for _, c := range q.Canonical {
		fmt.Fprintln(w, c)
	}
	if err := w.Flush(); err != nil {
		fatal(err)
	}
	if err := f.Close(); err != nil {
		fatal(err)
	}
	fmt.Printf("%d queries checked against ported.csv: %d ported, %d assigned not ported, %d vacant (%d in populated NPAs)\n",
		q.Len(), q.Hits, q.MissAssigned, q.MissVacant, q.VacantPopulated)
}

// cases are the measured loops, by name. measure runs one once to warm
// up and once more through measured, inside which alone callgrind collects.
var cases = map[string]func(db *format.DB, qs []string) uint64{
	"plain":      loopPlain,
	"plain-into": loopPlainInto,
	"full":       loopFull,
	"full-into":  loopFullInto,
	"many":       loopMany,
	// Not in run.sh's default CASES: the other lookups that read a
	// per-number section beside the route.
	"messaging-into": loopMessagingInto,
	"trust-into":     loopTrustInto,
	"cnam-into":      loopCNAMInto,
}

var (
	plain = lrn.Options{}
	full  = lrn.Options{Enhanced: true, Messaging: true}
	// A fixed time, so that the trust answers do not change between
	// prepare, the warm-up and the measured run.
	trustOpt = trust.Options{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
)

//go:noinline
func loopMessagingInto(db *format.DB, qs []string) uint64 {
	var sum uint64
	var r messaging.Result
	for _, q := range qs {
		if messaging.LookupInto(db, q, messaging.Options{}, &r) == nil {
			sum += uint64(len(r.Provider)) + uint64(r.Source)
		}
	}
	return sum
}

//go:noinline
func loopTrustInto(db *format.DB, qs []string) uint64 {
	var sum uint64
	var r trust.Result
	for _, q := range qs {
		if trust.LookupInto(db, q, trustOpt, &r) == nil {
			sum += uint64(r.Score) + uint64(len(r.Reasons))
		}
	}
	return sum
}

//go:noinline
func loopCNAMInto(db *format.DB, qs []string) uint64 {
	var sum uint64
	var r cnam.Result
	for _, q := range qs {
		if cnam.LookupInto(db, q, cnam.Options{}, &r) == nil {
			sum += uint64(len(r.CNAM)) + uint64(r.Source)
		}
	}
	return sum
}

//go:noinline
func loopPlain(db *format.DB, qs []string) uint64 {
	var sum uint64
	for _, q := range qs {
		r, err := lrn.Lookup(db, q, plain)
		if err == nil {
			sum += uint64(len(r.LRN)) + uint64(r.Source)
		}
	}
	return sum
}

//go:noinline
func loopPlainInto(db *format.DB, qs []string) uint64 {
	var sum uint64
	var r lrn.Result
	for _, q := range qs {
		if lrn.LookupInto(db, q, plain, &r) == nil {
			sum += uint64(len(r.LRN)) + uint64(r.Source)
		}
	}
	return sum
}

//go:noinline
func loopFullInto(db *format.DB, qs []string) uint64 {
	var sum uint64
	var r lrn.Result
	for _, q := range qs {
		if lrn.LookupInto(db, q, full, &r) == nil {
			sum += uint64(len(r.LRN)) + uint64(len(r.Enhanced.City)) + uint64(len(r.Messaging.Provider))
		}
	}
	return sum
}

//go:noinline
func loopFull(db *format.DB, qs []string) uint64 {
	var sum uint64
	for _, q := range qs {
		r, err := lrn.Lookup(db, q, full)
		if err == nil {
			sum += uint64(len(r.LRN)) + uint64(len(r.Enhanced.City)) + uint64(len(r.Messaging.Provider))
		}
	}
	return sum
}

var answers = make([]lrn.Answer, 0, bench.Batch)

//go:noinline
func loopMany(db *format.DB, qs []string) uint64 {
	var sum uint64
	for off := 0; off < len(qs); off += bench.Batch {
		answers = lrn.LookupMany(db, qs[off:min(off+bench.Batch, len(qs))], plain, answers[:0])
		for i := range answers {
			sum += uint64(len(answers[i].LRN))
		}
	}
	return sum
}

func measure(args []string) {
	fs := flag.NewFlagSet("measure", flag.ExitOnError)
	table := fs.String("table", "", "the table")
	in := fs.String("in", "", "queries, one a line (prepare's output)")
	name := fs.String("case", "", "case: "+caseNames())
	fs.Parse(args)
	run, ok := cases[*name]
	if !ok || *table == "" || *in == "" {
		fatal(fmt.Errorf("measure: -table, -in and -case (%s) are required", caseNames()))
	}
	b, err := os.ReadFile(*in)
	if err != nil {
		fatal(err)
	}
	qs := strings.Fields(string(b))
	db, err := format.Open(*table, format.IgnoreJournal())
	if err != nil {
		fatal(err)
	}
	defer db.Close()
	warm := run(db, qs)
	if got := measured(run, db, qs); got != warm {
		fatal(fmt.Errorf("the measured run answered differently from the warm-up (%d, %d)", got, warm))
	}
	fmt.Printf("%s: %d queries\n", *name, len(qs))
}

// measured is the function callgrind collects in (--toggle-collect).
//
//go:noinline
func measured(run func(*format.DB, []string) uint64, db *format.DB, qs []string) uint64 {
	return run(db, qs)
}

func caseNames() string {
	var names []string
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// fnLine is a line of callgrind_annotate's function list:
// "1,234,567 (12.34%)  file:function [object]".
var fnLine = regexp.MustCompile(`^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(\S+)`)

type fnCost struct {
	name string
	ir   uint64
}

// annotate returns the total instructions of a profile and its functions'
// own instructions, largest first.
func annotate(profile string) (total uint64, fns []fnCost, err error) {
	out, err := exec.Command("callgrind_annotate", "--inclusive=no", "--auto=no", "--threshold=100", profile).Output()
	if err != nil {
		return 0, nil, fmt.Errorf("callgrind_annotate %s: %w", profile, err)
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		if strings.Contains(line, "PROGRAM TOTALS") {
			f := strings.Fields(line)
			total, _ = strconv.ParseUint(strings.ReplaceAll(f[0], ",", ""), 10, 64)
			continue
		}
		m := fnLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		ir, _ := strconv.ParseUint(strings.ReplaceAll(m[1], ",", ""), 10, 64)
		name := m[2]
		if i := strings.LastIndexByte(name, ':'); i >= 0 {
			name = name[i+1:]
		}
		name = strings.TrimPrefix(name, "github.com/lnpdb/lnpdb/")
		// Code inlined from other files is listed once per file.
		if i := slices.IndexFunc(fns, func(f fnCost) bool { return f.name == name }); i >= 0 {
			fns[i].ir += ir
		} else {
			fns = append(fns, fnCost{name, ir})
		}
	}
	slices.SortStableFunc(fns, func(a, b fnCost) int { return cmp.Compare(b.ir, a.ir) })
	if total == 0 {
		return 0, nil, fmt.Errorf("%s: no program totals", profile)
	}
	return total, fns, nil
}

func report(args []string) {
	fs := flag.NewFlagSet("report", flag.ExitOnError)
	n := fs.Int("n", 0, "queries each profile measured")
	out := fs.String("out", "", "markdown file to write")
	title := fs.String("title", "", "heading")
	intro := fs.String("intro", "", "text under the heading")
	top := fs.Int("top", 12, "functions listed per case")
	fs.Parse(args)
	if *n <= 0 || *out == "" || fs.NArg() == 0 {
		fatal(fmt.Errorf("report: -n, -out and CASE=PROFILE arguments are required"))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n\n", *title, *intro)
	fmt.Fprintf(&b, "| case | instructions per number |\n|---|--:|\n")
	type prof struct {
		name  string
		total uint64
		fns   []fnCost
	}
	var profs []prof
	for _, a := range fs.Args() {
		name, path, ok := strings.Cut(a, "=")
		if !ok {
			fatal(fmt.Errorf("report: %q is not CASE=PROFILE", a))
		}
		total, fns, err := annotate(path)
		if err != nil {
			fatal(err)
		}
		profs = append(profs, prof{name, total, fns})
		fmt.Fprintf(&b, "| %s | %s |\n", name, perNumber(total, *n))
	}
	for _, p := range profs {
		fmt.Fprintf(&b, "\n## %s: the top functions, own instructions per number\n\n| function | per number |\n|---|--:|\n", p.name)
		for i, f := range p.fns {
			if i == *top {
				break
			}
			fmt.Fprintf(&b, "| `%s` | %s |\n", f.name, perNumber(f.ir, *n))
		}
	}
	if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
		fatal(err)
	}
	fmt.Print(b.String())
}

func perNumber(ir uint64, n int) string {
	return strconv.FormatFloat(float64(ir)/float64(n), 'f', 1, 64)
}
