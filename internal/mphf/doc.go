// Package mphf implements a minimal perfect hash function (MPHF) over uint64
// keys: for a fixed set of n distinct keys it maps every key to its own index
// in [0, n), using about 2.6 bits per key and one pilot byte read per lookup.
//
// # Algorithm
//
// The design follows PtrHash (Groot Koerkamp, 2025), itself a variant of
// PTHash:
//
//  1. Hash. Each key is hashed to 64 bits with XXH64 of its 8 little-endian
//     bytes under the table's Seed ([Params.Hash]). For a fixed 8-byte input
//     XXH64 is a bijection of the key, so distinct keys never share a hash,
//     and its avalanche mixes the highly structured inputs (sequential and
//     clustered phone numbers) into uniform hashes.
//
//  2. Bucket. The hash is mapped to one of Buckets = ⌈n/3.5⌉ buckets (at
//     least min(n, 256), so that small tables work as well) by a
//     skewed, monotone bucket function ([Params.Bucket]): PtrHash's
//     "CubicEps", γ(x) = 255/256·x²(1+x)/2 + x/256 for x = h/2⁶⁴, followed by
//     the multiply-high range reduction ⌊γ(x)·Buckets⌋. Low-numbered buckets
//     thus receive many keys and high-numbered ones few; the builder places
//     big buckets first, while the table is still empty.
//
//  3. Slot. Each bucket stores an 8-bit pilot. A key with hash h in a bucket
//     with pilot p goes to slot
//
//     ⌊ ((h ⊕ p·C₁)·C₂ mod 2⁶⁴) · Slots / 2⁶⁴ ⌋
//
//     ([Params.Slot]), where C₁ and C₂ are large odd constants. p·C₁ is
//     PtrHash's pilot hash; the extra multiplication by C₂ lets every bit of
//     h reach the top bits used by the range reduction, so two keys of the
//     same bucket (which share the top bits of h) still land on independent
//     slots for different pilots. Slots = ⌈n/0.99⌉.
//
//  4. Remap. Slots ≥ n are taken by about 1% of the keys. The table stores,
//     for every slot s in [n, Slots), remap[s-n]: a free slot below n. Every
//     slot below n that no key took is the target of exactly one taken slot
//     ≥ n, which makes the function minimal. The remap values are
//     non-decreasing (unused entries repeat the next free slot), which a
//     future encoding could compress.
//
// A lookup is therefore: hash, bucket, ONE read of the pilot byte, slot; only
// keys whose slot is ≥ n (about 1%) read the remap table ([Table.Lookup]).
// For a key outside the set the result is some index in [0, n): callers must
// compare the key stored at that index.
//
// # Construction
//
// [Build] hashes the keys and counting-sorts their hashes by bucket, sorts each
// bucket (to detect duplicate keys and make the result independent of the
// input order) and visits buckets from largest to smallest. For each bucket it
// tries pilots 0..255 and takes the first under which all its keys land on
// distinct free slots. If none does, it takes the pilot whose collisions cost
// least (sum of the squared sizes of the buckets hit, avoiding the four most
// recently placed buckets when it can), evicts the buckets it collides with
// and places them again, cuckoo-style, as PtrHash does. If the total number of
// evictions exceeds a bound, the build is restarted with Seed+1, then Seed+2,
// and so on; the stored Seed is the one that worked. The same key set and
// seed always give byte-identical tables.
//
// Memory during Build is about 8 bytes per key for the sorted hashes, 4 bytes
// per slot for slot owners, 9 bytes per bucket and a bit per slot: about 15
// bytes per key in total, result included (150 MB for 10 million keys).
//
// # Byte layout
//
// The serialized form ([Table.AppendBinary], [Decode], [Validate]) is, with all
// integers little-endian and no padding:
//
//	offset                 size                 field
//	0                      8                    N, number of keys (< 2³²)
//	8                      8                    Buckets
//	16                     8                    Slots
//	24                     8                    Seed
//	32                     Buckets              pilots, one byte per bucket
//	32+Buckets             4·(Slots−N)          remap, uint32 each, all < N
//
// [Params] holds the 32-byte header and all of the hash math, so that a reader
// holding the bytes in a memory map can answer lookups without copying them
// ([Params.LookupBytes]).
package mphf
