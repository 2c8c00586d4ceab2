package format

import (
	"encoding/binary"
	"math/bits"
)

// A per-number section (PORTED, MSGRECS, CNAM, TRUST) is a hash table of
// 64-byte buckets, one table per NPA, whose bucket is computed from the
// number alone: a lookup's first memory access is the cache line that
// holds the answer. The number's remainder within its NPA is permuted
// (permute is a bijection on 23 bits), the permuted value's place in
// [0, 2^23) picks the home bucket, and the entry stores only the key's
// place within the home bucket's share of that range (the bucket's index
// says the rest, so it is not stored). Both come from one multiplication,
// x*B for B home buckets: its bits from 23 up are the home, and the bits
// below, shifted right as far as keeps them distinct, are the key's place,
// its fraction. Every key bit is kept, so answers are exact: a number that
// is not in the section matches no entry. Entries are placed in ascending permuted order; an entry that
// does not fit in its home bucket goes to the next bucket with room and
// records how far it went, and its home bucket's overflow flag sends a
// lookup on.
//
// An entry's key part (offset and displacement) is split: its low 8 bits,
// the tag, sit in a byte array after the bucket's header, one byte a slot,
// and the rest before the entry's fields. A lookup compares its tag with
// eight slots' tags at once (SWAR) and reads only the entries whose tag
// matches, rather than walking every entry's bits; the split costs no
// bits, only the rounding of a key part shorter than a byte up to one.

const (
	bucketBytes = 64
	// bucketHeaderBits is the header byte: bits 0-5 the number of entries,
	// bit 7 set when entries whose home this is continue in later buckets.
	// The slots' tags follow it, a byte each, then the entries.
	bucketHeaderBits = 8
	bucketBits       = bucketBytes*8 - bucketHeaderBits // bits for tags and entries
	maxSlots         = 63                               // what 6 bits count
	overflowFlag     = 0x80
	slotMask         = 0x3f
	tagBits          = 8
	// bucketSlack is the zero bytes after a section's last bucket, so that
	// the line after any bucket (touch) and a window read at any entry
	// (eachEntry) stay inside the section.
	bucketSlack = bucketBytes

	permBits = 23 // keys are NXX*10000+line - keyBase < 2^23
	permMask = 1<<permBits - 1
	// Odd multipliers are bijections modulo 2^23, and so are right
	// xor-shifts: permute is a bijection on [0, 2^23).
	permMul1    = 0x5bd1e995 & permMask
	permMul2    = 0x1b873593 & permMask
	maxDispBits = 8
)

var (
	permInv1 = oddInverse(permMul1)
	permInv2 = oddInverse(permMul2)
)

// permute spreads the 23-bit keys of an NPA, which cluster by NXX and
// thousands-block, evenly over [0, 2^23).
func permute(x uint64) uint64 {
	x = x * permMul1 & permMask
	x ^= x >> 12
	x = x * permMul2 & permMask
	x ^= x >> 11
	return x
}

// unpermute is permute's inverse.
func unpermute(x uint64) uint64 {
	x ^= x>>11 ^ x>>22
	x = x * permInv2 & permMask
	x ^= x >> 12
	x = x * permInv1 & permMask
	return x
}

// oddInverse returns the inverse of odd a modulo 2^23 (Newton's
// iteration doubles the correct low bits each step).
func oddInverse(a uint64) uint64 {
	inv := a
	for range 5 {
		inv *= 2 - a*inv
	}
	return inv & permMask
}

// homeOf is the home bucket of permuted value x in a table of nb buckets.
func homeOf(x, nb uint64) uint64 { return x * nb >> permBits }

// fracShift is how far the low 23 bits of x*nb are shifted right to give
// x's fraction: the largest s with 2^s <= nb. The keys of one home give
// values of x*nb that are nb apart, so their fractions stay distinct, in
// 23-s bits (at least 1).
func fracShift(nb uint64) uint { return min(uint(bits.Len64(nb))-1, permBits-1) }

// fraction is x's home bucket in a table of nb buckets and its fraction.
func fraction(x, nb uint64, shift uint) (h, f uint64) {
	p := x * nb
	return p >> permBits, p & permMask >> (shift & 63)
}

