package mphf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// HeaderSize is the size in bytes of the serialized [Params] header.
const HeaderSize = 32

// MaxKeys is the largest number of keys a table can hold (N < 2³²).
const MaxKeys = 1<<32 - 1

// XXH64 primes.
const (
	prime1 uint64 = 11400714785074694791
	prime2 uint64 = 14029467366897019727
	prime3 uint64 = 1609587929392839161
	prime4 uint64 = 9650029242287828579
	prime5 uint64 = 2870177450012600261
)

const (
	// pilotMul hashes a pilot: hp(p) = p·pilotMul (PtrHash's FxHash constant).
	pilotMul uint64 = 0x517cc1b727220a95
	// slotMul spreads every bit of h⊕hp(p) into the top bits used by the
	// range reduction (the 64-bit golden ratio).
	slotMul uint64 = 0x9e3779b97f4a7c15
)

// Params are the fixed-size header of a serialized table; they determine the
// hash math. A valid Params (as returned by [ParseHeader]) has N < 2³², and
// either N == Buckets == Slots == 0, or 1 ≤ Buckets ≤ N+64 and
// N ≤ Slots ≤ 2N+64.
type Params struct {
	// N is the number of keys; lookups return indexes in [0, N).
	N uint64
	// Buckets is the number of buckets, hence of pilot bytes.
	Buckets uint64
	// Slots is the size of the slot space; the table holds Slots-N remap
	// entries for the slots in [N, Slots).
	Slots uint64
	// Seed is the seed of the key hash.
	Seed uint64
}

// ParseHeader decodes and validates the [HeaderSize]-byte header at the start
// of b. It checks that N < 2³²; that N == 0 implies Buckets == 0 and
// Slots == 0; that N > 0 implies 1 ≤ Buckets ≤ N+64 and N ≤ Slots ≤ 2N+64;
// and that [Params.Size] fits in an int. It never panics.
func ParseHeader(b []byte) (Params, error) {
	if len(b) < HeaderSize {
		return Params{}, fmt.Errorf("mphf: header is %d bytes, need %d", len(b), HeaderSize)
	}
	p := Params{
		N:       binary.LittleEndian.Uint64(b[0:8]),
		Buckets: binary.LittleEndian.Uint64(b[8:16]),
		Slots:   binary.LittleEndian.Uint64(b[16:24]),
		Seed:    binary.LittleEndian.Uint64(b[24:32]),
	}
	if err := p.check(); err != nil {
		return Params{}, err
	}
	return p, nil
}

// check validates p as described at [ParseHeader].
func (p Params) check() error {
	if p.N > MaxKeys {
		return fmt.Errorf("mphf: header N=%d, must be < 2^32", p.N)
	}
	if p.N == 0 {
		if p.Buckets != 0 || p.Slots != 0 {
			return fmt.Errorf("mphf: header N=0 with Buckets=%d Slots=%d, both must be 0", p.Buckets, p.Slots)
		}
		return nil
	}
	if p.Buckets == 0 || p.Buckets > p.N+64 {
		return fmt.Errorf("mphf: header Buckets=%d out of range [1, N+64] for N=%d", p.Buckets, p.N)
	}
	if p.Slots < p.N || p.Slots > 2*p.N+64 {
		return fmt.Errorf("mphf: header Slots=%d out of range [N, 2N+64] for N=%d", p.Slots, p.N)
	}
	// With the bounds above the size is below 2^36; it only matters on
	// 32-bit platforms.
	if size := HeaderSize + p.Buckets + 4*(p.Slots-p.N); size > math.MaxInt {
		return fmt.Errorf("mphf: table size %d bytes does not fit in an int", size)
	}
	return nil
}

// Size is the length in bytes of the serialized table:
// HeaderSize + Buckets + 4·(Slots−N). p must be valid.
func (p Params) Size() int {
	return HeaderSize + int(p.Buckets) + 4*int(p.Slots-p.N)
}

// PilotsOffset is the offset of the pilot bytes in the serialized table.
func (p Params) PilotsOffset() int { return HeaderSize }

// RemapOffset is the offset of the uint32 remap entries in the serialized
// table: entry i (for slot N+i) is at RemapOffset()+4·i.
func (p Params) RemapOffset() int { return HeaderSize + int(p.Buckets) }

// Hash returns the 64-bit hash of key under p.Seed: XXH64 of the 8
// little-endian bytes of key, seeded with p.Seed (equal to
// xxhash.NewWithSeed(p.Seed) fed those bytes). For a fixed seed it is a
// bijection on uint64, so distinct keys have distinct hashes.
func (p Params) Hash(key uint64) uint64 {
	// XXH64 specialised to one 8-byte block.
	h := p.Seed + prime5 + 8
	h ^= bits.RotateLeft64(key*prime2, 31) * prime1
	h = bits.RotateLeft64(h, 27)*prime1 + prime4
	h ^= h >> 33
	h *= prime2
	h ^= h >> 29
	h *= prime3
	h ^= h >> 32
	return h
}

