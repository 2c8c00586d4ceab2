package bench

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// Results is everything one run of the harness measured: the raw numbers
// behind a results table, written as JSON.
type Results struct {
	Label     string    `json:"label"` // e.g. "10M"
	Ported    int       `json:"ported"`
	Date      time.Time `json:"date"`
	Machine   Machine   `json:"machine"`
	Runs      int       `json:"runs"`
	Benchtime string    `json:"benchtime"`
	Seed      int64     `json:"seed"`

	Queries     QueryInfo `json:"queries"`
	CheckSample int       `json:"check_sample"`
	CheckHits   int       `json:"check_hits"`

	ReadCSVSeconds float64 `json:"read_csv_seconds"` // ported.csv parsed once, shared by the peers' loads
	SortSeconds    float64 `json:"sort_seconds"`     // sorting it by number, for the sorted bulk loads

	LNPDB LNPDBInfo `json:"lnpdb"`
	// Variants are the lnpdb configurations timed beside the default
	// (names in Variants; their cases' system is VariantSystem(name)).
	Variants []string     `json:"lnpdb_variants,omitempty"`
	Systems  []SystemInfo `json:"systems"`
	Cases    []CaseResult `json:"cases"`

	// LoadAvg is /proc/loadavg before each round and after the last: the
	// other work on the machine while it ran.
	LoadAvg []string `json:"loadavg"`
	Notes   []string `json:"notes,omitempty"`
}

