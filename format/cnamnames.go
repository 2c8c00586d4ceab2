package format

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"
)

// The CNAMNAME section holds the distinct caller names, cold data that
// compresses well, as independent zstd frames of namesPerChunk names each:
//
//	u64 names, u64 names per chunk K, u64 chunks C,
//	(C+1) × u64 frame offsets relative to the first frame, then the frames.
//
// A frame decompresses to K names (fewer in the last), each a length byte
// and that many bytes. Reading a name decompresses its frame (a few
// microseconds) unless the frame is in the heap's cache of decoded frames.
const namesPerChunk = 128

// nameCacheSlots is the number of decoded frames a table keeps, each in
// the slot of its chunk number modulo the count: up to 256 × 128 names
// (a few hundred KB), so that the names a server answers again and again
// are read without decompressing. A frame replaced in its slot stays
// alive as long as a name read from it does.
const nameCacheSlots = 256

type nameHeap struct {
	names, perChunk, chunks uint64
	offsets                 int64 // absolute offset of the frame offset table
	data                    int64 // absolute offset of the first frame
	dataLen                 uint64
	// cache holds decoded frames; the snapshots of one mapping share it.
	// A slot is replaced whole (an atomic pointer to an immutable frame),
	// so readers need no lock.
	cache *[nameCacheSlots]atomic.Pointer[nameFrame]
}

// nameFrame is chunk's frame decompressed: its names, each a length byte
// and that many bytes, as a string that is never modified, so that a name
// is a substring of it.
type nameFrame struct {
	chunk uint64
	names string
}

func loadNameHeap(m *region, e dirEntry, h *nameHeap) error {
	if e.encoding != encRaw || e.length < 32 {
		return corrupt(e.id, "bad encoding or size")
	}
	var b [24]byte
	if _, err := m.ReadAt(b[:], int64(e.offset)); err != nil {
		return corrupt(e.id, "%v", err)
	}
	h.names = binary.LittleEndian.Uint64(b[0:])
	h.perChunk = binary.LittleEndian.Uint64(b[8:])
	h.chunks = binary.LittleEndian.Uint64(b[16:])
	if h.perChunk == 0 || h.perChunk > 1<<16 || h.chunks != (h.names+h.perChunk-1)/h.perChunk {
		return corrupt(e.id, "%d names in %d chunks of %d", h.names, h.chunks, h.perChunk)
	}
	tableLen := (h.chunks + 1) * 8
	if tableLen > e.length-24 {
		return corrupt(e.id, "frame table runs past the section")
	}
	h.offsets = int64(e.offset) + 24
	h.data = h.offsets + int64(tableLen)
	h.dataLen = e.length - 24 - tableLen
	h.cache = new([nameCacheSlots]atomic.Pointer[nameFrame])
	return nil
}

// name returns caller name i, a substring of its decoded frame (cached).
func (h *nameHeap) name(m *region, i uint64) (string, error) {
	if i >= h.names {
		return "", errCorruptRecord
	}
	c := i / h.perChunk
	slot := &h.cache[c%nameCacheSlots]
	f := slot.Load()
	if f == nil || f.chunk != c {
		raw, err := h.frame(m, c)
		if err != nil {
			return "", err
		}
		// raw is this call's own, and nothing writes it again.
		f = &nameFrame{chunk: c, names: unsafe.String(unsafe.SliceData(raw), len(raw))}
		slot.Store(f)
	}
	raw := f.names
	for k := i % h.perChunk; ; k-- {
		if len(raw) == 0 || int(raw[0]) >= len(raw) {
			return "", errCorruptRecord
		}
		n := int(raw[0])
		if k == 0 {
			return raw[1 : 1+n], nil
		}
		raw = raw[1+n:]
	}
}

// frame returns chunk c decompressed, into a new buffer of its own.
func (h *nameHeap) frame(m *region, c uint64) ([]byte, error) {
	var ob [16]byte
	if _, err := m.ReadAt(ob[:], h.offsets+int64(c)*8); err != nil {
		return nil, errCorruptRecord
	}
	start, end := binary.LittleEndian.Uint64(ob[0:]), binary.LittleEndian.Uint64(ob[8:])
	if start > end || end > h.dataLen || end-start > 1<<20 {
		return nil, errCorruptRecord
	}
	// Decoded from the mapping in place: the caller holds its reference.
	b := m.Bytes()
	at := uint64(h.data)
	if at+end > uint64(len(b)) {
		return nil, errCorruptRecord
	}
	raw, err := decompress(b[at+start : at+end])
	if err != nil {
		return nil, errCorruptRecord
	}
	return raw, nil
}

// countNames returns how many well-formed names a decompressed frame holds.
func countNames(raw []byte) (int, bool) {
	n := 0
	for len(raw) > 0 {
		l := int(raw[0])
		if l == 0 || l >= len(raw) {
			return n, false
		}
		raw = raw[1+l:]
		n++
	}
	return n, true
}

func encodeNameChunks(names []string) (header []byte, frames [][]byte) {
	chunks := (len(names) + namesPerChunk - 1) / namesPerChunk
	header = make([]byte, 24, 24+(chunks+1)*8)
	binary.LittleEndian.PutUint64(header[0:], uint64(len(names)))
	binary.LittleEndian.PutUint64(header[8:], namesPerChunk)
	binary.LittleEndian.PutUint64(header[16:], uint64(chunks))
	var off uint64
	header = binary.LittleEndian.AppendUint64(header, 0)
	var raw []byte
	for c := range chunks {
		raw = raw[:0]
		for _, n := range names[c*namesPerChunk : min(len(names), (c+1)*namesPerChunk)] {
			raw = append(raw, byte(len(n)))
			raw = append(raw, n...)
		}
		f := compress(raw)
		frames = append(frames, f)
		off += uint64(len(f))
		header = binary.LittleEndian.AppendUint64(header, off)
	}
	return header, frames
}
