package mphf

import (
	"fmt"
	"math/bits"
	"slices"
)

// Construction parameters. They are integer ratios so that the table shape is
// the same on every platform.
const (
	// Buckets = ⌈N·bucketsNum/bucketsDen⌉: λ = 3.5 keys per bucket, so the
	// pilots cost 8/3.5 ≈ 2.29 bits per key. Small tables get at least
	// min(N, minBuckets) buckets: with few buckets the skew would put most
	// keys in bucket 0, which then rarely has a pilot without two of its keys
	// on one slot.
	minBuckets = 256
	bucketsNum = 2
	bucketsDen = 7
	// Slots = ⌈N·slotsNum/slotsDen⌉: α = 0.99, so the remap table costs
	// 32·(1/α−1) ≈ 0.32 bits per key.
	slotsNum = 100
	slotsDen = 99

	// maxAttempts bounds the seeds tried by Build (Seed, Seed+1, ...).
	maxAttempts = 64
)

// numBuckets and numSlots give the table shape for n > 0 keys.
func numBuckets(n uint64) uint64 {
	return max((n*bucketsNum+bucketsDen-1)/bucketsDen, min(n, minBuckets))
}
func numSlots(n uint64) uint64 { return (n*slotsNum + slotsDen - 1) / slotsDen }

// evictionBudget is the number of eviction rounds (placements of a bucket
// that had to evict others) after which a build attempt gives up and Build
// moves on to the next seed. Typical builds need about 0.0075 per slot, some
// 30 times fewer than this budget for large n.
func evictionBudget(_, slots uint64) int { return int(slots/4) + 1<<10 }

// Build returns a minimal perfect hash table for keys, which may be in any
// order. It neither modifies nor keeps keys. seed is the first seed tried; if
// construction fails under it (which is rare) Build deterministically tries
// seed+1, seed+2, ... and records the one that worked in the Table. The same
// key set and seed always give the same table, byte for byte.
//
// It returns an error wrapping [ErrDuplicateKey] and naming the key if a key
// occurs twice, and an error if len(keys) > [MaxKeys]. n = 0 gives an empty
// table whose Lookup always returns 0.
func Build(keys []uint64, seed uint64) (*Table, error) {
	return build(keys, seed, evictionBudget)
}

// build is Build with the eviction budget of each attempt (numbered from 0)
// given by budget; a negative budget fails the attempt at once.
func build(keys []uint64, seed uint64, budget func(attempt, slots uint64) int) (*Table, error) {
	n := uint64(len(keys))
	if n > MaxKeys {
		return nil, fmt.Errorf("mphf: %d keys, at most %d supported", n, uint64(MaxKeys))
	}
	if n == 0 {
		return &Table{Params: Params{Seed: seed}, Pilots: []byte{}, Remap: []uint32{}}, nil
	}
	p := Params{N: n, Buckets: numBuckets(n), Slots: numSlots(n)}
	bd := newBuilder(p)
	for attempt := uint64(0); attempt < maxAttempts; attempt++ {
		p.Seed = seed + attempt
		bd.p = p
		if err := bd.sortBuckets(keys); err != nil {
			return nil, err
		}
		if bd.place(budget(attempt, p.Slots)) {
			return bd.table(), nil
		}
	}
	return nil, fmt.Errorf("mphf: no working seed among %d..%d for %d keys", seed, seed+maxAttempts-1, n)
}

// builder holds the working memory of one Build, reused across seeds.
type builder struct {
	p Params
	// hashes holds the key hashes grouped by bucket, ascending within each
	// bucket: bucket b is hashes[starts[b]:starts[b+1]].
	hashes []uint64
	starts []uint32 // len Buckets+1
	order  []uint32 // bucket indexes by decreasing size, then increasing index
	pilots []byte   // len Buckets
	// owner[s] is 1+bucket of the key in slot s, 0 when free.
	owner []uint32
	// taken is a bitmap of the occupied slots: the hot path reads only this.
	taken []uint64
	// pos is scratch space for the slots of one bucket.
	pos   []uint64
	stack []uint32
	// evictions counts the eviction rounds of the last place call.
	evictions int
}

func newBuilder(p Params) *builder {
	return &builder{
		hashes: make([]uint64, p.N),
		starts: make([]uint32, p.Buckets+1),
		order:  make([]uint32, p.Buckets),
		pilots: make([]byte, p.Buckets),
		owner:  make([]uint32, p.Slots),
		taken:  make([]uint64, (p.Slots+63)/64),
	}
}

func (bd *builder) size(b uint32) uint32 { return bd.starts[b+1] - bd.starts[b] }

func (bd *builder) bucket(b uint32) []uint64 { return bd.hashes[bd.starts[b]:bd.starts[b+1]] }

