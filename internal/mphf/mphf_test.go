package mphf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requireBijection checks that t maps keys one-to-one onto [0, len(keys)),
// both through Table.Lookup and through Params.LookupBytes on the serialized
// form, and that the serialized form round-trips through Decode.
func requireBijection(t testing.TB, tab *Table, keys []uint64) {
	t.Helper()
	n := uint64(len(keys))
	require.Equal(t, n, tab.N)
	require.Len(t, tab.Pilots, int(tab.Buckets))
	require.Len(t, tab.Remap, int(tab.Slots-tab.N))
	seen := make([]bool, n)
	for _, k := range keys {
		i := tab.Lookup(k)
		if i >= n {
			require.Failf(t, "index out of range", "key %d: index %d ≥ n=%d", k, i, n)
		}
		if seen[i] {
			require.Failf(t, "index hit twice", "key %d: index %d already taken", k, i)
		}
		seen[i] = true
	}
	// n keys, n indexes, no repeats: every index is hit exactly once.

	enc := tab.AppendBinary(nil)
	require.Len(t, enc, tab.Size())
	p, err := Validate(enc)
	require.NoError(t, err)
	require.Equal(t, tab.Params, p)
	dec, err := Decode(enc)
	require.NoError(t, err)
	require.Equal(t, tab.Params, dec.Params)
	require.Equal(t, tab.Pilots, dec.Pilots)
	require.Equal(t, tab.Remap, dec.Remap)
	for _, k := range keys {
		i := tab.Lookup(k)
		if dec.Lookup(k) != i || p.LookupBytes(enc, k) != i {
			require.Failf(t, "decoded lookup differs", "key %d: %d, decoded %d, bytes %d",
				k, i, dec.Lookup(k), p.LookupBytes(enc, k))
		}
	}
}

func buildBijection(t testing.TB, keys []uint64, seed uint64) *Table {
	t.Helper()
	tab, err := Build(keys, seed)
	require.NoError(t, err)
	requireBijection(t, tab, keys)
	return tab
}

func randomKeys(n int, seed uint64) []uint64 {
	r := rand.New(rand.NewPCG(seed, 0x6d706866))
	set := make(map[uint64]struct{}, n)
	keys := make([]uint64, 0, n)
	for len(keys) < n {
		k := r.Uint64()
		if _, dup := set[k]; !dup {
			set[k] = struct{}{}
			keys = append(keys, k)
		}
	}
	return keys
}

func sequentialKeys(from uint64, n int) []uint64 {
	keys := make([]uint64, n)
	for i := range keys {
		keys[i] = from + uint64(i)
	}
	return keys
}

// clusteredKeys returns blocks of 1000 consecutive phone numbers
// (NPA-NXX-X000..X999) in random thousands-blocks of random exchanges, each
// block filled at the given percentage.
func clusteredKeys(blocks, fillPct int, seed uint64) []uint64 {
	r := rand.New(rand.NewPCG(seed, 0x636c7573))
	used := map[uint64]bool{}
	var keys []uint64
	for len(used) < blocks {
		npa := 200 + r.Uint64N(800)
		nxx := 200 + r.Uint64N(800)
		x := r.Uint64N(10)
		base := npa*10_000_000 + nxx*10_000 + x*1000
		if used[base] {
			continue
		}
		used[base] = true
		for i := range uint64(1000) {
			if int(r.Uint64N(100)) < fillPct {
				keys = append(keys, base+i)
			}
		}
	}
	return keys
}

func TestHashIsXXH64(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		key, seed := r.Uint64(), r.Uint64()
		var buf [8]byte
		binary.LittleEndian.PutUint64(buf[:], key)
		d := xxhash.NewWithSeed(seed)
		_, _ = d.Write(buf[:])
		require.Equal(t, d.Sum64(), Params{Seed: seed}.Hash(key), "key %d seed %d", key, seed)
	}
	var zero [8]byte
	assert.Equal(t, xxhash.Sum64(zero[:]), Params{}.Hash(0))
}