// Bucket returns the bucket, in [0, Buckets), of a key with hash h. It is
// monotone in h and skewed: PtrHash's CubicEps function
// γ(x) = 255/256·x²(1+x)/2 + x/256 of x = h/2⁶⁴, scaled to Buckets by a
// multiply-high. Buckets near 0 get the most keys. With Buckets == 0 it
// returns 0.
func (p Params) Bucket(h uint64) uint64 {
	x2, _ := bits.Mul64(h, h)
	c, _ := bits.Mul64(x2, h>>1|1<<63) // x²·(1+x)/2
	y := c/256*255 + h/256             // < 2^64, see the package doc
	b, _ := bits.Mul64(y, p.Buckets)
	return b
}

// Slot returns the slot, in [0, Slots), of a key with hash h in a bucket with
// the given pilot: the top bits of ((h ⊕ pilot·C₁)·C₂) scaled to Slots by a
// multiply-high. If the slot is ≥ N the key's index is remap[slot-N]. With
// Slots == 0 it returns 0.
func (p Params) Slot(h uint64, pilot byte) uint64 {
	return reduce(h^uint64(pilot)*pilotMul, p.Slots)
}

// reduce maps x (h xor a pilot hash) to [0, slots).
func reduce(x, slots uint64) uint64 {
	s, _ := bits.Mul64(x*slotMul, slots)
	return s
}

// LookupBytes returns the index of key in the serialized table b, which must
// be p's whole serialized form, as accepted by [Validate] (which also returned
// p). It reads b in place (for instance from a memory map) and does not
// allocate: one pilot byte, plus one remap entry for the keys whose slot is
// ≥ N. For N == 0 it returns 0. On a b that was not validated it may panic or
// return an index ≥ N.
func (p Params) LookupBytes(b []byte, key uint64) uint64 {
	if p.N == 0 {
		return 0
	}
	h := p.Hash(key)
	s := p.Slot(h, b[HeaderSize+p.Bucket(h)])
	if s < p.N {
		return s
	}
	off := uint64(p.RemapOffset()) + 4*(s-p.N)
	return uint64(binary.LittleEndian.Uint32(b[off : off+4]))
}

// Table is a built or decoded minimal perfect hash function. Tables returned
// by [Build] and [Decode] are valid: len(Pilots) == Buckets,
// len(Remap) == Slots-N and every Remap entry is < N. A Table must not be
// modified; it is safe for concurrent lookups.
type Table struct {
	Params
	// Pilots holds one pilot byte per bucket.
	Pilots []byte
	// Remap maps slot N+i to the free index Remap[i] < N.
	Remap []uint32
}

// ErrDuplicateKey is returned (wrapped, with the key) by [Build] when a key
// occurs more than once.
var ErrDuplicateKey = errors.New("mphf: duplicate key")

// Lookup returns the index of key. For a key of the set the table was built
// from, it is the key's unique index in [0, N). For any other key it is some
// index in [0, N): callers must check the key stored there. It returns 0 when
// N == 0. It does not allocate.
func (t *Table) Lookup(key uint64) uint64 {
	if t.N == 0 {
		return 0
	}
	h := t.Hash(key)
	s := t.Slot(h, t.Pilots[t.Bucket(h)])
	if s < t.N {
		return s
	}
	return uint64(t.Remap[s-t.N])
}

// AppendBinary appends the serialized table (see the package doc for the
// layout) to b and returns the extended slice.
func (t *Table) AppendBinary(b []byte) []byte {
	b = binary.LittleEndian.AppendUint64(b, t.N)
	b = binary.LittleEndian.AppendUint64(b, t.Buckets)
	b = binary.LittleEndian.AppendUint64(b, t.Slots)
	b = binary.LittleEndian.AppendUint64(b, t.Seed)
	b = append(b, t.Pilots...)
	for _, r := range t.Remap {
		b = binary.LittleEndian.AppendUint32(b, r)
	}
	return b
}

// Validate checks that b is exactly one serialized table: a valid header
// ([ParseHeader]), len(b) == Size() and every remap entry < N. It returns the
// header. It does not allocate or copy, and never panics. A validated b can be
// queried in place with [Params.LookupBytes].
func Validate(b []byte) (Params, error) {
	p, err := ParseHeader(b)
	if err != nil {
		return Params{}, err
	}
	if len(b) != p.Size() {
		return Params{}, fmt.Errorf("mphf: table is %d bytes, header (N=%d Buckets=%d Slots=%d) needs %d",
			len(b), p.N, p.Buckets, p.Slots, p.Size())
	}
	remap := b[p.RemapOffset():]
	for i := 0; i+4 <= len(remap); i += 4 {
		if r := binary.LittleEndian.Uint32(remap[i:]); uint64(r) >= p.N {
			return Params{}, fmt.Errorf("mphf: remap entry %d (slot %d) is %d, must be < N=%d",
				i/4, p.N+uint64(i/4), r, p.N)
		}
	}
	return p, nil
}

// Decode parses and validates a serialized table (see [Validate]) and returns
// it as a Table. The Table copies what it needs: b may be reused or unmapped
// afterwards. It never panics.
func Decode(b []byte) (*Table, error) {
	p, err := Validate(b)
	if err != nil {
		return nil, err
	}
	t := &Table{
		Params: p,
		Pilots: make([]byte, p.Buckets),
		Remap:  make([]uint32, p.Slots-p.N),
	}
	copy(t.Pilots, b[p.PilotsOffset():p.RemapOffset()])
	remap := b[p.RemapOffset():]
	for i := range t.Remap {
		t.Remap[i] = binary.LittleEndian.Uint32(remap[4*i:])
	}
	return t, nil
}