// sortBuckets hashes keys under bd.p.Seed, fills hashes, starts and order, and
// reports duplicate keys.
func (bd *builder) sortBuckets(keys []uint64) error {
	p := bd.p
	// Counting sort by bucket, hashing twice rather than storing the hashes
	// twice. starts[b] counts, then ends, then (after the scatter) starts.
	starts := bd.starts
	clear(starts)
	for _, k := range keys {
		starts[p.Bucket(p.Hash(k))]++
	}
	var sum uint32
	for b := range starts[:p.Buckets] {
		sum += starts[b]
		starts[b] = sum
	}
	starts[p.Buckets] = sum
	for _, k := range keys {
		h := p.Hash(k)
		b := p.Bucket(h)
		starts[b]--
		bd.hashes[starts[b]] = h
	}

	// Sort each bucket: makes the build independent of the key order and
	// puts equal hashes (equal keys, Hash being a bijection) side by side.
	maxSize := uint32(0)
	for b := range p.Buckets {
		hs := bd.bucket(uint32(b))
		maxSize = max(maxSize, uint32(len(hs)))
		if len(hs) > 24 {
			slices.Sort(hs)
		} else {
			for i := 1; i < len(hs); i++ {
				for j := i; j > 0 && hs[j] < hs[j-1]; j-- {
					hs[j], hs[j-1] = hs[j-1], hs[j]
				}
			}
		}
		for i := 1; i < len(hs); i++ {
			if hs[i] == hs[i-1] {
				return bd.duplicate(keys, hs[i])
			}
		}
	}
	if cap(bd.pos) < int(maxSize) {
		bd.pos = make([]uint64, maxSize)
	}

	// Order buckets by decreasing size (counting sort; stable, so ties keep
	// increasing bucket order).
	cnt := make([]uint32, maxSize+2)
	for b := range p.Buckets {
		cnt[maxSize-bd.size(uint32(b))+1]++
	}
	for i := 1; i < len(cnt); i++ {
		cnt[i] += cnt[i-1]
	}
	for b := range p.Buckets {
		k := maxSize - bd.size(uint32(b))
		bd.order[cnt[k]] = uint32(b)
		cnt[k]++
	}
	return nil
}

// duplicate returns the error for the key whose hash is h.
func (bd *builder) duplicate(keys []uint64, h uint64) error {
	for _, k := range keys {
		if bd.p.Hash(k) == h {
			return fmt.Errorf("%w %d", ErrDuplicateKey, k)
		}
	}
	return fmt.Errorf("%w with hash %#x", ErrDuplicateKey, h) // unreachable: h came from keys
}

func (bd *builder) isTaken(s uint64) bool { return bd.taken[s>>6]&(1<<(s&63)) != 0 }
func (bd *builder) setTaken(s uint64)     { bd.taken[s>>6] |= 1 << (s & 63) }
func (bd *builder) clearTaken(s uint64)   { bd.taken[s>>6] &^= 1 << (s & 63) }

// place assigns a pilot to every bucket, largest first, evicting placed
// buckets when needed. It returns false when more than budget evictions are
// needed or a bucket has no usable pilot.
func (bd *builder) place(budget int) bool {
	if budget < 0 {
		return false
	}
	clear(bd.owner)
	clear(bd.taken)
	clear(bd.pilots)
	bd.evictions = 0
	for _, b0 := range bd.order {
		if bd.size(b0) == 0 {
			break // the rest are empty too; their pilot stays 0
		}
		// recent holds 1+bucket of the buckets placed last in this chain,
		// which may not be evicted (it avoids short cycles).
		recent := [4]uint32{b0 + 1}
		ri := 0
		bd.stack = append(bd.stack[:0], b0)
		for len(bd.stack) > 0 {
			b := bd.stack[len(bd.stack)-1]
			bd.stack = bd.stack[:len(bd.stack)-1]
			if bd.placeFree(b) {
				continue
			}
			bd.evictions++
			if bd.evictions > budget || !bd.placeEvict(b, &recent) {
				return false
			}
			ri = (ri + 1) % len(recent)
			recent[ri] = b + 1
		}
	}
	return true
}

// placeFree looks for a pilot under which bucket b lands on distinct free
// slots and, if there is one, places b with it.
func (bd *builder) placeFree(b uint32) bool {
	hs := bd.bucket(b)
	pos := bd.pos[:len(hs)]
	slots := bd.p.Slots
	for pilot := range 256 {
		hp := uint64(pilot) * pilotMul
		i := 0
		for ; i < len(hs); i++ {
			s := reduce(hs[i]^hp, slots)
			w, m := s>>6, uint64(1)<<(s&63)
			if bd.taken[w]&m != 0 {
				break
			}
			bd.taken[w] |= m // also catches two keys of b on one slot
			pos[i] = s
		}
		if i == len(hs) {
			bd.pilots[b] = byte(pilot)
			for _, s := range pos {
				bd.owner[s] = b + 1
			}
			return true
		}
		for _, s := range pos[:i] {
			bd.clearTaken(s)
		}
	}
	return false
}

