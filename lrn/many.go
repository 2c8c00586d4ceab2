package lrn

import (
	"slices"
	"sync"
	"time"

	"github.com/lnpdb/lnpdb"
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
	// The batch's valid numbers, and at each one's position in its
	// chunk: fixed arrays indexed by a byte, stored to without bounds
	// checks or write barriers.
	tns [batchSize]uint64
	at  [batchSize]uint8
	// phones is, for a chunk with an input in another form than the
	// canonical, each input's canonical form at its position (an invalid
	// input's as it came); a chunk of canonical inputs is its own. Cleared
	// after the chunk's answers.
	phones [batchSize]string
	// kinds[k] lists the batch's numbers of kind k (kindOf), in batch
	// order.
	kinds  [numKinds][batchSize]uint8
	recs   []format.Record
	routes []format.Route // without messaging: the ported record and block row alone
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
		dst := out[base:]
		m, phones := s.parse(chunk, dst)
		if m == 0 {
			continue
		}
		var err error
		if opt.Messaging {
			err = db.GetMany(s.tns[:m], f, s.recs[:m])
		} else {
			err = db.GetRoutes(s.tns[:m], !opt.Enhanced, s.routes[:m])
		}
		switch {
		case err != nil:
			err = lookup.Error("lrn", err)
			for j := range m {
				dst[s.at[j]] = Answer{Err: err}
			}
		case opt.Messaging:
			s.resolveRecords(dst, phones, s.recs[:m], opt)
		default:
			s.resolveRoutes(dst, phones, s.routes[:m], opt)
		}
		if &phones[0] == &s.phones[0] {
			clear(phones)
		}
	}
	return out
}

// LookupManyNumbers is [LookupMany] of numbers parsed once with
// [lnpdb.ParseNumber], as [LookupNumber] is [Lookup] of one: it answers
// exactly as LookupMany of their canonical forms, through the same batches.
// A canonical form takes the batch's fast path (11 digits checked, nothing
// parsed again), and nothing allocates that LookupMany of canonical inputs
// would not: reusing out, nothing. The zero Number is [ErrInvalidNumber].
//
// LookupManyNumbers is safe for concurrent use.
func LookupManyNumbers(db *format.DB, numbers []lnpdb.Number, opt Options, out []Answer) []Answer {
	// The canonical forms of a batch at a time, on the stack: LookupMany
	// keeps no reference to its argument beyond the strings themselves,
	// which the Numbers hold already.
	var phones [batchSize]string
	out = slices.Grow(out, len(numbers))
	for len(numbers) > 0 {
		chunk := numbers[:min(batchSize, len(numbers))]
		numbers = numbers[len(chunk):]
		for i, n := range chunk {
			phones[i] = n.String()
		}
		out = LookupMany(db, phones[:len(chunk)], opt, out)
	}
	return out
}

// parse parses chunk, answering each invalid number in dst, and keeps the
// valid ones in s; it returns how many it kept and the canonical forms at
// their positions in chunk: chunk itself unless an input was in another
// form, else s.phones.
func (s *scratch) parse(chunk []string, dst []Answer) (m int, phones []string) {
	// Canonical inputs, the common case, each at its own position, in a
	// loop that keeps no more across the call than it must.
	// Their positions are the identity, copied rather than stored one by
	// one.
	chunk = chunk[:min(len(chunk), batchSize)]
	m = nanp.ParseCanonicalPrefix(chunk, s.tns[:])
	copy(s.at[:m], identity[:m])
	dst = dst[:len(chunk)]
	phones = chunk
	for k := m; k < len(chunk); k++ {
		num := chunk[k]
		n, canonical := nanp.ParseCanonical(num)
		if !canonical {
			var err error
			if n, _, err = nanp.Parse(num); err != nil {
				dst[k] = Answer{Err: err}
				continue
			}
			if &phones[0] != &s.phones[0] {
				phones = s.phones[:len(chunk)]
				copy(phones, chunk)
			}
			phones[k] = n.String()
		}
		j := uint8(m) // m <= k < batchSize
		s.tns[j], s.at[j] = uint64(n), uint8(k)
		m++
	}
	return m, phones
}

// identity is each position of a batch at that position: where the
// numbers of a batch's canonical prefix are in their chunk.
var identity = func() (at [batchSize]uint8) {
	for i := range at {
		at[i] = uint8(i)
	}
	return at
}()

// The kinds of answer, in the order LookupMany resolves them: kind by
// kind, so that the branches on the kind go the same way from one number
// to the next (package kindorder), and a plain answer is set with none.
const (
	kindPorted = iota
	kindPooled
	kindCode
	kindVacant
	numKinds
)

// kindBits returns, for a number with ported record p and block row b,
// 1 for the kind of its answer and 0 for the others (all 0: vacant),
// without a branch.
func kindBits(p *format.Ported, b *format.Block) (ported, pooled, code uint8) {
	ported = kindorder.Bit(p.OK)
	pooled = kindorder.Bit(b.LRN != "") &^ ported
	code = kindorder.Bit(b.Assigned) &^ (ported | pooled)
	return ported, pooled, code
}

