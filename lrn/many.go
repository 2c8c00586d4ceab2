package lrn

import (
	"slices"
	"sync"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/core/kindorder"
	"github.com/lnpdb/lnpdb/internal/core/lookup"
	"github.com/lnpdb/lnpdb/internal/core/nanp"
)

// Answer is one number's answer in a batch: its Result, or the error
// [Lookup] would have returned for it.
type Answer struct {
	Result
	// Err is nil, ErrInvalidNumber, ErrNotFound, ErrClosed or a wrapped
	// corruption error, as from Lookup; Result is zero when Err is set.
	Err error `json:"-"`
}

// batchSize is how many numbers go to one format.DB.GetRoutes or GetMany
// call: enough independent reads in flight to hide memory latency, few
// enough that the scratch records stay in cache.
const batchSize = 256

// scratch is the per-call working memory of LookupMany, pooled so that a
// steady stream of batches allocates nothing. The records it holds point
// into a table's dictionaries; the pool drops them at the next garbage
// collections, so a closed table is not kept alive for long.
type scratch struct {
	// The batch's valid numbers, n of them, and at each one's position in
	// its chunk: fixed arrays indexed by a byte, stored to without bounds
	// checks or write barriers.
	tns [batchSize]uint64
	at  [batchSize]uint8
	n   int
	// converted[j] is tns[j]'s canonical form when its input was in
	// another form, else "": a canonical input is its own answer's
	// PhoneNumber and is not copied here. Cleared as it is used.
	converted [batchSize]string
	kinds     [batchSize]uint8 // byKind's working memory
	order     [batchSize]int   // byKind's result
	recs      []format.Record
	routes    []format.Route // without messaging: the ported record and block row alone
}

var scratchPool = sync.Pool{New: func() any {
	return &scratch{
		recs:   make([]format.Record, batchSize),
		routes: make([]format.Route, batchSize),
	}
}}

// LookupMany looks up every number in numbers as [Lookup] does and appends
// one Answer per number, in order, to out, returning the extended slice:
//
//	answers = lrn.LookupMany(db, numbers, opt, answers[:0])
//
// It parses all numbers first and then reads the valid ones from the table
// in batches with [format.DB.GetRoutes] (or, with messaging,
// [format.DB.GetMany]), which overlap their memory accesses:
// on a table larger than the CPU caches it answers more numbers per second
// than a loop over Lookup. Reusing out, it allocates nothing for canonical
// inputs.
//
// LookupMany is safe for concurrent use.
func LookupMany(db *format.DB, numbers []string, opt Options, out []Answer) []Answer {
	out = slices.Grow(out, len(numbers))
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	f := opt.fields()
	for len(numbers) > 0 {
		chunk := numbers[:min(batchSize, len(numbers))]
		numbers = numbers[len(chunk):]
		base := len(out)
		out = out[:base+len(chunk)]
		m := 0
		for k, num := range chunk {
			n, canonical, err := nanp.Parse(num)
			if err != nil {
				out[base+k] = Answer{Err: err}
				continue
			}
			j := uint8(m) // m <= k < batchSize
			s.tns[j], s.at[j] = uint64(n), uint8(k)
			if !canonical {
				s.converted[j] = n.String()
			}
			m++
		}
		if m == 0 {
			continue
		}
		s.n = m
		tns, recs, routes := s.tns[:m], s.recs[:m], s.routes[:m]
		var err error
		if opt.Messaging {
			err = db.GetMany(tns, f, recs)
		} else {
			err = db.GetRoutes(tns, !opt.Enhanced, routes)
		}
		if err != nil {
			err = lookup.Error("lrn", err)
			for j := range m {
				out[base+int(s.at[j])] = Answer{Err: err}
				s.converted[j] = ""
			}
			continue
		}
		// Resolved kind by kind (byKind), so that resolve's branches on
		// the kind go the same way from one number to the next.
		for _, j := range s.byKind(recs, routes, opt.Messaging) {
			k := int(s.at[j])
			phone := chunk[k]
			if c := s.converted[j]; c != "" {
				phone = c
				s.converted[j] = ""
			}
			a := &out[base+k]
			a.Err = nil
			ok := false
			if opt.Messaging {
				ok = resolve(&a.Result, &recs[j].Ported, &recs[j].Block, &recs[j], phone, opt)
			} else {
				ok = resolve(&a.Result, &routes[j].Ported, &routes[j].Block, nil, phone, opt)
			}
			if !ok {
				*a = Answer{Err: ErrNotFound}
			}
		}
	}
	return out
}

// byKind returns the indexes of the batch's answers (recs', with
// messaging, else routes', as many as the batch's s.n numbers) ported numbers first, then
// those of pooled blocks, then those of assigned codes, then the vacant
// ones, each kind in batch order (package kindorder).
func (s *scratch) byKind(recs []format.Record, routes []format.Route, messaging bool) []int {
	kinds := s.kinds[:s.n]
	for j := range kinds {
		var p *format.Ported
		var b *format.Block
		if messaging {
			p, b = &recs[j].Ported, &recs[j].Block
		} else {
			p, b = &routes[j].Ported, &routes[j].Block
		}
		notPorted := 1 - kindorder.Bit(p.OK)
		notPooled := 1 - kindorder.Bit(b.LRN != "")
		notCode := 1 - kindorder.Bit(b.Assigned)
		kinds[j] = notPorted * (1 + notPooled*(1+notCode)) // 0 ported, 1 pooled, 2 code, 3 vacant
	}
	kindorder.Sort(kinds, s.order[:])
	return s.order[:len(kinds)]
}
