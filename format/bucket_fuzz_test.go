package format

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fuzzSection assembles a per-number section around fuzzed parts: the
// field widths and bases of its header (hdr, 56 bytes from offset 8),
// NPA 212's partition entry (pe, 24 bytes) and the buckets. The header's
// key count, bucket array offset and bucket count are set to agree with
// them, so that the fuzzer spends its time in the buckets.
func fuzzSection(hdr, pe, buckets []byte) []byte {
	area := uint64(numTableEnd+bucketBytes-1) / bucketBytes * bucketBytes
	nb := uint64(len(buckets)+bucketBytes-1) / bucketBytes
	sec := make([]byte, area+nb*bucketBytes+bucketSlack)
	copy(sec[8:64], hdr)
	p := sec[numHeaderSize+212*partEntrySize : numHeaderSize+213*partEntrySize]
	copy(p, pe)
	binary.LittleEndian.PutUint64(p, area)
	binary.LittleEndian.PutUint64(sec, uint64(binary.LittleEndian.Uint32(p[8:])))
	binary.LittleEndian.PutUint64(sec[16:], area)
	binary.LittleEndian.PutUint64(sec[24:], nb)
	copy(sec[area:], buckets)
	return sec
}

// FuzzNumSection reads fuzzed per-number sections — their checksum taken
// as good, as if the damage had been written with it — and looks numbers
// up in them, lists their entries and verifies them: errors are fine, a
// panic or a read outside the section is not.
// seedSection packs keys (remainders within NPA 212) with two fields, the
// second a time, into the parts fuzzSection assembles.
func seedSection(keys []uint64) (hdr, pe, buckets []byte) {
	xs := make([]uint64, len(keys))
	for i, k := range keys {
		xs[i] = permute(k - keyBase)
	}
	slices.Sort(xs)
	l, _ := newLayout([]uint{7, 30}, []uint64{0, 1600000000})
	pt, place := planTable(xs, l.payload)
	buckets = packTable(&pt, xs, place, &l, func(i int) fieldValues { return fieldValues{uint64(i % 128), 1700000000} })
	hdr = make([]byte, 56)
	hdr[0], hdr[1] = 7, 30
	binary.LittleEndian.PutUint32(hdr[28:], 1600000000) // field 1's base, at 36
	pe = make([]byte, partEntrySize)
	binary.LittleEndian.PutUint32(pe[8:], uint32(pt.n))
	binary.LittleEndian.PutUint32(pe[12:], uint32(pt.nb))
	binary.LittleEndian.PutUint32(pe[16:], uint32(pt.nphys))
	pe[20] = byte(pt.dbits)
	return hdr, pe, buckets
}

// loadFuzzSection loads the section fuzzSection assembles from the parts,
// as PORTED of a snapshot that holds nothing else.
func loadFuzzSection(hdr, pe, buckets []byte) (*snapshot, *numSection, *numSpec, error) {
	b := fuzzSection(hdr, pe, buckets)
	m := newRegion(b, nil, "")
	e := dirEntry{id: secPorted, encoding: encRaw, offset: 0, length: uint64(len(b))}
	s := &snapshot{m: m, b: b, dir: map[string]dirEntry{secPorted: e}}
	spec := &numSpec{id: secPorted, field: FieldPorted, fields: []fieldSpec{{name: "a"}, {name: "t", time: true}},
		check: func(*snapshot, *fieldValues) bool { return true }}
	var ns numSection
	return s, &ns, spec, loadNumSection(m, e, spec, &ns)
}

func FuzzNumSection(f *testing.F) {
	hdr, pe, buckets := seedSection([]uint64{2000001, 5550123, 5550124, 9999999})
	f.Add(hdr, pe, buckets, uint64(2125550123))
	full := slices.Clone(buckets)
	full[0] = 0xbf // a full bucket that says it overflows
	f.Add(hdr, pe, full, uint64(2129999999))
	f.Add(hdr, pe, buckets[:1], uint64(2122000001))
	f.Fuzz(func(t *testing.T, hdr, pe, buckets []byte, tn uint64) {
		if len(buckets) > 1<<16 {
			return
		}
		s, ns, spec, err := loadFuzzSection(hdr, pe, buckets)
		if err != nil {
			return
		}
		b := s.b
		for _, n := range []uint64{tn, tn + 1, 2125550123, 2122000001} {
			if inNANP(n) {
				var q probe
				ns.aim(n/10000000, n%10000000, &q)
				if ns.find(b, &q) == nil && q.hit {
					var v fieldValues
					ns.fields(q.w, &v)
				}
			}
		}
		if s.verifyNumSection(ns, spec) != nil {
			_ = s.eachRecord(ns, func(uint64, *fieldValues) {})
			return
		}
		// A table Verify passes answers for exactly the records it holds:
		// find, which searches a bucket by counting, agrees with the
		// entry-by-entry walk of eachRecord.
		held := map[uint64]fieldValues{}
		require.NoError(t, s.eachRecord(ns, func(tn uint64, v *fieldValues) { held[tn] = *v }))
		for _, n := range []uint64{tn, tn + 1, 2125550123, 2122000001} {
			if _, ok := held[n]; !ok && inNANP(n) {
				var q probe
				ns.aim(n/10000000, n%10000000, &q)
				require.NoError(t, ns.find(b, &q))
				require.False(t, q.hit, "%d is not in the table, find says it is", n)
			}
		}
		for n, want := range held {
			var q probe
			ns.aim(n/10000000, n%10000000, &q)
			require.NoError(t, ns.find(b, &q))
			require.True(t, q.hit, "%d is in the table, find misses it", n)
			var v fieldValues
			ns.fields(q.w, &v)
			require.Equal(t, want, v, "%d", n)
		}
	})
}

