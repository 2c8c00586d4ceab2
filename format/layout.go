package format

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/cespare/xxhash/v2"
)

// Byte layout constants; the package documentation describes them in prose.
const (
	magic        = "LNPDB\r\n\x1a"
	version      = 5 // 2: keys stored less keyBase, in 23 bits; 3: bucketed per-number sections; 4: SV Type in PAIRS; 5: a bucket's tag array, the key's place from x·B
	headerSize   = 64
	dirEntrySize = 40
	maxSections  = 64
	keyBase      = 2000000 // NXX is 200-999, so NXX*10000+line >= keyBase
	partitions   = 1000

	encRaw  = 0
	encZstd = 1
)

// Version is the file format version this package writes, and the only one
// it reads (Info.Version of an open table).
const Version = version

// Section ids: eight ASCII bytes, NUL-padded.
const (
	secMeta        = "META"
	secCarriers    = "CARRIERS"
	secRateCenters = "RATECTRS"
	secLRNs        = "LRNS"
	secMsgStrings  = "MSGSTRS"
	secPairs       = "PAIRS"
	secMsgTuples   = "MSGTUPLE"
	secBlocks      = "BLOCKS"
	secPorted      = "PORTED"
	secMessaging   = "MSGRECS"
	secCNAM        = "CNAM"
	secCNAMNames   = "CNAMNAME"
	secTrust       = "TRUST"
)

// sectionOrder is the order sections are written in; every one is present in
// every file (possibly empty), so a reader can rely on all of them.
var sectionOrder = []string{
	secMeta, secCarriers, secRateCenters, secLRNs, secMsgStrings,
	secPairs, secMsgTuples, secBlocks, secPorted, secMessaging, secCNAM, secTrust, secCNAMNames,
}

type header struct {
	sections uint32
	fileSize uint64
	builtAt  int64
}

func (h header) encode() []byte {
	b := make([]byte, headerSize)
	copy(b, magic)
	binary.LittleEndian.PutUint16(b[8:], version)
	binary.LittleEndian.PutUint16(b[10:], 0)
	binary.LittleEndian.PutUint32(b[12:], h.sections)
	binary.LittleEndian.PutUint64(b[16:], headerSize)
	binary.LittleEndian.PutUint64(b[24:], h.fileSize)
	binary.LittleEndian.PutUint64(b[32:], uint64(h.builtAt))
	binary.LittleEndian.PutUint64(b[56:], xxhash.Sum64(b[:56]))
	return b
}

func decodeHeader(b []byte, size int64) (header, error) {
	var h header
	if len(b) < headerSize {
		return h, corrupt("header", "file is %d bytes, shorter than the %d-byte header", len(b), headerSize)
	}
	if string(b[:8]) != magic {
		return h, fmt.Errorf("%w: not an lnpdb table (bad magic %q)", ErrFormat, b[:8])
	}
	if v := binary.LittleEndian.Uint16(b[8:]); v != version {
		if v < version {
			return h, fmt.Errorf("%w: file format version %d, this reader knows version %d: rebuild the table from its source (lnpdb build)", ErrFormat, v, version)
		}
		return h, fmt.Errorf("%w: file format version %d, this reader knows version %d", ErrFormat, v, version)
	}
	if got, want := xxhash.Sum64(b[:56]), binary.LittleEndian.Uint64(b[56:]); got != want {
		return h, corrupt("header", "checksum mismatch (stored %016x, computed %016x)", want, got)
	}
	if f := binary.LittleEndian.Uint16(b[10:]); f != 0 {
		return h, corrupt("header", "unknown flags %#x", f)
	}
	h.sections = binary.LittleEndian.Uint32(b[12:])
	if d := binary.LittleEndian.Uint64(b[16:]); d != headerSize {
		return h, corrupt("header", "directory offset %d, want %d", d, headerSize)
	}
	h.fileSize = binary.LittleEndian.Uint64(b[24:])
	h.builtAt = int64(binary.LittleEndian.Uint64(b[32:]))
	if h.fileSize != uint64(size) {
		return h, corrupt("header", "file is %d bytes but the header says %d (truncated or extended)", size, h.fileSize)
	}
	if h.sections == 0 || h.sections > maxSections {
		return h, corrupt("header", "section count %d out of range", h.sections)
	}
	return h, nil
}