func TestBucketAndSlotRanges(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	edges := []uint64{0, 1, 1 << 63, 1<<64 - 1, 1<<64 - 2}
	for _, nb := range []uint64{1, 2, 3, 7, 1000, 285715, 1 << 32} {
		p := Params{Buckets: nb, Slots: nb*3 + 1}
		hs := append(slices.Clone(edges), make([]uint64, 2000)...)
		for i := len(edges); i < len(hs); i++ {
			hs[i] = r.Uint64()
		}
		for _, h := range hs {
			require.Less(t, p.Bucket(h), nb)
			for _, pilot := range []byte{0, 1, 127, 255} {
				require.Less(t, p.Slot(h, pilot), p.Slots)
			}
		}
		// Monotone, covering 0 and Buckets-1.
		assert.Equal(t, uint64(0), p.Bucket(0))
		assert.Equal(t, nb-1, p.Bucket(1<<64-1))
		slices.Sort(hs)
		for i := 1; i < len(hs); i++ {
			require.LessOrEqual(t, p.Bucket(hs[i-1]), p.Bucket(hs[i]))
		}
	}
}

func TestBucketSkew(t *testing.T) {
	// The first tenth of the buckets must get far more than a tenth of the
	// keys (about 45%), the last tenth far less.
	p := Params{Buckets: 1000}
	r := rand.New(rand.NewPCG(5, 6))
	var first, last int
	const draws = 100000
	for range draws {
		b := p.Bucket(r.Uint64())
		if b < 100 {
			first++
		} else if b >= 900 {
			last++
		}
	}
	assert.Greater(t, first, draws*30/100)
	assert.Less(t, last, draws*8/100)
}

func TestParseHeader(t *testing.T) {
	hdr := func(n, b, s, seed uint64) []byte {
		var buf []byte
		for _, v := range []uint64{n, b, s, seed} {
			buf = binary.LittleEndian.AppendUint64(buf, v)
		}
		return buf
	}
	good := []Params{
		{0, 0, 0, 0},
		{0, 0, 0, 99},
		{1, 1, 1, 0},
		{1, 65, 66, 0},
		{100, 29, 102, 7},
		{1<<32 - 1, 1, 1<<33 + 62, 0},
	}
	for _, p := range good {
		got, err := ParseHeader(hdr(p.N, p.Buckets, p.Slots, p.Seed))
		require.NoError(t, err, "%+v", p)
		require.Equal(t, p, got)
	}
	bad := map[string]Params{
		"N too big":          {1 << 32, 1, 1 << 32, 0},
		"empty with buckets": {0, 1, 0, 0},
		"empty with slots":   {0, 0, 1, 0},
		"no buckets":         {5, 0, 5, 0},
		"too many buckets":   {5, 70, 5, 0},
		"slots < N":          {5, 1, 4, 0},
		"slots > 2N+64":      {5, 1, 75, 0},
		"huge":               {1<<64 - 1, 1<<64 - 1, 1<<64 - 1, 0},
	}
	for name, p := range bad {
		_, err := ParseHeader(hdr(p.N, p.Buckets, p.Slots, p.Seed))
		require.Error(t, err, name)
	}
	for i := range HeaderSize {
		_, err := ParseHeader(make([]byte, i))
		require.ErrorContains(t, err, "header is")
	}
	p, err := ParseHeader(append(hdr(3, 1, 4, 5), 1, 2, 3)) // trailing bytes are the body
	require.NoError(t, err)
	assert.Equal(t, Params{3, 1, 4, 5}, p)
	assert.Equal(t, HeaderSize+1+4, p.Size())
	assert.Equal(t, HeaderSize, p.PilotsOffset())
	assert.Equal(t, HeaderSize+1, p.RemapOffset())
}

func TestBuildEmpty(t *testing.T) {
	for _, keys := range [][]uint64{nil, {}} {
		tab, err := Build(keys, 42)
		require.NoError(t, err)
		assert.Equal(t, Params{Seed: 42}, tab.Params)
		assert.Equal(t, uint64(0), tab.Lookup(0))
		assert.Equal(t, uint64(0), tab.Lookup(12345))
		enc := tab.AppendBinary(nil)
		assert.Len(t, enc, HeaderSize)
		dec, err := Decode(enc)
		require.NoError(t, err)
		assert.Equal(t, uint64(0), dec.Lookup(7))
		assert.Equal(t, uint64(0), dec.LookupBytes(enc, 7))
		requireBijection(t, tab, keys)
	}
}

func TestBuildSmall(t *testing.T) {
	for n := 1; n <= 100; n++ {
		for seed := range uint64(5) {
			buildBijection(t, randomKeys(n, uint64(n)*10+seed), seed)
			buildBijection(t, sequentialKeys(2025550000+uint64(n)*1000, n), seed)
			buildBijection(t, sequentialKeys(0, n), seed)
		}
	}
	tab := buildBijection(t, []uint64{2025550123}, 0)
	assert.Equal(t, uint64(0), tab.Lookup(2025550123))
	assert.Equal(t, uint64(0), tab.Lookup(99)) // any key: index < N = 1
}

