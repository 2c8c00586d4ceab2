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
// [0, 2^23) picks the home bucket, and the entry stores only the offset of
// the permuted value within the home bucket's share of that range (the
// quotient is the bucket's index, so it is not stored). Every key bit is
// kept, so answers are exact: a number that is not in the section matches
// no entry. Entries are placed in ascending permuted order; an entry that
// does not fit in its home bucket goes to the next bucket with room and
// records how far it went, and its home bucket's overflow flag sends a
// lookup on.

const (
	bucketBytes = 64
	// bucketHeaderBits is the header byte: bits 0-5 the number of entries,
	// bit 7 set when entries whose home this is continue in later buckets.
	bucketHeaderBits = 8
	bucketBits       = bucketBytes*8 - bucketHeaderBits // bits for entries
	maxSlots         = 63                               // what 6 bits count
	overflowFlag     = 0x80
	slotMask         = 0x3f
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

// bucketStart is the first permuted value whose home is bucket h of nb.
func bucketStart(h, nb uint64) uint64 { return (h<<permBits + nb - 1) / nb }

// homeOf is the home bucket of permuted value x in a table of nb buckets.
func homeOf(x, nb uint64) uint64 { return x * nb >> permBits }

// remBits is how many bits an entry needs for its key's offset within
// its home bucket's share of [0, 2^23).
func remBits(nb uint64) uint {
	span := (1<<permBits + nb - 1) / nb
	return widthFor(int(span))
}

// part is one NPA's table, with its entry layout.
type part struct {
	n     uint64 // keys
	nb    uint64 // home buckets
	nphys uint64 // buckets, home buckets and the overflow past them
	base  int64  // absolute offset of bucket 0
	rbits uint   // key offset bits
	dbits uint   // displacement bits
	width uint   // entry bits: key offset, displacement, fields
	slots uint64 // entries a bucket holds
	// What find compares, worked out once: the key part's bits (offset
	// and displacement) and its mask, and the displacement bits, which
	// find inverts so that a bucket's key parts ascend.
	kbits uint
	kmask uint64
	flip  uint64
}

// partLayout computes the entry layout of a table of nb home buckets with
// dbits of displacement, for fields of payload bits; ok is false when an
// entry does not fit in a bucket.
func partLayout(nb uint64, dbits, payload uint) (p part, ok bool) {
	p.nb, p.dbits = nb, dbits
	p.rbits = remBits(nb)
	p.width = p.rbits + dbits + payload
	if p.width == 0 || p.width > bucketBits {
		return p, false
	}
	p.slots = min(maxSlots, uint64(bucketBits/p.width))
	p.kbits = p.rbits + dbits
	p.kmask = 1<<p.kbits - 1
	p.flip = (1<<dbits - 1) << p.rbits
	return p, true
}

// keyPart is what an entry stores of a key (its offset within its home
// bucket's range) and how far from home it sits.
func (pt *part) keyPart(rem, disp uint64) uint64 { return rem | disp<<pt.rbits }

// entryBit is the bit at which slot i's entry starts within its bucket.
func (pt *part) entryBit(i uint64) uint { return bucketHeaderBits + uint(i)*pt.width }

// probe is one number's lookup in a per-number section, in stages so that
// a caller can start the memory accesses of several sections (or several
// numbers) before it waits for any of them: aim computes the bucket, touch
// loads its first byte (starting the cache miss), find reads the entry.
type probe struct {
	pt  *part // nil: the number cannot be in the section
	off int64 // the home bucket's offset
	x   uint64
	h   uint64 // home bucket
	hit bool   // a batch's find found the number; its fields are w
	w   window // the entry's fields, from their first bit
}

// aim computes npa-rem's home bucket; q.pt is nil when the NPA holds no
// keys (or the remainder is no valid line).
func (s *numSection) aim(npa, rem uint64, q *probe) {
	pt := &s.parts[npa]
	if pt.n == 0 || rem < keyBase || rem >= 10000000 {
		q.pt = nil
		return
	}
	q.pt = pt
	q.x = permute(rem - keyBase)
	q.h = homeOf(q.x, pt.nb)
	q.off = pt.base + int64(q.h)*bucketBytes
}

// find looks an aimed probe's key up in its home bucket and, when the
// bucket says so, the buckets after it; it sets q.hit, and q.w to the
// entry's fields.
//
// A bucket's entries are in ascending permuted order: those of earlier
// homes (a larger displacement) first, then the home's own by offset, then
// later homes'. With the displacement bits inverted (flip), an entry's key
// part orders them exactly so, and the scan is one comparison an entry: a
// smaller value is an earlier home's key or a smaller key of this home
// (go on), an equal one is the key, a larger one means it is not stored.
func (s *numSection) find(m []byte, q *probe) error {
	q.hit = false
	pt := q.pt
	if pt == nil {
		return nil
	}
	width, kmask, flip := pt.width, pt.kmask, pt.flip
	rem := q.x - bucketStart(q.h, pt.nb)
	off := q.off
	end := pt.base + int64(pt.nphys)*bucketBytes
	for disp := uint64(0); ; disp++ {
		// The bucket and the line after it (the next bucket, or the
		// section's slack): each entry is read with an unaligned load at
		// its first byte, which is inside the bucket (slots*width fits in
		// its bits, so the mask of the byte offset changes nothing and
		// only spares a bounds check), and no 8-byte key load or 17-byte
		// fields window reaches past the second line. Bits beyond an
		// entry are the next entry's or bucket's; the masks drop them.
		b := m[off : off+2*bucketBytes : off+2*bucketBytes]
		hdr := b[0]
		cnt := uint(hdr & slotMask)
		if uint64(cnt) > pt.slots {
			return errCorruptRecord
		}
		want := pt.keyPart(rem, disp) ^ flip
		stop := bucketHeaderBits + cnt*width
		for bit := uint(bucketHeaderBits); bit < stop; bit += width {
			v := binary.LittleEndian.Uint64(b[bit>>3&(bucketBytes-1):])>>(bit&7)&kmask ^ flip
			if v < want {
				continue // an earlier home's key, or a smaller key of this home
			}
			if v == want {
				bit += pt.kbits
				q.w = loadWindow((*[17]byte)(b[bit>>3&(bucketBytes-1):]), bit&7)
				q.hit = true
			}
			return nil // the key, or a larger one: it is not stored
		}
		if disp == 0 && hdr&overflowFlag == 0 || uint64(cnt) < pt.slots {
			return nil
		}
		// Past the last bucket, or further than a displacement can say,
		// no entry is the key's.
		off += bucketBytes
		if off >= end || disp+1 >= 1<<pt.dbits {
			return nil
		}
	}
}

// field returns field i of an entry's fields.
func (s *numSection) field(w window, i int) uint64 {
	v := w.field(s.layout.pos[i], uint(s.layout.widths[i]))
	if b := s.layout.bases[i]; b != 0 && v != 0 {
		return b + v - 1
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
		h := homeOf(x, pt.nb)
		b := out[p.bucket*bucketBytes:]
		b[0]++
		if p.bucket > h {
			out[h*bucketBytes] |= overflowFlag
		}
		bit := pt.entryBit(p.slot)
		putBits(b, bit, pt.keyPart(x-bucketStart(h, pt.nb), p.bucket-h), pt.rbits+pt.dbits)
		bit += pt.rbits + pt.dbits
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
	if q.pt == nil {
		return 0
	}
	return m[q.off] ^ m[q.off+bucketBytes]
}
