package format

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/lnpdb/lnpdb/internal/core/nanp"
)

// Dictionaries are small lists of strings and numbers that records refer to
// by index. On disk each is a sequence of uvarint-length-prefixed strings (and
// uvarints for numbers), zstd-compressed; Open decodes them into Go values
// once, so a lookup returns their strings without allocating.

type enc struct{ b []byte }

func (e *enc) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) str(s string)     { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

var errShort = errors.New("truncated")

type dec struct {
	b   []byte
	err error
}

func (d *dec) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) str() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.err = errShort
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *dec) bool() bool {
	if d.err != nil {
		return false
	}
	if len(d.b) == 0 {
		d.err = errShort
		return false
	}
	v := d.b[0]
	d.b = d.b[1:]
	if v > 1 {
		d.err = errors.New("bad boolean")
	}
	return v == 1
}

// count reads a list length and checks it against what the remaining bytes
// could possibly hold (each element takes at least min bytes), so that a
// corrupt length cannot make the decoder allocate gigabytes.
func (d *dec) count(min int) int {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.b)/min) {
		d.err = errors.New("list length exceeds section size")
		return 0
	}
	return int(n)
}

// maxDecoded caps what a compressed section may expand to; dictionaries are
// small, and the cap keeps a corrupt or hostile file from exhausting memory.
const maxDecoded = 1 << 30

var (
	zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression))
		if err != nil {
			panic(err) // only bad options fail
		}
		return e
	})
	zstdDecoder = sync.OnceValue(func() *zstd.Decoder {
		d, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxDecoded), zstd.WithDecoderConcurrency(0))
		if err != nil {
			panic(err)
		}
		return d
	})
)

func compress(b []byte) []byte { return zstdEncoder().EncodeAll(b, nil) }

func decompress(b []byte) ([]byte, error) { return zstdDecoder().DecodeAll(b, nil) }

// encodeList writes a uvarint count and then each element as put writes it.
func encodeList[T any](xs []T, put func(*enc, T)) []byte {
	var e enc
	e.uvarint(uint64(len(xs)))
	for _, x := range xs {
		put(&e, x)
	}
	return e.b
}

// decodeList reads what encodeList wrote: a count of elements of at least
// least bytes each, and each element as get reads it.
func decodeList[T any](b []byte, least int, get func(*dec) T) ([]T, error) {
	d := dec{b: b}
	out := make([]T, d.count(least))
	for i := range out {
		out[i] = get(&d)
	}
	return out, d.end()
}

func encodeCarriers(cs []Carrier) []byte {
	return encodeList(cs, func(e *enc, c Carrier) {
		e.str(c.OCN)
		e.str(c.Name)
		e.str(c.Type)
		e.str(c.MessagingProvider)
		e.bool(c.MessagingEnabled)
	})
}

func decodeCarriers(b []byte) ([]Carrier, error) {
	return decodeList(b, 5, func(d *dec) Carrier {
		return Carrier{OCN: d.str(), Name: d.str(), Type: d.str(), MessagingProvider: d.str(), MessagingEnabled: d.bool()}
	})
}

func encodeRateCenters(rs []RateCenter) []byte {
	return encodeList(rs, func(e *enc, r RateCenter) {
		for _, s := range [...]string{r.State, r.Name, r.LATA, r.City, r.County, r.ZIP, r.TimeZone, r.UTCOffset} {
			e.str(s)
		}
	})
}

func decodeRateCenters(b []byte) ([]RateCenter, error) {
	return decodeList(b, 8, func(d *dec) RateCenter {
		return RateCenter{State: d.str(), Name: d.str(), LATA: d.str(), City: d.str(), County: d.str(), ZIP: d.str(), TimeZone: d.str(), UTCOffset: d.str()}
	})
}

func encodeStrings(ss []string) []byte { return encodeList(ss, (*enc).str) }

func decodeStrings(b []byte) ([]string, error) { return decodeList(b, 1, (*dec).str) }

// encodePairs stores each (LRN, SPID, SV Type) route as the LRN's index in
// the sorted LRN dictionary, the carrier's index and the SV Type.
func encodePairs(ps []lrnPair, lrnRemap []uint32) []byte {
	var e enc
	e.uvarint(uint64(len(ps)))
	for _, p := range ps {
		e.uvarint(uint64(lrnRemap[p.lrn]))
		e.uvarint(uint64(p.carrier))
		e.uvarint(uint64(p.sv))
	}
	return e.b
}

func decodePairs(b []byte, lrns, carriers int) ([]lrnPair, error) {
	d := dec{b: b}
	out := make([]lrnPair, d.count(3))
	for i := range out {
		l, c, sv := d.uvarint(), d.uvarint(), d.uvarint()
		if d.err == nil && (l >= uint64(lrns) || c >= uint64(carriers)) {
			return nil, errors.New("pair points outside the LRN or carrier dictionary")
		}
		if d.err == nil && sv > uint64(MaxSVType) {
			return nil, fmt.Errorf("pair has SV Type %d, past %d", sv, MaxSVType)
		}
		out[i] = lrnPair{uint32(l), uint32(c), SVType(sv)}
	}
	return out, d.end()
}

func encodeMsgTuples(ts []msgTuple) []byte {
	var e enc
	e.uvarint(uint64(len(ts)))
	for _, t := range ts {
		e.uvarint(uint64(t.provider))
		e.bool(t.enabled)
		e.uvarint(uint64(t.country))
		e.uvarint(uint64(t.code))
		e.uvarint(uint64(t.ref))
	}
	return e.b
}

func decodeMsgTuples(b []byte, strs int) ([]msgTuple, error) {
	d := dec{b: b}
	out := make([]msgTuple, d.count(5))
	for i := range out {
		t := msgTuple{provider: uint32(d.uvarint()), enabled: d.bool(), country: uint32(d.uvarint()), code: uint32(d.uvarint()), ref: uint32(d.uvarint())}
		if d.err == nil && max(t.provider, t.country, t.code, t.ref) >= uint32(strs) {
			return nil, errors.New("tuple points outside the string dictionary")
		}
		out[i] = t
	}
	return out, d.end()
}

// encodeLRNs stores sorted 10-digit LRNs as deltas.
func encodeLRNs(lrns []uint64) []byte {
	var e enc
	e.uvarint(uint64(len(lrns)))
	var prev uint64
	for _, v := range lrns {
		e.uvarint(v - prev)
		prev = v
	}
	return e.b
}

// decodeLRNs returns the LRNs as 11-digit canonical strings, the form every
// answer carries.
func decodeLRNs(b []byte) ([]uint64, []string, error) {
	d := dec{b: b}
	n := d.count(1)
	nums := make([]uint64, n)
	strs := make([]string, n)
	var v uint64
	for i := range nums {
		delta := d.uvarint()
		if d.err != nil {
			break
		}
		if i > 0 && delta == 0 {
			return nil, nil, errors.New("LRNs not strictly increasing")
		}
		v += delta
		if v < 2000000000 || v > 9999999999 {
			return nil, nil, errors.New("LRN out of range")
		}
		nums[i] = v
		strs[i] = nanp.Number(v).String()
	}
	return nums, strs, d.end()
}

func (d *dec) end() error {
	if d.err != nil {
		return d.err
	}
	if len(d.b) != 0 {
		return errors.New("trailing bytes")
	}
	return nil
}
