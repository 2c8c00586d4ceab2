package bench

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
	bolt "go.etcd.io/bbolt"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/memfloor"
	"github.com/lnpdb/lnpdb/lrn"
)

// Batch is how many numbers one batched call handles: lnpdb's GetMany and
// LookupMany, and one Redis pipeline.
const Batch = 1024

// Case is one timed benchmark.
type Case struct {
	ID       string // stable key, e.g. "lnpdb/lookup/1"
	System   string // lnpdb, map, sqlite, redis, bbolt, floor
	Name     string // what is timed
	Parallel bool   // all cores (b.RunParallel) rather than one goroutine
	PerCall  int    // numbers per timed operation: 1, or Batch
	// Parallelism is the all-cores case's goroutines per core (0 means 1).
	Parallelism int
	// Dependent: each query's number depends on the previous answer
	// (dependent), so the time is a lookup's latency, not its throughput.
	Dependent bool
	Fn        func(b *testing.B)
}

// sink keeps the compiler from discarding the work of a loop: every body
// returns something of its answer, loops add it up in a local variable (an
// atomic or shared store per lookup would cost more than some lookups) and
// store the sum here once.
var sink atomic.Uint64

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// loop runs body over the query indexes in order, in b.Loop, one goroutine.
func loop(b *testing.B, n int, body func(i int) uint64) {
	walk(b, n, body, func(i, _ int, _ uint64) int { return i + 1 })
}

// dependent runs body in b.Loop over a chain of query indexes, each chosen
// by memfloor.Step from the value body returned for the one before (the
// queries are shuffled, so skipping some keeps the mix).
func dependent(b *testing.B, n int, body func(i int) uint64) { walk(b, n, body, memfloor.Step) }

// walk runs body in b.Loop, one goroutine, from query 0 on, the index of
// step k (k = 1, 2, ...) chosen by next from the index of step k-1, k and
// the value body returned there, modulo n.
func walk(b *testing.B, n int, body func(i int) uint64, next func(i, k int, x uint64) int) {
	b.ReportAllocs()
	mask := n - 1
	i := 0
	var s uint64
	for k := 1; b.Loop(); k++ {
		x := body(i)
		s += x
		i = next(i, k, x) & mask
	}
	sink.Add(s)
}

// lastByte is s's last byte, 0 for "": a digit of an LRN, loaded with the
// answer.
func lastByte(s string) uint64 {
	if s == "" {
		return 0
	}
	return uint64(s[len(s)-1])
}

// parallel runs body over the query indexes in b.RunParallel; goroutine g
// starts g/16 of the way into the sequence, so that goroutines do not ask
// the same numbers at the same moment.
func parallel(b *testing.B, n int, procs int, body func(i int) uint64) {
	b.ReportAllocs()
	if procs > 1 {
		b.SetParallelism(procs)
	}
	mask := n - 1
	var g atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		i := int(g.Add(1)-1) * (n / 16)
		var s uint64
		for pb.Next() {
			s += body(i & mask)
			i++
		}
		sink.Add(s)
	})
}

// batches runs body over consecutive batches of Batch query indexes.
func batches(b *testing.B, n int, par bool, body func(off int, scratch *batchScratch) uint64) {
	b.ReportAllocs()
	mask := n - 1
	if !par {
		s := newBatchScratch()
		i := 0
		var sum uint64
		for b.Loop() {
			sum += body((i*Batch)&mask, s)
			i++
		}
		sink.Add(sum)
		return
	}
	var g atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		s := newBatchScratch()
		i := int(g.Add(1)-1) * (n / 16 / Batch)
		var sum uint64
		for pb.Next() {
			sum += body((i*Batch)&mask, s)
			i++
		}
		sink.Add(sum)
	})
}

type batchScratch struct {
	recs    []format.Record
	answers []lrn.Answer
}

func newBatchScratch() *batchScratch {
	return &batchScratch{recs: make([]format.Record, Batch), answers: make([]lrn.Answer, 0, Batch)}
}

// LNPDBCases times lnpdb: the raw record read, the full LRN lookup with and
// without enhanced data and messaging, and the batch calls, each on one
// goroutine and on all cores; and the single lookups once more with each
// query's number depending on the previous answer (one goroutine).
func LNPDBCases(db *format.DB, q *Queries) []Case {
	return lnpdbCases("lnpdb", db, q, []bool{false, true})
}

// LNPDBVariantCases times a second configuration of lnpdb, the same table
// opened with other Options (see Variants), with the one-goroutine cases of
// LNPDBCases; its system is "lnpdb@" + variant.
func LNPDBVariantCases(variant string, db *format.DB, q *Queries) []Case {
	return lnpdbCases(VariantSystem(variant), db, q, []bool{false})
}

// VariantSystem is the system name of an lnpdb variant's cases.
func VariantSystem(variant string) string { return "lnpdb@" + variant }