// part is one NPA's table, with its entry layout.
type part struct {
	n     uint64 // keys
	nb    uint64 // home buckets
	nphys uint64 // buckets, home buckets and the overflow past them
	base  int64  // absolute offset of bucket 0
	rbits uint   // fraction bits
	dbits uint   // displacement bits
	slots uint64 // entries a bucket holds
	// What aim and find use, worked out once: the fraction's shift, the
	// key part's bits (fraction and displacement) and its displacement
	// bits (which find inverts so that a bucket's key parts ascend), the
	// key part's bits in an entry (all but the tag's 8) and their mask,
	// an entry's bits (those and the fields), the bit at which slot 0's
	// entry starts, after the header and the tags, and the offset of the
	// last bucket.
	fshift uint
	kbits  uint
	flip   uint64
	hbits  uint
	hmask  uint64
	width  uint
	ebase  uint
	last   int64
	// lastBit is where a full bucket's last entry starts.
	lastBit uint
}

// partLayout computes the entry layout of a table of nb home buckets with
// dbits of displacement, for fields of payload bits; ok is false when an
// entry does not fit in a bucket.
func partLayout(nb uint64, dbits, payload uint) (p part, ok bool) {
	p.nb, p.dbits = nb, dbits
	p.fshift = fracShift(nb)
	p.rbits = permBits - p.fshift
	p.kbits = p.rbits + dbits
	p.flip = (1<<dbits - 1) << p.rbits
	p.hbits = max(p.kbits, tagBits) - tagBits
	p.hmask = 1<<p.hbits - 1
	p.width = p.hbits + payload
	if p.width+tagBits > bucketBits {
		return p, false
	}
	p.slots = min(maxSlots, uint64(bucketBits/(p.width+tagBits)))
	p.ebase = bucketHeaderBits + tagBits*uint(p.slots)
	p.lastBit = p.entryBit(p.slots - 1)
	return p, true
}

// keyPart is what an entry stores of a key of fraction f and how far from
// its home bucket it sits. Its low 8 bits are the slot's tag, the rest
// the entry's first hbits.
func (pt *part) keyPart(f, disp uint64) uint64 { return f | disp<<pt.rbits }

// keyOf is the permuted value of home bucket h with fraction f; ok is
// false when there is none: the one multiple of nb, if any, among the
// values of x*nb that give them.
func (pt *part) keyOf(h, f uint64) (x uint64, ok bool) {
	lo := h<<permBits | f<<pt.fshift
	x = (lo + pt.nb - 1) / pt.nb
	return x, x < 1<<permBits && x*pt.nb < lo+1<<pt.fshift
}

// place sets the offset of the table's first bucket, and so its last's.
func (pt *part) place(base int64) {
	pt.base = base
	pt.last = base + int64(pt.nphys-1)*bucketBytes
}

// entryBit is the bit at which slot i's entry starts within its bucket.
func (pt *part) entryBit(i uint64) uint { return pt.ebase + uint(i)*pt.width }

// probe is one number's lookup in a per-number section, in stages so that
// a caller can start the memory accesses of several sections (or several
// numbers) before it waits for any of them: aim computes the bucket, touch
// loads its first byte (starting the cache miss), find reads the entry.
type probe struct {
	pt  *part  // nil: the number cannot be in the section
	off int64  // the home bucket's offset
	f   uint64 // the key's fraction
	hit bool   // a batch's find found the number; its fields are w
	w   window // the entry's fields, from their first bit
}

// aim computes npa-rem's home bucket; q.pt is nil when the NPA holds no
// keys (or the remainder is no valid line).
func (s *numSection) aim(npa, rem uint64, q *probe) { s.aimKey(npa, lineKey(rem), q) }

// lineKey is the permuted key of a remainder within an NPA, and ^0 for a
// remainder that is no line number (below 2,000,000): a lookup of several
// sections permutes once and aims each with aimKey.
func lineKey(rem uint64) uint64 {
	if rem-keyBase >= 10000000-keyBase {
		return ^uint64(0)
	}
	return permute(rem - keyBase)
}

// aimKey is aim for the permuted key x (lineKey's).
func (s *numSection) aimKey(npa, x uint64, q *probe) {
	pt := &s.parts[npa]
	if pt.n == 0 || x > permMask {
		q.pt, q.off = nil, 0 // touch reads the file's first lines
		return
	}
	q.pt = pt
	h, f := fraction(x, pt.nb, pt.fshift)
	q.f = f
	q.off = pt.base + int64(h)*bucketBytes
}

