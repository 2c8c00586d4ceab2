package bench

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/lrn"
)

// Mismatch is one disagreement found by Check.
type Mismatch struct {
	System string
	TN     uint64
	Got    string
	Want   string
}

// CheckError lists the disagreements Check found.
type CheckError struct {
	Mismatches []Mismatch
	Total      int
}

func (e *CheckError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "systems disagree on %d answers; first ones:", e.Total)
	for _, m := range e.Mismatches {
		fmt.Fprintf(&b, "\n  %s, %d: got %s, want %s", m.System, m.TN, m.Got, m.Want)
	}
	return b.String()
}

type checker struct {
	err  CheckError
	hits int
}

func (c *checker) compare(system string, tn uint64, got, want Answer) {
	if got == want {
		return
	}
	c.err.Total++
	if len(c.err.Mismatches) < 20 {
		c.err.Mismatches = append(c.err.Mismatches, Mismatch{system, tn, got.String(), want.String()})
	}
}

func (c *checker) fail(system string, tn uint64, err error) {
	c.err.Total++
	if len(c.err.Mismatches) < 20 {
		c.err.Mismatches = append(c.err.Mismatches, Mismatch{system, tn, "error: " + err.Error(), "an answer"})
	}
}

// Check asks every system the first sample queries of q and compares the
// answers with ref's (the Go map, loaded straight from ported.csv): for a
// ported number the same LRN, SPID and activation time, for any other number
// no ported record. lnpdb is asked through every API the benchmarks time:
// Get, GetMany, lrn.Lookup and lrn.LookupMany with and without enhanced data
// and messaging. It returns the number of hits in the sample, or a
// *CheckError.
func Check(ref *Map, db *format.DB, systems map[string]System, q *Queries, sample int) (hits int, err error) {
	sample = min(sample, q.Len())
	var c checker
	want := make([]Answer, sample)
	for i := range sample {
		want[i], _ = ref.Lookup(q.TNs[i])
		if want[i].Found {
			c.hits++
		}
	}
	for name, s := range systems {
		for i := range sample {
			got, err := s.Lookup(q.TNs[i])
			if err != nil {
				c.fail(name, q.TNs[i], err)
				continue
			}
			c.compare(name, q.TNs[i], got, want[i])
		}
	}
	if db != nil {
		checkLNPDB(&c, db, q, want)
	}
	if c.err.Total > 0 {
		return c.hits, &c.err
	}
	return c.hits, nil
}

func checkLNPDB(c *checker, db *format.DB, q *Queries, want []Answer) {
	sample := len(want)
	recs := make([]format.Record, Batch)
	for base := 0; base < sample; base += Batch {
		end := min(base+Batch, sample)
		if err := db.GetMany(q.TNs[base:end], format.FieldPorted, recs); err != nil {
			c.fail("lnpdb GetMany", q.TNs[base], err)
			continue
		}
		for i := base; i < end; i++ {
			got, err := portedAnswer(recs[i-base].Ported)
			if err != nil {
				c.fail("lnpdb GetMany", q.TNs[i], err)
				continue
			}
			c.compare("lnpdb GetMany", q.TNs[i], got, want[i])
		}
	}
	for _, o := range []struct {
		name string
		opt  lrn.Options
	}{{"", lrn.Options{}}, {" enhanced+messaging", lrn.Options{Enhanced: true, Messaging: true}}} {
		for i := range sample {
			r, err := lrn.Lookup(db, q.Canonical[i], o.opt)
			got, err := lrnAnswer(r, err)
			if err != nil {
				c.fail("lrn.Lookup"+o.name, q.TNs[i], err)
				continue
			}
			c.compare("lrn.Lookup"+o.name, q.TNs[i], got, want[i])
		}
		var answers []lrn.Answer
		for base := 0; base < sample; base += Batch {
			end := min(base+Batch, sample)
			answers = lrn.LookupMany(db, q.Canonical[base:end], o.opt, answers[:0])
			for i := base; i < end; i++ {
				a := answers[i-base]
				got, err := lrnAnswer(a.Result, a.Err)
				if err != nil {
					c.fail("lrn.LookupMany"+o.name, q.TNs[i], err)
					continue
				}
				c.compare("lrn.LookupMany"+o.name, q.TNs[i], got, want[i])
			}
		}
	}
}

// lrnAnswer is the ported part of an LRN lookup's result. A number that is
// not ported still has an LRN (its pooled block's, or itself) or is
// ErrNotFound; either way it has no ported record.
func lrnAnswer(r lrn.Result, err error) (Answer, error) {
	if errors.Is(err, lrn.ErrNotFound) {
		return Answer{}, nil
	}
	if err != nil {
		return Answer{}, err
	}
	if !r.Ported {
		if r.Source == lrn.SourcePorted {
			return Answer{}, fmt.Errorf("source ported but Ported false")
		}
		return Answer{}, nil
	}
	l, err := lrn10(r.LRN)
	if err != nil {
		return Answer{}, err
	}
	var at int64
	if !r.ActivatedAt.IsZero() {
		at = r.ActivatedAt.Unix()
	}
	return Answer{Found: true, LRN: l, SPID: r.SPID, ActivatedAt: at}, nil
}