// TestBuildSizes sweeps the sizes where the first buckets are largest
// relative to the table, for several seeds and key shapes.
func TestBuildSizes(t *testing.T) {
	for n := 101; n <= 5000; n += 1 + n/8 {
		for seed := range uint64(4) {
			buildBijection(t, randomKeys(n, uint64(n)*100+seed), seed)
			buildBijection(t, sequentialKeys(2025550000+seed*7919, n), seed)
		}
	}
}

func TestBuildSequential(t *testing.T) {
	buildBijection(t, sequentialKeys(2025550000, 10000), 0)
	buildBijection(t, sequentialKeys(0, 10000), 1)
	buildBijection(t, sequentialKeys(1<<64-10000, 10000), 2)
	if testing.Short() {
		t.Skip("1e6-key run skipped in -short mode")
	}
	buildBijection(t, sequentialKeys(3015550000, 1_000_000), 3)
}

func TestBuildClustered(t *testing.T) {
	buildBijection(t, clusteredKeys(100, 100, 1), 0)
	buildBijection(t, clusteredKeys(300, 60, 2), 0)
	buildBijection(t, clusteredKeys(2000, 30, 3), 7)
}

func TestBuildRandom(t *testing.T) {
	for _, n := range []int{1000, 12345, 100_000} {
		buildBijection(t, randomKeys(n, uint64(n)), uint64(n))
	}
	// All keys < 10^10, like phone numbers.
	r := rand.New(rand.NewPCG(7, 8))
	set := map[uint64]bool{}
	for len(set) < 50000 {
		set[r.Uint64N(10_000_000_000)] = true
	}
	buildBijection(t, mapKeys(set), 9)
}

func mapKeys(m map[uint64]bool) []uint64 {
	keys := make([]uint64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestBuildMillion(t *testing.T) {
	if testing.Short() {
		t.Skip("1e6 keys skipped in -short mode")
	}
	keys := randomKeys(1_000_000, 11)
	tab := buildBijection(t, keys, 0)
	bitsPerKey := 8 * float64(tab.Size()) / float64(tab.N)
	t.Logf("n=%d buckets=%d slots=%d seed=%d: %.3f bits/key", tab.N, tab.Buckets, tab.Slots, tab.Seed, bitsPerKey)
	assert.LessOrEqual(t, bitsPerKey, 3.0)

	// About 1% of the keys read the remap table; the rest only a pilot.
	remapped := 0
	for _, k := range keys {
		if tab.Slot(tab.Hash(k), tab.Pilots[tab.Bucket(tab.Hash(k))]) >= tab.N {
			remapped++
		}
	}
	assert.Less(t, remapped, len(keys)*2/100)
}

func TestBuildDeterministic(t *testing.T) {
	keys := append(clusteredKeys(50, 70, 4), randomKeys(5000, 5)...)
	a, err := Build(keys, 123)
	require.NoError(t, err)
	want := a.AppendBinary(nil)

	shuffled := slices.Clone(keys)
	r := rand.New(rand.NewPCG(9, 10))
	for range 3 {
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		b, err := Build(shuffled, 123)
		require.NoError(t, err)
		require.True(t, bytes.Equal(want, b.AppendBinary(nil)), "shuffled keys gave different bytes")
	}
	slices.Sort(shuffled)
	b, err := Build(shuffled, 123)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, b.AppendBinary(nil)), "sorted keys gave different bytes")

	c, err := Build(keys, 124)
	require.NoError(t, err)
	assert.False(t, bytes.Equal(want, c.AppendBinary(nil)), "another seed should give another table")
}

func TestBuildKeepsKeys(t *testing.T) {
	keys := randomKeys(1000, 12)
	orig := slices.Clone(keys)
	_, err := Build(keys, 0)
	require.NoError(t, err)
	assert.Equal(t, orig, keys)
}

func TestBuildDuplicate(t *testing.T) {
	for _, keys := range [][]uint64{
		{5, 5},
		{1, 2, 3, 2025550123, 4, 2025550123},
		append(sequentialKeys(2025550000, 10000), 2025554242),
	} {
		_, err := Build(keys, 0)
		require.ErrorIs(t, err, ErrDuplicateKey)
		dup := keys[len(keys)-1]
		assert.ErrorContains(t, err, fmt.Sprint(dup))
	}
}

