// Package bench is the side-by-side benchmark harness: it loads the same
// generated ported numbers into lnpdb and its peers (a Go map, SQLite, Redis,
// bbolt), checks that they all give the same answers, times them on the same
// query sequence against the memory floor, and reports the results.
package bench

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/lnpdb/lnpdb/internal/core/nanp"
	"github.com/lnpdb/lnpdb/internal/ingest/gen"
	"github.com/lnpdb/lnpdb/internal/ingest/source"
)

// Rec is one ported number as every peer stores it: what ported.csv says of
// it, parsed once. LRN is the 10-digit national number; SPID its 4
// characters; ActivatedAt unix seconds, 0 if unknown.
type Rec struct {
	TN          uint64
	LRN         uint64
	ActivatedAt int64
	SPID        [4]byte
}

// Answer is what a system says of a number: its ported record, or that it
// has none (Found false, other fields zero).
type Answer struct {
	Found       bool
	LRN         uint64 // 10 digits
	SPID        string
	ActivatedAt int64
}

func (a Answer) String() string {
	if !a.Found {
		return "absent"
	}
	return fmt.Sprintf("lrn=%d spid=%s at=%d", a.LRN, a.SPID, a.ActivatedAt)
}

// ReadPorted reads a source directory's ported.csv with the library's own
// reader (the one `lnpdb build` uses), so that every system pays the same
// parsing cost in its load time.
func ReadPorted(src string) ([]Rec, error) {
	f, err := os.Open(filepath.Join(src, gen.FilePorted))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []Rec
	if st, err := f.Stat(); err == nil {
		recs = make([]Rec, 0, st.Size()/40) // rows are 40 to 50 bytes
	}
	err = source.ReadPorted(f, gen.FilePorted, source.Options{}, func(p *source.Ported) error {
		if len(p.SPID) != 4 {
			return fmt.Errorf("%s:%d: spid %q is not 4 characters", gen.FilePorted, p.Line, p.SPID)
		}
		r := Rec{TN: uint64(p.TN), LRN: uint64(p.LRN), ActivatedAt: p.ActivatedAt}
		copy(r.SPID[:], p.SPID)
		recs = append(recs, r)
		return nil
	})
	return recs, err
}

// Query mixes: how MakeQueries draws its vacant quarter.
const (
	// MixProbe draws vacant numbers in vacant NPA-NXX codes of populated
	// NPAs (NPAs that hold ported numbers), so that every query probes the
	// ported table: the mix the latency targets are judged on.
	MixProbe = "probe"
	// MixRandomVacant draws vacant numbers anywhere in the NANP: many fall
	// in NPAs without a single ported number, which a table can answer
	// without touching memory. The mix of the results before format
	// version 3, kept for comparison.
	MixRandomVacant = "random-vacant"
)

// Mixes are the query mixes MakeQueries knows, the default first.
var Mixes = []string{MixProbe, MixRandomVacant}

// Queries is the query sequence every system answers, in the same order.
type Queries struct {
	Mix       string   // MixProbe or MixRandomVacant
	TNs       []uint64 // 10-digit national numbers
	Canonical []string // the same as 11-digit strings, for lrn.Lookup
	Keys      []string // the same as 10-digit strings: Redis key names
	// Hits, MissAssigned and MissVacant count the three kinds of query.
	Hits, MissAssigned, MissVacant int
	// VacantPopulated counts the vacant-code queries whose NPA holds ported
	// numbers: all of them in MixProbe.
	VacantPopulated int
}

// Len is the number of queries.
func (q *Queries) Len() int { return len(q.TNs) }

