package format

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPermuteIsABijection(t *testing.T) {
	seen := make([]uint64, (1<<permBits)/64)
	for x := range uint64(1 << permBits) {
		y := permute(x)
		if y >= 1<<permBits || seen[y/64]&(1<<(y%64)) != 0 {
			t.Fatalf("permute(%d) = %d: out of range or twice", x, y)
		}
		seen[y/64] |= 1 << (y % 64)
		if unpermute(y) != x {
			require.Equal(t, x, unpermute(y), "unpermute(permute(%d))", x)
		}
	}
}

// packedSection packs keys (remainders within one NPA) with random
// fields of the given widths into a section of one partition, NPA 212.
func packedSection(t *testing.T, r *rand.Rand, keys []uint64, widths []uint) (*numSection, []byte, map[uint64]fieldValues) {
	t.Helper()
	bases := make([]uint64, len(widths))
	l, err := newLayout(widths, bases)
	require.NoError(t, err)
	vals := map[uint64]fieldValues{}
	xs := make([]uint64, len(keys))
	byX := map[uint64]uint64{}
	for i, k := range keys {
		var v fieldValues
		for f, w := range widths {
			v[f] = r.Uint64() & (1<<w - 1)
			if w == 64 {
				v[f] = r.Uint64()
			}
		}
		vals[k] = v
		xs[i] = permute(k - keyBase)
		byX[xs[i]] = k
	}
	slices.Sort(xs)
	pt, place := planTable(xs, l.payload)
	b := packTable(&pt, xs, place, &l, func(i int) fieldValues { return vals[byX[xs[i]]] })
	require.Len(t, b, int(pt.nphys*bucketBytes))
	b = append(b, make([]byte, bucketSlack)...)
	sec := &numSection{id: "TEST", keys: uint64(len(keys)), layout: l}
	pt.place(0)
	sec.parts[212] = pt
	return sec, b, vals
}

func TestBucketTablesFindEveryKeyAndNothingElse(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 60 {
		var widths []uint
		total := uint(0)
		for len(widths) < maxFields {
			w := uint(1 + r.IntN(64))
			if total+w > 100 {
				break
			}
			widths = append(widths, w)
			total += w
		}
		if len(widths) == 0 {
			widths = []uint{1}
		}
		n := []int{1, 2, 7, 60, 500, 5000, 40000}[trial%7]
		set := map[uint64]bool{}
		var keys []uint64
		for len(keys) < n {
			// Clustered, as real numbers are: a few NXXs, runs of lines.
			k := keyBase + uint64(r.IntN(8))*10000*uint64(1+trial%90) + uint64(r.IntN(10000))
			if trial%3 == 0 {
				k = keyBase + r.Uint64N(8000000)
			}
			if !set[k] {
				set[k] = true
				keys = append(keys, k)
			}
		}
		sec, b, vals := packedSection(t, r, keys, widths)
		for _, k := range keys {
			var q probe
			sec.aim(212, k, &q)
			require.NoError(t, sec.find(b, &q))
			require.True(t, q.hit, "trial %d: key %d not found", trial, k)
			var v fieldValues
			sec.fields(q.w, &v)
			require.Equal(t, vals[k], v, "trial %d: key %d", trial, k)
		}
		for range 2000 {
			k := keyBase + r.Uint64N(8000000)
			var q probe
			sec.aim(212, k, &q)
			require.NoError(t, sec.find(b, &q))
			require.Equal(t, set[k], q.hit, "trial %d: key %d", trial, k)
		}
		var seen []uint64
		require.NoError(t, sec.eachEntry(212, b, func(_, rem, _ uint64, _ window) error {
			seen = append(seen, rem)
			return nil
		}))
		slices.Sort(seen)
		slices.Sort(keys)
		require.Equal(t, keys, seen)
		load := float64(n) / float64(sec.parts[212].nb*sec.parts[212].slots)
		if n >= 5000 {
			require.Greater(t, load, 0.8, "trial %d: a table of %d keys is too sparse", trial, n)
		}
	}
}

func TestPutBitsWindow(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		b := make([]byte, 2*bucketBytes)
		pos := uint(r.IntN(400))
		w := uint(1 + r.IntN(64))
		v := r.Uint64()
		if w < 64 {
			v &= 1<<w - 1
		}
		putBits(b, pos, v, w)
		got := loadWindow((*[17]byte)(b[pos/8:]), pos%8).field(0, w)
		require.Equal(t, v, got, "pos %d width %d", pos, w)
	}
}

func TestLayoutLimits(t *testing.T) {
	_, err := newLayout([]uint{64, 58}, []uint64{0, 0})
	require.Error(t, err, "122 bits of fields exceed a window")
	_, err = newLayout([]uint{65}, []uint64{0})
	require.Error(t, err)
	l, err := newLayout([]uint{64, 57}, []uint64{0, 0})
	require.NoError(t, err)
	require.Equal(t, uint(121), l.payload)
}

func TestWidthFor(t *testing.T) {
	for n, want := range map[int]uint{0: 1, 1: 1, 2: 1, 3: 2, 4: 2, 5: 3, 256: 8, 257: 9} {
		require.Equal(t, want, widthFor(n), "n=%d", n)
	}
}

// TestClusteredKeysStillFit: keys whose permuted values are consecutive —
// as clustered as keys can be — overflow further than a displacement can
// say at the usual load; the table is made sparser until they fit, and
// every key is found.
func TestClusteredKeysStillFit(t *testing.T) {
	var keys []uint64
	for x := uint64(1 << 22); len(keys) < 20000; x++ {
		if k := unpermute(x) + keyBase; k < 10000000 {
			keys = append(keys, k)
		}
	}
	sec, b, vals := packedSection(t, rand.New(rand.NewPCG(5, 6)), keys, []uint{20})
	pt := sec.parts[212]
	require.LessOrEqual(t, pt.dbits, uint(maxDispBits))
	require.Greater(t, pt.nb*pt.slots, 2*uint64(len(keys)), "made sparser than the usual load")
	for _, k := range keys {
		var q probe
		sec.aim(212, k, &q)
		require.NoError(t, sec.find(b, &q))
		require.True(t, q.hit, "key %d", k)
		var v fieldValues
		sec.fields(q.w, &v)
		require.Equal(t, vals[k], v)
	}
}

// TestWindowField checks field at every position and width a window
// holds against the bits read one by one.
func TestWindowField(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 20 {
		w := window{r.Uint64(), r.Uint64()}
		for pos := uint(0); pos < 128; pos++ {
			for width := uint(1); width <= 64 && pos+width <= 128; width++ {
				var want uint64
				for i := range width {
					word, at := w.lo, pos+i
					if at >= 64 {
						word, at = w.hi, at-64
					}
					want |= (word >> at & 1) << i
				}
				if got := w.field(pos, width); got != want {
					t.Fatalf("window %#x %#x: field(%d, %d) = %#x, want %#x", w.lo, w.hi, pos, width, got, want)
				}
			}
		}
	}
}