// TestSeedRetry makes the first attempts fail so that Build has to move on
// to later seeds, and checks that the stored seed is the one that worked.
func TestSeedRetry(t *testing.T) {
	keys := randomKeys(2000, 13)
	failFirst := func(attempt, slots uint64) int {
		if attempt < 3 {
			return -1
		}
		return evictionBudget(attempt, slots)
	}
	tab, err := build(keys, 1000, failFirst)
	require.NoError(t, err)
	require.Equal(t, uint64(1003), tab.Seed)
	requireBijection(t, tab, keys)
	// Rebuilding from the stored seed gives the same table.
	again, err := Build(keys, tab.Seed)
	require.NoError(t, err)
	assert.Equal(t, tab.AppendBinary(nil), again.AppendBinary(nil))

	// No working seed at all: a descriptive error.
	_, err = build(keys, 0, func(uint64, uint64) int { return -1 })
	require.ErrorContains(t, err, "no working seed")

	// A hand-made table under the wrong seed is not a bijection (sanity check
	// that Seed is really used).
	wrong := *tab
	wrong.Seed++
	seen := map[uint64]bool{}
	for _, k := range keys {
		seen[wrong.Lookup(k)] = true
	}
	assert.Less(t, len(seen), len(keys))
}

func TestDecodeRejects(t *testing.T) {
	tab, err := Build(randomKeys(500, 14), 0)
	require.NoError(t, err)
	require.NotEmpty(t, tab.Remap)
	enc := tab.AppendBinary(nil)

	_, err = Decode(enc[:len(enc)-1])
	require.ErrorContains(t, err, "needs")
	_, err = Decode(append(slices.Clone(enc), 0))
	require.ErrorContains(t, err, "needs")

	bad := slices.Clone(enc)
	binary.LittleEndian.PutUint32(bad[tab.RemapOffset():], uint32(tab.N))
	_, err = Decode(bad)
	require.ErrorContains(t, err, "remap entry 0")

	bad = slices.Clone(enc)
	binary.LittleEndian.PutUint64(bad[16:], tab.N-1) // Slots < N
	_, err = Decode(bad)
	require.ErrorContains(t, err, "Slots")

	_, err = Decode(nil)
	require.Error(t, err)
}

func TestAppendBinaryAppends(t *testing.T) {
	tab, err := Build(randomKeys(100, 15), 0)
	require.NoError(t, err)
	prefix := []byte("prefix")
	out := tab.AppendBinary(slices.Clone(prefix))
	assert.Equal(t, prefix, out[:len(prefix)])
	assert.Equal(t, tab.AppendBinary(nil), out[len(prefix):])
}

func TestLookupAllocs(t *testing.T) {
	keys := randomKeys(1000, 16)
	tab, err := Build(keys, 0)
	require.NoError(t, err)
	enc := tab.AppendBinary(nil)
	var sink uint64
	allocs := testing.AllocsPerRun(100, func() {
		for _, k := range keys[:100] {
			sink += tab.Lookup(k) + tab.LookupBytes(enc, k)
		}
	})
	assert.Zero(t, allocs)
	_ = sink
}

// TestBuildStats logs construction statistics (run with -v).
func TestBuildStats(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	for _, tc := range []struct {
		name string
		keys []uint64
	}{
		{"random 1e5", randomKeys(100_000, 21)},
		{"random 1e6", randomKeys(1_000_000, 22)},
		{"sequential 1e6", sequentialKeys(2_000_000_000, 1_000_000)},
		{"clustered", clusteredKeys(3000, 50, 23)},
	} {
		n := uint64(len(tc.keys))
		p := Params{N: n, Buckets: numBuckets(n), Slots: numSlots(n)}
		bd := newBuilder(p)
		for seed := range uint64(3) {
			p.Seed = seed
			bd.p = p
			require.NoError(t, bd.sortBuckets(tc.keys))
			start := time.Now()
			ok := bd.place(evictionBudget(0, p.Slots))
			t.Logf("%s seed %d: ok=%v evictions=%d (%.4f/bucket) max bucket %d, place %v",
				tc.name, seed, ok, bd.evictions, float64(bd.evictions)/float64(p.Buckets),
				bd.size(bd.order[0]), time.Since(start))
		}
	}
}