// find looks an aimed probe's key up in its home bucket and, when the
// bucket says so, the buckets after it; it sets q.hit, and q.w to the
// entry's fields.
//
// In each bucket it compares the key part's tag with eight slots' tags at
// a time: x, the tags xor the key's tag in every byte, has a zero byte
// where they are equal, and ^((x&0x7f…7f + 0x7f…7f) | x) & 0x80…80 sets
// the high bit of exactly those bytes (the sum carries into a byte's high
// bit when its low seven bits are not all zero, and never into the next
// byte; the subtracting form, a bit shorter, also flags a byte just above
// a zero one, which would be a slot with the wrong tag). Only a slot whose
// tag matches has its entry read, to compare the rest of the key part; a
// key a bucket holds matches in exactly one slot, as entries are
// distinct.
//
// A bucket's entries are in ascending permuted order: those of earlier
// homes (a larger displacement) first, then the home's own by fraction,
// then later homes'. With the displacement bits inverted (flip), key parts
// order them exactly so. A key not in a bucket can be in the next only
// when the bucket is full and its last entry comes before the key (and,
// in the home bucket, when its overflow flag says that some of its
// entries went on).
func (s *numSection) find(m []byte, q *probe) error {
	q.hit = false
	pt := q.pt
	if pt == nil {
		return nil
	}
	kp := pt.keyPart(q.f, 0) // the displacement is added as find goes on
	off := q.off
	for {
		// The bucket and the line after it (the next bucket, or the
		// section's slack): every load below starts inside the bucket
		// (the masks of the byte offsets change nothing and spare the
		// bounds checks), and none reaches past the second line. Bytes
		// and bits past the bucket's count are dropped by the masks.
		b := m[off : off+2*bucketBytes : off+2*bucketBytes]
		hdr := uint64(b[0])
		cnt := hdr & slotMask
		if cnt > pt.slots {
			return errCorruptRecord
		}
		tag := kp & 0xff * 0x0101010101010101
		for g := uint64(0); ; g += 8 {
			x := binary.LittleEndian.Uint64(b[(1+g)&(bucketBytes-1):]) ^ tag
			z := ^(x&0x7f7f7f7f7f7f7f7f + 0x7f7f7f7f7f7f7f7f | x) & slotBytes[(cnt-g)&63] // the bucket's slots only
			for ; z != 0; z &= z - 1 {
				bit := pt.entryBit(g + uint64(bits.TrailingZeros64(z))/8)
				if binary.LittleEndian.Uint64(b[bit>>3&(bucketBytes-1):])>>(bit&7)&pt.hmask == kp>>tagBits {
					bit += pt.hbits
					q.w = loadWindow((*[17]byte)(b[bit>>3&(bucketBytes-1):]), bit&7)
					q.hit = true
					return nil
				}
			}
			if g+8 >= cnt {
				break
			}
		}
		if cnt < pt.slots || kp>>(pt.rbits&63) == 0 && hdr&overflowFlag == 0 || off >= pt.last {
			return nil
		}
		// The bucket is full: its last entry is slot slots-1, whose tag is
		// byte slots.
		bit := pt.lastBit
		last := uint64(b[pt.slots&(bucketBytes-1)]) | binary.LittleEndian.Uint64(b[bit>>3&(bucketBytes-1):])>>(bit&7)&pt.hmask<<tagBits
		if last^pt.flip >= kp^pt.flip {
			return nil
		}
		// Not further than a displacement can say.
		if kp += 1 << (pt.rbits & 63); kp>>(pt.kbits&63) != 0 {
			return nil
		}
		off += bucketBytes
	}
}

// slotBytes[n] has the high bit of each of a tag word's first n bytes set
// (all eight from 8 on): the word's slots that hold entries when n of a
// bucket's entries are from its first on.
var slotBytes = func() (t [64]uint64) {
	for n := range t {
		t[n] = 0x8080808080808080 >> (8 * max(0, 8-n))
	}
	return t
}()

// field returns field i of an entry's fields.
func (s *numSection) field(w window, i int) uint64 {
	l := &s.layout
	p := l.pos[i]
	// The low word's bits from p, and the high word's when the field runs
	// on into it (spans is all ones then, else 0); masked counts, so that
	// no shift needs Go's check for a count of 64 or more.
	v := w.lo>>(p&63) | w.hi<<((64-p)&63)&l.spans[i]
	if p >= 64 {
		v = w.hi >> (p & 63)
	}
	if v &= l.masks[i]; v != 0 {
		v += l.adds[i]
	}
	return v
}