// routeByKind lists the batch's numbers by kind, from their routes, and
// returns each list's length. Each number is written into every list,
// at the list's end; only the end of its own kind's moves on: no branch,
// no count to load and store. A function of its own, so that the loop
// has its few values in registers.
func (s *scratch) routeByKind(routes []format.Route) [numKinds]uint {
	// The counts reach batchSize, 256, when a whole batch is of one kind:
	// they are uints, and only an index into a list is a byte.
	var np, nl, nc uint
	pl, ll, cl, vl := &s.kinds[kindPorted], &s.kinds[kindPooled], &s.kinds[kindCode], &s.kinds[kindVacant]
	for j := range routes {
		ported, pooled, code := kindBits(&routes[j].Ported, &routes[j].Block)
		// The vacant ones so far are the numbers so far not of the others.
		pl[uint8(np)], ll[uint8(nl)], cl[uint8(nc)], vl[uint8(uint(j)-np-nl-nc)] = uint8(j), uint8(j), uint8(j), uint8(j)
		np += uint(ported)
		nl += uint(pooled)
		nc += uint(code)
	}
	return [numKinds]uint{np, nl, nc, uint(len(routes)) - np - nl - nc}
}

// recordByKind is routeByKind for records.
func (s *scratch) recordByKind(recs []format.Record) [numKinds]uint {
	var np, nl, nc uint
	pl, ll, cl, vl := &s.kinds[kindPorted], &s.kinds[kindPooled], &s.kinds[kindCode], &s.kinds[kindVacant]
	for j := range recs {
		ported, pooled, code := kindBits(&recs[j].Ported, &recs[j].Block)
		// The vacant ones so far are the numbers so far not of the others.
		pl[uint8(np)], ll[uint8(nl)], cl[uint8(nc)], vl[uint8(uint(j)-np-nl-nc)] = uint8(j), uint8(j), uint8(j), uint8(j)
		np += uint(ported)
		nl += uint(pooled)
		nc += uint(code)
	}
	return [numKinds]uint{np, nl, nc, uint(len(recs)) - np - nl - nc}
}

// resolveRoutes answers, into dst, the batch's numbers from their routes.
func (s *scratch) resolveRoutes(dst []Answer, phones []string, routes []format.Route, opt Options) {
	n := s.routeByKind(routes)
	if opt.Enhanced {
		for k := range kindVacant {
			for _, j := range s.kinds[k][:n[k]] {
				rt, a := &routes[j], &dst[s.at[j]]
				a.Err = nil
				resolve(&a.Result, &rt.Ported, &rt.Block, nil, phones[s.at[j]], opt)
			}
		}
	} else {
		for _, j := range s.kinds[kindPorted][:n[kindPorted]] {
			p := &routes[j].Ported
			var t lnpdb.Time // lnpdb.Unix, inlined (see Result.set)
			if p.ActivatedAt != 0 {
				t.Time = time.Unix(p.ActivatedAt, 0).UTC()
			}
			dst[s.at[j]].setPlain(p.LRN, t, SourcePorted, p.Carrier, phones[s.at[j]], nil)
		}
		for _, j := range s.kinds[kindPooled][:n[kindPooled]] {
			b := &routes[j].Block
			var t lnpdb.Time
			if b.ActivatedAt != 0 {
				t.Time = time.Unix(b.ActivatedAt, 0).UTC()
			}
			dst[s.at[j]].setPlain(b.LRN, t, SourcePooled, b.Carrier, phones[s.at[j]], nil)
		}
		for _, j := range s.kinds[kindCode][:n[kindCode]] {
			phone := phones[s.at[j]]
			dst[s.at[j]].setPlain(phone, lnpdb.Time{}, SourceCode, routes[j].Block.Carrier, phone, nil)
		}
	}
	for _, j := range s.kinds[kindVacant][:n[kindVacant]] {
		// Cleared field by field, not as a whole Answer: see resolve.
		dst[s.at[j]].setPlain("", lnpdb.Time{}, 0, nil, "", ErrNotFound)
	}
}

// setPlain sets a to a plain lookup's answer (no enhanced or messaging
// data), as resolve does, from its parts: the LRN, its activation, its
// source, the current carrier, the number's canonical form and the
// error (with zero parts, a vacant number's answer). Each field is
// written once.
func (a *Answer) setPlain(lrn string, at lnpdb.Time, source Source, c *format.Carrier, phone string, err error) {
	spid := ""
	if c != nil {
		spid = c.OCN
	}
	// The pointers stored together, under one write-barrier check.
	a.LRN, a.PhoneNumber, a.ActivatedAt, a.SPID, a.Err = lrn, phone, at, spid, err
	a.Ported, a.Source = source == SourcePorted, source
	if a.Enhanced.present {
		a.Enhanced = Enhanced{}
	}
	a.Messaging.Reset()
}

// resolveRecords answers, into dst, the batch's numbers from their
// records (with messaging).
func (s *scratch) resolveRecords(dst []Answer, phones []string, recs []format.Record, opt Options) {
	n := s.recordByKind(recs)
	for k := range kindVacant {
		for _, j := range s.kinds[k][:n[k]] {
			rec, a := &recs[j], &dst[s.at[j]]
			a.Err = nil
			resolve(&a.Result, &rec.Ported, &rec.Block, rec, phones[s.at[j]], opt)
		}
	}
	for _, j := range s.kinds[kindVacant][:n[kindVacant]] {
		// Cleared field by field, not as a whole Answer: see resolve.
		dst[s.at[j]].setPlain("", lnpdb.Time{}, 0, nil, "", ErrNotFound)
	}
}