// placeEvict places bucket b with the pilot whose collisions cost least (the
// sum of the squared sizes of the buckets hit), skipping pilots that put two
// keys of b on one slot and, if possible, pilots that hit a recently placed
// bucket. It pushes the evicted buckets on the stack. It returns false if
// every pilot puts two keys of b on one slot.
func (bd *builder) placeEvict(b uint32, recent *[4]uint32) bool {
	best := bd.bestPilot(b, recent)
	if best < 0 {
		// Every pilot hits a recent bucket (or collides with itself):
		// allow evicting recent buckets rather than give up the seed.
		best = bd.bestPilot(b, &[4]uint32{})
		if best < 0 {
			return false
		}
	}
	bd.pilots[b] = byte(best)
	hp := uint64(best) * pilotMul
	for _, h := range bd.bucket(b) {
		s := reduce(h^hp, bd.p.Slots)
		if o := bd.owner[s]; o != 0 {
			bd.evict(o - 1)
			bd.stack = append(bd.stack, o-1)
		}
		bd.owner[s] = b + 1
		bd.setTaken(s)
	}
	return true
}

// bestPilot returns the pilot for bucket b of least collision cost that does
// not hit a bucket in recent (1+bucket, 0 for none) nor put two keys of b on
// one slot, or -1 if there is none. The search starts after b's previous
// pilot, so that a re-evicted bucket moves on.
func (bd *builder) bestPilot(b uint32, recent *[4]uint32) int {
	hs := bd.bucket(b)
	pos := bd.pos[:len(hs)]
	slots := bd.p.Slots
	floor := uint64(len(hs)) * uint64(len(hs))
	best, bestScore := -1, uint64(1<<64-1)
	start := int(bd.pilots[b]) + 1
pilots:
	for d := range 256 {
		pilot := byte(start + d)
		hp := uint64(pilot) * pilotMul
		var score uint64
		for i, h := range hs {
			s := reduce(h^hp, slots)
			pos[i] = s
			o := bd.owner[s]
			if o == 0 {
				continue
			}
			if o == recent[0] || o == recent[1] || o == recent[2] || o == recent[3] {
				continue pilots
			}
			sz := uint64(bd.size(o - 1))
			score += sz * sz
			if score >= bestScore {
				continue pilots
			}
		}
		if hasDuplicate(pos) {
			continue
		}
		best, bestScore = int(pilot), score
		if score <= floor {
			break // the cheapest collision likely possible
		}
	}
	return best
}

// evict frees the slots of placed bucket b.
func (bd *builder) evict(b uint32) {
	hp := uint64(bd.pilots[b]) * pilotMul
	for _, h := range bd.bucket(b) {
		s := reduce(h^hp, bd.p.Slots)
		if bd.owner[s] == b+1 {
			bd.owner[s] = 0
			bd.clearTaken(s)
		}
	}
}

// hasDuplicate reports whether pos holds a value twice. pos is small.
func hasDuplicate(pos []uint64) bool {
	if len(pos) <= 16 {
		for i := 1; i < len(pos); i++ {
			for j := range i {
				if pos[i] == pos[j] {
					return true
				}
			}
		}
		return false
	}
	c := slices.Clone(pos)
	slices.Sort(c)
	for i := 1; i < len(c); i++ {
		if c[i] == c[i-1] {
			return true
		}
	}
	return false
}

// table builds the result from a successful placement: the pilots and the
// remap of the taken slots ≥ N onto the free slots < N, in increasing order;
// remap entries of free slots ≥ N repeat the next (or last) free slot < N so
// that the remap stays non-decreasing.
func (bd *builder) table() *Table {
	p := bd.p
	remap := make([]uint32, p.Slots-p.N)
	j := p.N // next slot ≥ N to fill
	var last uint32
	for w, word := range bd.taken {
		free := ^word
		for free != 0 {
			i := uint64(w)*64 + uint64(bits.TrailingZeros64(free))
			free &= free - 1
			if i >= p.N {
				break
			}
			// i is a free slot < N: map the next taken slot ≥ N to it.
			// There are as many free slots < N as taken slots ≥ N.
			for !bd.isTaken(j) {
				remap[j-p.N] = uint32(i)
				j++
			}
			remap[j-p.N] = uint32(i)
			j++
			last = uint32(i)
		}
		if uint64(w+1)*64 >= p.N {
			break
		}
	}
	for ; j < p.Slots; j++ {
		remap[j-p.N] = last
	}
	return &Table{Params: p, Pilots: bd.pilots, Remap: remap}
}