// fields decodes all of an entry's fields.
func (s *numSection) fields(w window, v *fieldValues) {
	for i := range s.layout.count {
		v[i] = s.field(w, i)
	}
}

// placement is where buildTable put one key.
type placement struct {
	bucket uint64
	slot   uint64
}

// planTable chooses the layout of one NPA's table for n keys whose
// permuted values are xs (ascending), with fields of payload bits, and
// places them: the fewest home buckets that keep the load at or under
// targetLoad, and the fewest displacement bits the placement needs.
func planTable(xs []uint64, payload uint) (part, []placement) {
	n := uint64(len(xs))
	place := make([]placement, n)
	dbits := uint(0)
	if n > maxSlots {
		dbits = 2
	}
	load := targetLoad
	for {
		pt, nb := part{}, uint64(1)
		for range 4 { // the entry width depends on nb, and nb on the width
			var ok bool
			if pt, ok = partLayout(nb, dbits, payload); !ok {
				panic("format: per-number record wider than a bucket") // fields are at most 121 bits
			}
			want := max(1, uint64(float64(n)/(float64(pt.slots)*load)+0.999999))
			if want == nb {
				break
			}
			nb = want
		}
		pt, _ = partLayout(nb, dbits, payload)
		pt.n = n
		maxDisp := placeKeys(xs, &pt, place)
		switch need := uint(bits.Len64(maxDisp)); {
		case need <= dbits:
			return pt, place
		case need <= maxDispBits:
			dbits = need
		default:
			// Keys so clustered that some sit further from home than a
			// displacement can say: fewer keys per bucket spread them.
			load /= 2
		}
	}
}

// targetLoad is the share of a table's home slots that hold keys. Above
// it, more keys overflow into the next bucket (a second cache line, though
// the adjacent one); below it, the file grows.
const targetLoad = 0.86

// placeKeys places keys with permuted values xs (ascending) into pt's
// buckets in order, each in its home bucket or the first after it with
// room, sets pt.nphys and returns the largest displacement.
func placeKeys(xs []uint64, pt *part, place []placement) uint64 {
	var b, used, maxDisp uint64
	for i, x := range xs {
		h := homeOf(x, pt.nb)
		if h > b {
			b, used = h, 0
		}
		if used == pt.slots {
			b, used = b+1, 0
		}
		place[i] = placement{bucket: b, slot: used}
		used++
		maxDisp = max(maxDisp, b-h)
	}
	pt.nphys = max(pt.nb, b+1)
	return maxDisp
}

// packTable writes the buckets of one NPA's table: keys' permuted values
// xs (ascending), their places, and each key's field values.
func packTable(pt *part, xs []uint64, place []placement, l *numLayout, values func(i int) fieldValues) []byte {
	out := make([]byte, pt.nphys*bucketBytes+bucketSlack)
	for i, x := range xs {
		p := place[i]
		h, f := fraction(x, pt.nb, pt.fshift)
		b := out[p.bucket*bucketBytes:]
		b[0]++
		if p.bucket > h {
			out[h*bucketBytes] |= overflowFlag
		}
		kp := pt.keyPart(f, p.bucket-h)
		b[1+p.slot] = byte(kp)
		bit := pt.entryBit(p.slot)
		putBits(b, bit, kp>>tagBits, pt.hbits)
		bit += pt.hbits
		v := values(i)
		for f := range l.count {
			putBits(b, bit+l.pos[f], l.store(f, v[f]), uint(l.widths[f]))
		}
	}
	return out[:pt.nphys*bucketBytes]
}

// putBits ORs the low width bits of v into b at bit pos (little-endian bit
// order: bit j is bit j%8 of byte j/8).
func putBits(b []byte, pos uint, v uint64, width uint) {
	for width > 0 {
		take := min(width, 8-pos%8)
		b[pos/8] |= byte(v&(1<<take-1)) << (pos % 8)
		v >>= take
		pos += take
		width -= take
	}
}

// touch loads a byte of an aimed probe's home bucket and one of the bucket
// after it, which starts both cache misses, and returns them for the
// caller's sink. A key displaced into the next bucket, or a miss whose home
// overflows, then costs no second wait in find (the section's slack makes
// the next line readable after any bucket). The second line is worth its
// bandwidth in a batch too: with only the home touched, the searches that
// go on to the next bucket each waited for a miss of their own, one after
// the other.
func touch(m []byte, q *probe) byte {
	return m[q.off] ^ m[q.off+bucketBytes]
}