// lnpdbBodies are the single-lookup bodies of lnpdb's cases: db.Get,
// lrn.Lookup plain and enhanced+messaging of query i, each returning a
// value computed from the answer's bytes (for sink and for memfloor.Step).
func lnpdbBodies(db *format.DB, q *Queries) (get, lookup, lookupFull func(int) uint64) {
	tns, canon := q.TNs, q.Canonical
	get = func(i int) uint64 {
		r, err := db.Get(tns[i], format.FieldPorted)
		if err != nil {
			panic(err)
		}
		return lastByte(r.Ported.LRN) + uint64(r.Ported.ActivatedAt)
	}
	lrnLookup := func(opt lrn.Options) func(i int) uint64 {
		return func(i int) uint64 {
			r, err := lrn.Lookup(db, canon[i], opt)
			if err != nil && !errors.Is(err, lrn.ErrNotFound) {
				panic(err)
			}
			return lastByte(r.LRN) + uint64(len(r.SPID)) + uint64(len(r.Messaging.Provider))
		}
	}
	return get, lrnLookup(lrn.Options{}), lrnLookup(lrn.Options{Enhanced: true, Messaging: true})
}

func lnpdbCases(system string, db *format.DB, q *Queries, modes []bool) []Case {
	var cs []Case
	tns, canon, n := q.TNs, q.Canonical, q.Len()
	plain := lrn.Options{}
	full := lrn.Options{Enhanced: true, Messaging: true}
	get, lookup, lookupFull := lnpdbBodies(db, q)
	for _, par := range modes {
		single := func(id, name string, body func(int) uint64) Case {
			return Case{ID: system + id + mode(par), System: system, Name: name, Parallel: par, PerCall: 1, Fn: func(b *testing.B) {
				if par {
					parallel(b, n, 1, body)
				} else {
					loop(b, n, body)
				}
			}}
		}
		cs = append(cs,
			single("/get", "db.Get(tn, FieldPorted)", get),
			single("/lookup", "lrn.Lookup", lookup),
			single("/lookup-full", "lrn.Lookup enhanced+messaging", lookupFull),
			Case{ID: system + "/getmany" + mode(par), System: system, Name: "db.GetMany(FieldPorted)", Parallel: par, PerCall: Batch, Fn: func(b *testing.B) {
				batches(b, n, par, func(off int, s *batchScratch) uint64 {
					if err := db.GetMany(tns[off:off+Batch], format.FieldPorted, s.recs); err != nil {
						panic(err)
					}
					return uint64(len(s.recs[Batch-1].Ported.LRN))
				})
			}},
			Case{ID: system + "/lookupmany" + mode(par), System: system, Name: "lrn.LookupMany", Parallel: par, PerCall: Batch, Fn: func(b *testing.B) {
				batches(b, n, par, func(off int, s *batchScratch) uint64 {
					s.answers = lrn.LookupMany(db, canon[off:off+Batch], plain, s.answers[:0])
					return uint64(len(s.answers[Batch-1].LRN))
				})
			}},
			Case{ID: system + "/lookupmany-full" + mode(par), System: system, Name: "lrn.LookupMany enhanced+messaging", Parallel: par, PerCall: Batch, Fn: func(b *testing.B) {
				batches(b, n, par, func(off int, s *batchScratch) uint64 {
					s.answers = lrn.LookupMany(db, canon[off:off+Batch], full, s.answers[:0])
					return uint64(len(s.answers[Batch-1].LRN))
				})
			}},
		)
	}
	dep := func(id, name string, body func(int) uint64) Case {
		return Case{ID: system + id + "-dep/1", System: system, Name: name + ", dependent", PerCall: 1, Dependent: true,
			Fn: func(b *testing.B) { dependent(b, n, body) }}
	}
	return append(cs,
		dep("/get", "db.Get(tn, FieldPorted)", get),
		dep("/lookup", "lrn.Lookup", lookup),
		dep("/lookup-full", "lrn.Lookup enhanced+messaging", lookupFull))
}

func mode(par bool) string {
	if par {
		return "/all-cores"
	}
	return "/1"
}

func simple(system, name string, n int, procs int, body func(int) uint64) []Case {
	var cs []Case
	for _, par := range []bool{false, true} {
		c := Case{ID: system + "/lookup" + mode(par), System: system, Name: name, Parallel: par, PerCall: 1}
		if par {
			c.Parallelism = procs
		}
		c.Fn = func(b *testing.B) {
			if par {
				parallel(b, n, procs, body)
			} else {
				loop(b, n, body)
			}
		}
		cs = append(cs, c)
	}
	return cs
}