// Machine describes where the run happened.
type Machine struct {
	NProc      int    `json:"nproc"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPU        string `json:"cpu"`
	MemTotal   int64  `json:"mem_total_bytes"`
	GoVersion  string `json:"go_version"`
	Kernel     string `json:"kernel"`
	Hypervisor bool   `json:"hypervisor"`
}

// QueryInfo describes the query sequence.
type QueryInfo struct {
	// Mix is MixProbe or MixRandomVacant; "" in results written before
	// there was a choice, which used MixRandomVacant.
	Mix          string `json:"mix,omitempty"`
	Count        int    `json:"count"`
	Hits         int    `json:"hits"`
	MissAssigned int    `json:"miss_assigned_unported"`
	MissVacant   int    `json:"miss_vacant_code"`
	// VacantPopulated counts the vacant-code queries in NPAs that hold
	// ported numbers (not counted when Mix is "").
	VacantPopulated int `json:"miss_vacant_code_populated_npa"`
}

// MixName is q's query mix, MixRandomVacant for results that do not say.
func (q QueryInfo) MixName() string {
	if q.Mix == "" {
		return MixRandomVacant
	}
	return q.Mix
}

// LNPDBInfo is what the table costs to make and to keep.
type LNPDBInfo struct {
	FileBytes      int64   `json:"file_bytes"`
	BytesPerPorted float64 `json:"bytes_per_ported"`
	OpenNs         float64 `json:"open_ns"`
	// From the script: `lnpdb gen` and `lnpdb build` under /usr/bin/time.
	GenSeconds   float64 `json:"gen_seconds,omitempty"`
	GenBytes     int64   `json:"gen_bytes,omitempty"`
	GenPeakRSS   int64   `json:"gen_peak_rss_bytes,omitempty"`
	BuildSeconds float64 `json:"build_seconds,omitempty"`
	BuildPeakRSS int64   `json:"build_peak_rss_bytes,omitempty"`
	Sections     []struct {
		ID     string `json:"id"`
		Length uint64 `json:"length"`
	} `json:"sections"`
}

// SystemInfo is one system's load and footprint.
type SystemInfo struct {
	Name string `json:"name"`
	// Status is "ok", or why the system was not measured.
	Status string `json:"status"`
	// LoadSeconds is the time from ported.csv to ready: for lnpdb the
	// build (all sections); for the peers the shared CSV read (and sort,
	// where they load sorted) plus their own insert time, InsertSeconds.
	LoadSeconds   float64 `json:"load_seconds"`
	InsertSeconds float64 `json:"insert_seconds"`
	// MemoryBytes is what the system needs in RAM to answer at full speed,
	// as MemoryKind says: a mapped file's size, Go heap, Redis used_memory.
	MemoryBytes int64  `json:"memory_bytes"`
	MemoryKind  string `json:"memory_kind"`
	// DiskBytes is the size of its files, 0 for none.
	DiskBytes int64 `json:"disk_bytes"`
	// RSSDeltaBytes is how much this process's RSS grew from before the load
	// to after a warm-up pass over the queries (in-process systems only).
	RSSDeltaBytes int64 `json:"rss_delta_bytes"`
}

// CaseResult is one benchmark's figures over all runs.
type CaseResult struct {
	ID         string `json:"id"`
	System     string `json:"system"`
	Name       string `json:"name"`
	Parallel   bool   `json:"parallel"`
	Goroutines int    `json:"goroutines"`
	PerCall    int    `json:"per_call"`
	// Dependent: each query's number depended on the previous answer.
	Dependent bool `json:"dependent,omitempty"`
	// NsPerNumber holds each run's time per number looked up (per call
	// divided by PerCall), in run order.
	NsPerNumber []float64 `json:"ns_per_number"`
	Median      float64   `json:"median_ns"`
	// Spread is (max-min)/median over the runs.
	Spread float64 `json:"spread"`
	// AllocsPerCall and BytesPerCall are per call (per batch for batches),
	// the median over runs.
	AllocsPerCall float64 `json:"allocs_per_call"`
	BytesPerCall  float64 `json:"bytes_per_call"`
	// XFloor and XMap are the medians, over runs, of this case's time per
	// number divided by the memory floor's (or the map's) in the same run
	// and mode (a dependent case: the map's dependent case; the floor is
	// dependent already). 0 when that reference was not measured.
	XFloor float64 `json:"x_floor"`
	XMap   float64 `json:"x_map"`
}

// RunCases runs every case runs times, in a new shuffled order each round,
// and returns their figures; progress goes to log.
func RunCases(cases []Case, runs int, log io.Writer, loadavg func() string) ([]CaseResult, []string) {
	type sample struct{ ns, allocs, bytes float64 }
	samples := make([][]sample, len(cases))
	var loads []string
	order := make([]int, len(cases))
	for i := range order {
		order[i] = i
	}
	r := rand.New(rand.NewPCG(7, 7))
	for run := range runs {
		loads = append(loads, loadavg())
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		fmt.Fprintf(log, "round %d/%d (loadavg %s)\n", run+1, runs, loads[len(loads)-1])
		for _, ci := range order {
			c := cases[ci]
			res := testing.Benchmark(c.Fn)
			if res.N == 0 {
				fmt.Fprintf(log, "  %-28s FAILED\n", c.ID)
				os.Exit(1)
			}
			ns := float64(res.T.Nanoseconds()) / float64(res.N) / float64(c.PerCall)
			samples[ci] = append(samples[ci], sample{ns, float64(res.MemAllocs) / float64(res.N), float64(res.MemBytes) / float64(res.N)})
			fmt.Fprintf(log, "  %-28s %10.1f ns/number  %8.2f allocs/call  (N=%d)\n", c.ID, ns, float64(res.MemAllocs)/float64(res.N), res.N)
		}
	}
	loads = append(loads, loadavg())
	out := make([]CaseResult, len(cases))
	byID := map[string]int{}
	for i, c := range cases {
		var ns, al, by []float64
		for _, s := range samples[i] {
			ns, al, by = append(ns, s.ns), append(al, s.allocs), append(by, s.bytes)
		}
		g := 1
		if c.Parallel {
			g = runtime.GOMAXPROCS(0) * max(1, c.Parallelism)
		}
		m := median(ns)
		out[i] = CaseResult{ID: c.ID, System: c.System, Name: c.Name, Parallel: c.Parallel, Goroutines: g, PerCall: c.PerCall, Dependent: c.Dependent,
			NsPerNumber: ns, Median: m, Spread: (slices.Max(ns) - slices.Min(ns)) / m,
			AllocsPerCall: median(al), BytesPerCall: median(by)}
		byID[c.ID] = i
	}
	// Ratios within each run, then their median: drift between rounds
	// (other work on the machine) cancels out.
	ratio := func(i, ref int) float64 {
		var rs []float64
		for k := range samples[i] {
			rs = append(rs, samples[i][k].ns/samples[ref][k].ns)
		}
		return median(rs)
	}
	for i, c := range cases {
		m := mode(c.Parallel)
		if ref, ok := byID["floor/read"+m]; ok {
			out[i].XFloor = ratio(i, ref)
		}
		mapRef := "map/lookup" + m
		if c.Dependent {
			mapRef = "map/lookup-dep" + m
		}
		if ref, ok := byID[mapRef]; ok {
			out[i].XMap = ratio(i, ref)
		}
	}
	return out, loads
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// LoadAvg is the first three fields of /proc/loadavg.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// ReadMachine describes this machine.
func ReadMachine() Machine {
	m := Machine{NProc: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			switch strings.TrimSpace(k) {
			case "model name":
				if m.CPU == "" {
					m.CPU = strings.TrimSpace(v)
				}
			case "flags":
				m.Hypervisor = slices.Contains(strings.Fields(v), "hypervisor")
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				var kb int64
				fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb)
				m.MemTotal = kb * 1024
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}