// TestVerifyRefusesMisplacedEntries damages a table in ways a checksum
// written with the damage would not catch, each of which would make a
// lookup miss a key or answer for the wrong one: Verify refuses them all.
func TestVerifyRefusesMisplacedEntries(t *testing.T) {
	keys := spacedKeys()
	hdr, pe, buckets := seedSection(keys)
	s, ns, spec, err := loadFuzzSection(hdr, pe, buckets)
	require.NoError(t, err)
	require.NoError(t, s.verifyNumSection(ns, spec), "the table as packed")
	flagged, open := -1, -1
	for i := 0; i < len(buckets); i += bucketBytes {
		if buckets[i]&overflowFlag != 0 && flagged < 0 {
			flagged = i
		}
		if buckets[i]&overflowFlag == 0 && buckets[i]&slotMask > 1 && open < 0 {
			open = i
		}
	}
	require.True(t, flagged >= 0 && open >= 0, "the table has an overflowing bucket and a plain one")
	damage := map[string]func(b []byte){
		"an overflow flag cleared":       func(b []byte) { b[flagged] &^= overflowFlag },
		"an overflow flag set":           func(b []byte) { b[open] |= overflowFlag },
		"an entry dropped":               func(b []byte) { b[open]-- },
		"two entries swapped":            func(b []byte) { swapKeys(b[open:], &ns.parts[212]) },
		"a count past the bucket's room": func(b []byte) { b[open] |= slotMask },
	}
	for name, d := range damage {
		bad := slices.Clone(buckets)
		d(bad)
		s, ns, spec, err := loadFuzzSection(hdr, pe, bad)
		if err == nil {
			err = s.verifyNumSection(ns, spec)
		}
		require.Error(t, err, name)
	}
}

// swapKeys swaps the key parts (tags and the bits in the entries) of a
// bucket's first two entries.
func swapKeys(b []byte, pt *part) {
	b[1], b[2] = b[2], b[1]
	p0, p1 := pt.entryBit(0), pt.entryBit(1)
	k0 := loadWindow((*[17]byte)(b[p0/8:]), p0%8).field(0, max(pt.hbits, 1))
	k1 := loadWindow((*[17]byte)(b[p1/8:]), p1%8).field(0, max(pt.hbits, 1))
	for _, pos := range []uint{p0, p1} {
		for j := range pt.hbits {
			if (k0^k1)>>j&1 != 0 {
				b[(pos+j)/8] ^= 1 << ((pos + j) % 8)
			}
		}
	}
}

// TestFindIgnoresBitsPastEntries: find reads each entry with loads that run
// on past it, into the rest of the bucket, the next bucket or the
// section's slack. Setting every bit there that is no entry's to one must
// not change a single answer: the masks, not zeros, end an entry.
func TestFindIgnoresBitsPastEntries(t *testing.T) {
	keys := spacedKeys()
	hdr, pe, buckets := seedSection(keys)
	s, ns, _, err := loadFuzzSection(hdr, pe, buckets)
	require.NoError(t, err)
	answers := func(s *snapshot) map[uint64]fieldValues {
		got := map[uint64]fieldValues{}
		for k := uint64(keyBase); k < 10000000; k += 331 { // keys and numbers between them
			for _, rem := range []uint64{k, keys[k%uint64(len(keys))]} {
				var q probe
				ns.aim(212, rem, &q)
				require.NoError(t, ns.find(s.b, &q))
				if q.hit {
					var v fieldValues
					ns.fields(q.w, &v)
					got[rem] = v
				}
			}
		}
		return got
	}
	want := answers(s)
	require.Len(t, want, len(keys), "every key found, no other number")

	// Ones in every bucket's unused tags and bits after its last entry,
	// and in the slack.
	pt := &ns.parts[212]
	area := ns.area
	filled := 0
	for i := uint64(0); i < ns.buckets; i++ {
		b := s.b[area+i*bucketBytes : area+(i+1)*bucketBytes]
		cnt := uint64(b[0] & slotMask)
		for j := 1 + cnt; j < 1+pt.slots; j++ {
			b[j] = 0xff
			filled++
		}
		for bit := pt.entryBit(cnt); bit < bucketBytes*8; bit++ {
			b[bit/8] |= 1 << (bit % 8)
			filled++
		}
	}
	for i := area + ns.buckets*bucketBytes; i < uint64(len(s.b)); i++ {
		s.b[i] = 0xff
	}
	require.Positive(t, filled, "some bucket has bits past its entries")
	assert.Equal(t, want, answers(s))
}

// spacedKeys is 3,000 line numbers 997 apart: enough for one NPA's table
// to have overflowing buckets and plain ones.
func spacedKeys() []uint64 {
	var keys []uint64
	for k := uint64(keyBase); len(keys) < 3000; k += 997 {
		keys = append(keys, k)
	}
	return keys
}