// readHead reads and checks the header and the section directory of a table
// of size bytes from r, and returns them decoded and as stored.
func readHead(r io.ReaderAt, size int64) (header, map[string]dirEntry, []byte, error) {
	b := make([]byte, min(size, headerSize))
	if _, err := r.ReadAt(b, 0); err != nil {
		return header{}, nil, nil, err
	}
	h, err := decodeHeader(b, size)
	if err != nil {
		return h, nil, nil, err
	}
	ds := dirSize(int(h.sections))
	if int64(headerSize+ds) > size {
		return h, nil, nil, corrupt("directory", "runs past the end of the file")
	}
	b = append(b, make([]byte, ds)...)
	if _, err := r.ReadAt(b[headerSize:], headerSize); err != nil {
		return h, nil, nil, err
	}
	dir, err := decodeDir(b[headerSize:], int(h.sections), h.fileSize)
	if err != nil {
		return h, nil, nil, err
	}
	return h, dir, b, nil
}

func headID(head []byte) string { return fmt.Sprintf("%016x", xxhash.Sum64(head)) }

// FileID returns the identity of the table file of size bytes read from r:
// the xxhash64 of its header and section directory, as 16 hex digits. The
// directory holds every section's checksum, so files with one ID hold the
// same bytes; it reads only those (64 + 40 per section + 8) bytes, and a
// file that does not start as a table of that size, or whose header or
// directory does not check, is an error. An open table's Info.ID is the
// FileID of the file it maps; lnpdb serve sends it as the ETag of
// GET /admin/v1/table and shows it in its status.
func FileID(r io.ReaderAt, size int64) (string, error) {
	_, _, head, err := readHead(r, size)
	if err != nil {
		return "", err
	}
	return headID(head), nil
}

// dirEntry locates one section.
type dirEntry struct {
	id       string
	encoding uint32
	offset   uint64
	length   uint64
	checksum uint64
}

func dirSize(n int) int { return n*dirEntrySize + 8 }

func encodeDir(entries []dirEntry) []byte {
	b := make([]byte, dirSize(len(entries)))
	for i, e := range entries {
		p := b[i*dirEntrySize:]
		copy(p[:8], e.id)
		binary.LittleEndian.PutUint32(p[8:], e.encoding)
		binary.LittleEndian.PutUint64(p[16:], e.offset)
		binary.LittleEndian.PutUint64(p[24:], e.length)
		binary.LittleEndian.PutUint64(p[32:], e.checksum)
	}
	n := len(entries) * dirEntrySize
	binary.LittleEndian.PutUint64(b[n:], xxhash.Sum64(b[:n]))
	return b
}

func decodeDir(b []byte, n int, fileSize uint64) (map[string]dirEntry, error) {
	if len(b) < dirSize(n) {
		return nil, corrupt("directory", "truncated")
	}
	body := b[:n*dirEntrySize]
	if got, want := xxhash.Sum64(body), binary.LittleEndian.Uint64(b[len(body):]); got != want {
		return nil, corrupt("directory", "checksum mismatch (stored %016x, computed %016x)", want, got)
	}
	out := make(map[string]dirEntry, n)
	end := uint64(headerSize + dirSize(n))
	for i := range n {
		p := body[i*dirEntrySize:]
		id := string(trimNUL(p[:8]))
		e := dirEntry{
			id:       id,
			encoding: binary.LittleEndian.Uint32(p[8:]),
			offset:   binary.LittleEndian.Uint64(p[16:]),
			length:   binary.LittleEndian.Uint64(p[24:]),
			checksum: binary.LittleEndian.Uint64(p[32:]),
		}
		if e.encoding != encRaw && e.encoding != encZstd {
			return nil, corrupt(id, "unknown encoding %d", e.encoding)
		}
		if e.offset < end || e.offset > fileSize || e.length > fileSize-e.offset {
			return nil, corrupt(id, "extent [%d, +%d) outside the file's %d bytes", e.offset, e.length, fileSize)
		}
		if _, dup := out[id]; dup {
			return nil, corrupt(id, "section listed twice")
		}
		out[id] = e
	}
	for _, id := range sectionOrder {
		if _, ok := out[id]; !ok {
			return nil, corrupt(id, "required section missing")
		}
	}
	return out, nil
}

func trimNUL(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}