// MapCases times the Go map, with independent and dependent queries.
func MapCases(m *Map, q *Queries) []Case {
	tns, mm, n := q.TNs, m.M, q.Len()
	body := func(i int) uint64 {
		r, ok := mm[tns[i]]
		return b2u(ok) + r.LRN + uint64(r.SPID[0])
	}
	return append(simple("map", "m[tn]", n, 1, body),
		Case{ID: "map/lookup-dep/1", System: "map", Name: "m[tn], dependent", PerCall: 1, Dependent: true,
			Fn: func(b *testing.B) { dependent(b, n, body) }})
}

// SQLiteCases times SQLite's prepared SELECT by primary key.
func SQLiteCases(s *SQLite, q *Queries) []Case {
	tns := q.TNs
	return simple("sqlite", "SELECT … WHERE tn = ? (prepared)", q.Len(), 1, func(i int) uint64 {
		var (
			lrn, at int64
			spid    string
		)
		err := s.Stmt.QueryRow(int64(tns[i])).Scan(&lrn, &spid, &at)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			panic(err)
		}
		return uint64(lrn) + uint64(len(spid))
	})
}

// RedisProcs is the parallelism multiplier of Redis's all-cores case: a
// client that waits on the network needs many requests in flight to keep two
// cores busy, so it gets 8 goroutines per core rather than 1.
const RedisProcs = 8

// RedisCases times HMGET one number per round trip, and pipelines of Batch
// HMGETs per round trip.
func RedisCases(r *Redis, q *Queries) []Case {
	keys, n := q.Keys, q.Len()
	ctx := context.Background()
	cs := simple("redis", "HMGET (one round trip per number)", n, RedisProcs, func(i int) uint64 {
		vals, err := r.C.HMGet(ctx, keys[i], RedisFields...).Result()
		if err != nil {
			panic(err)
		}
		return b2u(vals[0] != nil)
	})
	for _, par := range []bool{false, true} {
		cs = append(cs, Case{ID: "redis/pipelined" + mode(par), System: "redis", Name: "HMGET, pipelined", Parallel: par, PerCall: Batch, Fn: func(b *testing.B) {
			batches(b, n, par, func(off int, _ *batchScratch) uint64 {
				p := r.C.Pipeline()
				cmds := make([]*redis.SliceCmd, 0, Batch)
				for _, k := range keys[off : off+Batch] {
					cmds = append(cmds, p.HMGet(ctx, k, RedisFields...))
				}
				if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
					panic(err)
				}
				return b2u(cmds[Batch-1].Val()[0] != nil)
			})
		}})
	}
	return cs
}

// BoltCases times a bbolt read transaction per lookup.
func BoltCases(bdb *Bolt, q *Queries) []Case {
	tns := q.TNs
	return simple("bbolt", "View + Bucket.Get", q.Len(), 1, func(i int) uint64 {
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], tns[i])
		var lrn uint64
		err := bdb.DB.View(func(tx *bolt.Tx) error {
			if v := tx.Bucket(bucketName).Get(k[:]); v != nil {
				lrn = binary.BigEndian.Uint64(v) + uint64(v[16])
			}
			return nil
		})
		if err != nil {
			panic(err)
		}
		return lrn
	})
}

// Floor is the memory floor's chains: Serial for one goroutine, and one
// chain per goroutine of the all-cores case, all over one buffer, each
// starting a fraction of the cycle away from the others (so none walks
// where another has just pulled lines into the cache).
type Floor struct {
	Serial *memfloor.Chain
	Par    []*memfloor.Chain
	Size   int64
}

// NewFloor builds the chain over a buffer of size bytes and walks its whole
// cycle once, touching every page, leaving procs copies spread along it.
func NewFloor(size int64, seed uint64, procs int) *Floor {
	c := memfloor.New(size, seed)
	f := &Floor{Serial: c, Size: size}
	step := c.Len() / procs
	for range procs {
		cp := *c
		f.Par = append(f.Par, &cp)
		sink.Add(c.Step(step))
	}
	return f
}

// FloorCases times the memory floor: one dependent random 8-byte read per
// step over a buffer as large as the lnpdb table.
func FloorCases(f *Floor) []Case {
	return []Case{
		{ID: "floor/read/1", System: "floor", Name: "dependent random 8-byte read", PerCall: 1, Fn: func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			sink.Add(f.Serial.Step(b.N))
		}},
		{ID: "floor/read/all-cores", System: "floor", Name: "dependent random 8-byte read", Parallel: true, PerCall: 1, Fn: func(b *testing.B) {
			b.ReportAllocs()
			var g atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				c := f.Par[int(g.Add(1)-1)%len(f.Par)]
				var s uint64
				for pb.Next() {
					s += c.Step(1)
				}
				sink.Add(s)
			})
		}},
	}
}

// MemoryKind says where the floor's chain lives, for the footprint table.
func (f *Floor) MemoryKind() string {
	if f.Serial.HugePages() {
		return "the chain, in anonymous memory advised onto huge pages as the table's mapping is"
	}
	return "the chain, on the Go heap's small pages"
}
