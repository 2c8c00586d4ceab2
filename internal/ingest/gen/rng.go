package gen

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// rng is the PCG generator every random choice goes through. It is a value
// (one per NPA-NXX code, no allocation) and its sequence is fixed by its
// seed, which is what makes the output byte-identical from run to run.
type rng struct{ p rand.PCG }

// newRNG returns a generator for one stream of one seed. Streams are mixed
// through splitmix64 so that neighbouring stream numbers (code indexes) give
// unrelated sequences.
func newRNG(seed int64, stream uint64) rng {
	var r rng
	r.p.Seed(splitmix(uint64(seed)^0x6c6e706462), splitmix(stream+0x9e3779b97f4a7c15))
	return r
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// intn returns a number in [0, n); n must be positive. The multiply-shift
// reduction has a bias below 2^-40 for the sizes used here.
func (r *rng) intn(n int) int {
	hi, _ := bits.Mul64(r.p.Uint64(), uint64(n))
	return int(hi)
}

// float returns a number in [0, 1).
func (r *rng) float() float64 { return float64(r.p.Uint64()>>11) * 0x1p-53 }

// chance reports true with probability p.
func (r *rng) chance(p float64) bool { return r.float() < p }

// pick returns an index i with probability proportional to the weight whose
// running total is cum[i] (cum ascending, last element the total).
func (r *rng) pick(cum []float64) int {
	x := r.float() * cum[len(cum)-1]
	lo, hi := 0, len(cum)-1
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if cum[m] <= x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// cumulative returns the running totals of w.
func cumulative(w []float64) []float64 {
	c := make([]float64, len(w))
	s := 0.0
	for i, v := range w {
		s += v
		c[i] = s
	}
	return c
}

// norm returns a standard normal variate (Box–Muller).
func (r *rng) norm() float64 {
	u := 1 - r.float() // (0, 1]
	return math.Sqrt(-2*math.Log(u)) * math.Cos(2*math.Pi*r.float())
}
