package format

import (
	"encoding/binary"
	"slices"
	"testing"
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
func FuzzNumSection(f *testing.F) {
	keys := []uint64{2000001, 5550123, 5550124, 9999999}
	xs := make([]uint64, len(keys))
	for i, k := range keys {
		xs[i] = permute(k - keyBase)
	}
	slices.Sort(xs)
	l, _ := newLayout([]uint{7, 30}, []uint64{0, 1600000000})
	pt, place := planTable(xs, l.payload)
	buckets := packTable(&pt, xs, place, &l, func(i int) fieldValues { return fieldValues{uint64(i), 1700000000} })
	hdr := make([]byte, 56)
	hdr[0], hdr[1] = 7, 30
	binary.LittleEndian.PutUint32(hdr[28:], 1600000000) // field 1's base, at 36
	pe := make([]byte, partEntrySize)
	binary.LittleEndian.PutUint32(pe[8:], uint32(pt.n))
	binary.LittleEndian.PutUint32(pe[12:], uint32(pt.nb))
	binary.LittleEndian.PutUint32(pe[16:], uint32(pt.nphys))
	pe[20] = byte(pt.dbits)
	f.Add(hdr, pe, buckets, uint64(2125550123))
	full := slices.Clone(buckets)
	full[0] = 0xbf // a full bucket that says it overflows
	f.Add(hdr, pe, full, uint64(2129999999))
	f.Add(hdr, pe, buckets[:1], uint64(2122000001))
	f.Fuzz(func(t *testing.T, hdr, pe, buckets []byte, tn uint64) {
		if len(buckets) > 1<<16 {
			return
		}
		b := fuzzSection(hdr, pe, buckets)
		m := newRegion(b, nil, "")
		e := dirEntry{id: secPorted, encoding: encRaw, offset: 0, length: uint64(len(b))}
		s := &snapshot{m: m, b: b, dir: map[string]dirEntry{secPorted: e}}
		spec := &numSpec{id: secPorted, field: FieldPorted, fields: []fieldSpec{{name: "a"}, {name: "t", time: true}},
			check: func(*snapshot, *fieldValues) bool { return true }}
		var ns numSection
		if loadNumSection(m, e, spec, &ns) != nil {
			return
		}
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
		_ = s.verifyNumSection(&ns, spec)
		_ = s.eachRecord(&ns, func(uint64, *fieldValues) {})
	})
}