// MakeQueries draws count numbers (a power of two, so that a benchmark loop
// can wrap with a mask): half of them ported numbers (hits), a quarter
// numbers in assigned codes or thousands-blocks that are not ported, a
// quarter numbers in vacant NPA-NXX codes (both misses); shuffled. mix says
// where the vacant quarter comes from (MixProbe: vacant codes of populated
// NPAs; MixRandomVacant: anywhere). recs must be sorted by TN.
func MakeQueries(src string, recs []Rec, count int, seed uint64, mix string) (*Queries, error) {
	if count&(count-1) != 0 || count < 4 {
		return nil, fmt.Errorf("query count %d is not a power of two", count)
	}
	if mix != MixProbe && mix != MixRandomVacant {
		return nil, fmt.Errorf("query mix %q is neither %s nor %s", mix, MixProbe, MixRandomVacant)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("no ported numbers")
	}
	f, err := os.Open(filepath.Join(src, gen.FileBlocks))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type block struct{ base, span uint64 } // first number, how many numbers
	var blocks []block
	assigned := map[uint64]bool{} // npa*1000+nxx
	err = source.ReadBlocks(f, gen.FileBlocks, source.Options{}, func(b *source.Block) error {
		code := uint64(b.NPA*1000 + b.NXX)
		assigned[code] = true
		if b.X < 0 {
			blocks = append(blocks, block{code * 10000, 10000})
		} else {
			blocks = append(blocks, block{code*10000 + uint64(b.X)*1000, 1000})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ported := func(tn uint64) bool {
		_, ok := slices.BinarySearchFunc(recs, tn, func(r Rec, tn uint64) int { return cmpU64(r.TN, tn) })
		return ok
	}
	populated := PopulatedNPAs(recs)
	isPopulated := func(tn uint64) bool { _, ok := slices.BinarySearch(populated, tn/10_000_000); return ok }
	r := rand.New(rand.NewPCG(seed, 0x6c6e7064))
	q := &Queries{Mix: mix, TNs: make([]uint64, 0, count)}
	for len(q.TNs) < count/2 {
		q.TNs = append(q.TNs, recs[r.IntN(len(recs))].TN)
		q.Hits++
	}
	for tries := 0; len(q.TNs) < count*3/4; tries++ {
		if tries > 100*count {
			return nil, fmt.Errorf("cannot find %d assigned unported numbers", count/4)
		}
		b := blocks[r.IntN(len(blocks))]
		if tn := b.base + r.Uint64N(b.span); !ported(tn) {
			q.TNs = append(q.TNs, tn)
			q.MissAssigned++
		}
	}
	for tries := 0; len(q.TNs) < count; tries++ {
		if tries > 100*count {
			return nil, fmt.Errorf("cannot find %d vacant numbers (mix %s)", count/4, mix)
		}
		var tn uint64
		if mix == MixProbe {
			// A populated NPA drawn uniformly, any line in it; the code
			// must be vacant.
			tn = populated[r.IntN(len(populated))]*10_000_000 + r.Uint64N(10_000_000)
		} else {
			tn = 2_000_000_000 + r.Uint64N(8_000_000_000)
		}
		if nanp.Number(tn).Valid() && !assigned[tn/10000] && !ported(tn) {
			q.TNs = append(q.TNs, tn)
			q.MissVacant++
			if isPopulated(tn) {
				q.VacantPopulated++
			}
		}
	}
	r.Shuffle(len(q.TNs), func(i, j int) { q.TNs[i], q.TNs[j] = q.TNs[j], q.TNs[i] })
	q.Canonical = make([]string, len(q.TNs))
	q.Keys = make([]string, len(q.TNs))
	for i, tn := range q.TNs {
		q.Keys[i] = strconv.FormatUint(tn, 10)
		q.Canonical[i] = "1" + q.Keys[i]
	}
	return q, nil
}

// PopulatedNPAs returns the NPAs that hold at least one of recs' ported
// numbers, ascending. recs must be sorted by TN.
func PopulatedNPAs(recs []Rec) []uint64 {
	var npas []uint64
	for _, r := range recs {
		if npa := r.TN / 10_000_000; len(npas) == 0 || npas[len(npas)-1] != npa {
			npas = append(npas, npa)
		}
	}
	return npas
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// SortRecs sorts recs by TN and fails on a duplicate number.
func SortRecs(recs []Rec) error {
	slices.SortFunc(recs, func(a, b Rec) int { return cmpU64(a.TN, b.TN) })
	for i := 1; i < len(recs); i++ {
		if recs[i].TN == recs[i-1].TN {
			return fmt.Errorf("ported number %d appears twice", recs[i].TN)
		}
	}
	return nil
}

// Timer measures one phase's wall time.
type Timer struct{ start time.Time }

// StartTimer starts a Timer.
func StartTimer() Timer { return Timer{time.Now()} }

// Seconds is the time since StartTimer.
func (t Timer) Seconds() float64 { return time.Since(t.start).Seconds() }
