// Package journal is the table journal's file format: the codec of its
// records, the appender that makes a batch durable, the reader that replays
// it, and the rewrite and salvage that compaction and recovery use. It knows
// nothing of tables; the format package gives the updates their meaning.
//
// Layout: a 16-byte header ("LNPDBJ3\n", then 8 zero bytes), then records.
// Every record starts with the xxhash64 of the rest of it and a kind byte.
//
// An update record, 56 bytes:
//
//	[0,8)   xxhash64 of bytes [8,56)
//	[8]     action: 'A' add, 'U' update, 'D' delete
//	[9,13)  SPID (4 ASCII bytes; zero for a delete)
//	[13,16) its index in its batch, from 0 (24 bits: a batch holds at most
//	        MaxBatch updates)
//	[16,24) sequence number (above the previous update's)
//	[24,32) TN, 10-digit national number
//	[32,40) LRN, 10-digit national number (0 for a delete)
//	[40,48) activation time, unix seconds (signed; 0 unknown)
//	[48]    SV Type as the table stores it (0 none; 0 for a delete)
//	[49,56) zero
//
// (Version 2, "LNPDBJ2\n", had 48-byte update records without the SV
// Type; such a journal is refused with ErrVersion.)
// A commit record, 104 bytes, closes a batch: the updates right before it,
// back to the previous commit record.
//
//	[0,8)   xxhash64 of bytes [8,104)
//	[8]     'C'
//	[9,12)  zero
//	[12,16) count of updates in the batch (may be 0: see below)
//	[16,24) sequence number of the batch's last update (of the last update
//	        before it when the batch is empty)
//	[24,32) xxhash64 of the batch's update records, in order
//	[32,40) commit time, unix nanoseconds
//	[40,48) numbers pending in the overlay after the batch (what the
//	        client was told)
//	[48,80) SHA-256 of the batch's idempotency key; zero for none
//	[80,88) xxhash64 of the batch's updates without their sequence numbers
//	        and indexes: what a retry of the same request has in common
//	[88,92) adds, [92,96) modifies, [96,100) deletes in the batch
//	[100,104) zero
//
// A batch is durable and visible only once its commit record is written and
// fsync'd; replay applies committed batches only. An empty batch carries an
// idempotency key forward when the journal is rewritten.
//
// A crash while appending leaves an incomplete last batch: replay drops it.
// Any other damage is corruption, reported with its offset: a bad record
// followed by a valid commit record or by the first update of another batch
// (an append starts only after the one before it was committed), or a bad
// record that is whole and overlaps no sector of zeros (a crash leaves a
// prefix of what was being written, or after a power loss unwritten sectors
// of zeros). Salvage then recovers every batch that still verifies. (Not
// told apart from a torn append: a damaged last commit record followed only
// by the cut-off start of the next batch's first record. Reported as damage
// although no acknowledged batch is lost: a power loss that wrote an
// unacknowledged batch's commit record but not a sector before it; recovery
// keeps every batch that verifies.)
package journal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cespare/xxhash/v2"
)

// Sizes of the journal's parts.
const (
	Magic      = "LNPDBJ3\n"
	HeaderSize = 16
	UpdateSize = 56
	CommitSize = 104
)

const kindCommit = 'C'

// MaxBatch is the most updates one batch may hold.
const MaxBatch = 1<<24 - 1

// Update is one update record.
type Update struct {
	Index       uint32 // in its batch; set by AppendBatch
	Seq         uint64
	Action      byte // 'A', 'U' or 'D'
	SPID        [4]byte
	TN          uint64
	LRN         uint64
	ActivatedAt int64
	SVType      uint8
}

// Commit is a commit record.
type Commit struct {
	Count   uint32
	Seq     uint64 // of the batch's last update
	Sum     uint64 // xxhash64 of the batch's update records
	Time    int64  // unix nanoseconds
	Pending uint64
	Key     [32]byte // SHA-256 of the idempotency key, or zero

	// What the batch held, kept when an empty batch carries its key
	// forward: the fingerprint of its updates, and its counts by action.
	Fingerprint              uint64
	Added, Modified, Deleted uint32
}

// Batch is a committed batch.
type Batch struct {
	Updates []Update
	Commit  Commit
	Offset  int64 // of its first record
}

// Header returns a journal's header.
func Header() []byte {
	h := make([]byte, HeaderSize)
	copy(h, Magic)
	return h
}

func isAction(b byte) bool { return b == 'A' || b == 'U' || b == 'D' }

// AppendUpdate appends u's record to dst.
func AppendUpdate(dst []byte, u *Update) []byte {
	var b [UpdateSize]byte
	b[8] = u.Action
	copy(b[9:13], u.SPID[:])
	b[13], b[14], b[15] = byte(u.Index), byte(u.Index>>8), byte(u.Index>>16)
	binary.LittleEndian.PutUint64(b[16:], u.Seq)
	binary.LittleEndian.PutUint64(b[24:], u.TN)
	binary.LittleEndian.PutUint64(b[32:], u.LRN)
	binary.LittleEndian.PutUint64(b[40:], uint64(u.ActivatedAt))
	b[48] = u.SVType
	binary.LittleEndian.PutUint64(b[:], xxhash.Sum64(b[8:]))
	return append(dst, b[:]...)
}

// AppendCommit appends c's record to dst.
func AppendCommit(dst []byte, c *Commit) []byte {
	var b [CommitSize]byte
	b[8] = kindCommit
	binary.LittleEndian.PutUint32(b[12:], c.Count)
	binary.LittleEndian.PutUint64(b[16:], c.Seq)
	binary.LittleEndian.PutUint64(b[24:], c.Sum)
	binary.LittleEndian.PutUint64(b[32:], uint64(c.Time))
	binary.LittleEndian.PutUint64(b[40:], c.Pending)
	copy(b[48:80], c.Key[:])
	binary.LittleEndian.PutUint64(b[80:], c.Fingerprint)
	binary.LittleEndian.PutUint32(b[88:], c.Added)
	binary.LittleEndian.PutUint32(b[92:], c.Modified)
	binary.LittleEndian.PutUint32(b[96:], c.Deleted)
	binary.LittleEndian.PutUint64(b[:], xxhash.Sum64(b[8:]))
	return append(dst, b[:]...)
}

// AppendBatch appends the records of a batch — its updates, then its commit
// record — to dst, filling in c.Count and c.Sum, and when there are updates
// c.Seq, c.Fingerprint and the counts by action.
func AppendBatch(dst []byte, ups []Update, c *Commit) []byte {
	start := len(dst)
	for i := range ups {
		ups[i].Index = uint32(i)
		dst = AppendUpdate(dst, &ups[i])
	}
	c.Count = uint32(len(ups))
	c.Sum = xxhash.Sum64(dst[start:])
	if len(ups) > 0 {
		c.Seq = ups[len(ups)-1].Seq
		c.Fingerprint = Fingerprint(ups)
		c.Added, c.Modified, c.Deleted = 0, 0, 0
		for i := range ups {
			switch ups[i].Action {
			case 'A':
				c.Added++
			case 'U':
				c.Modified++
			case 'D':
				c.Deleted++
			}
		}
	}
	return AppendCommit(dst, c)
}

// Fingerprint hashes what a batch's updates say, without their sequence
// numbers and indexes: the same request sent again has the same one.
func Fingerprint(ups []Update) uint64 {
	h := xxhash.New()
	var b []byte
	for i := range ups {
		u := ups[i]
		u.Seq, u.Index = 0, 0
		b = AppendUpdate(b[:0], &u)
		h.Write(b[8:])
	}
	return h.Sum64()
}

// decodeUpdate decodes b[:UpdateSize], reporting whether it is a valid
// update record.
func decodeUpdate(b []byte) (Update, bool) {
	if len(b) < UpdateSize || !isAction(b[8]) || binary.LittleEndian.Uint64(b) != xxhash.Sum64(b[8:UpdateSize]) ||
		!allZero(b[49:UpdateSize]) {
		return Update{}, false
	}
	u := Update{
		Index:       uint32(b[13]) | uint32(b[14])<<8 | uint32(b[15])<<16,
		Action:      b[8],
		Seq:         binary.LittleEndian.Uint64(b[16:]),
		TN:          binary.LittleEndian.Uint64(b[24:]),
		LRN:         binary.LittleEndian.Uint64(b[32:]),
		ActivatedAt: int64(binary.LittleEndian.Uint64(b[40:])),
		SVType:      b[48],
	}
	copy(u.SPID[:], b[9:13])
	return u, true
}

// decodeCommit decodes b[:CommitSize], reporting whether it is a valid
// commit record.
func decodeCommit(b []byte) (Commit, bool) {
	if len(b) < CommitSize || b[8] != kindCommit || binary.LittleEndian.Uint64(b) != xxhash.Sum64(b[8:CommitSize]) {
		return Commit{}, false
	}
	c := Commit{
		Count:   binary.LittleEndian.Uint32(b[12:]),
		Seq:     binary.LittleEndian.Uint64(b[16:]),
		Sum:     binary.LittleEndian.Uint64(b[24:]),
		Time:    int64(binary.LittleEndian.Uint64(b[32:])),
		Pending: binary.LittleEndian.Uint64(b[40:]),

		Fingerprint: binary.LittleEndian.Uint64(b[80:]),
		Added:       binary.LittleEndian.Uint32(b[88:]),
		Modified:    binary.LittleEndian.Uint32(b[92:]),
		Deleted:     binary.LittleEndian.Uint32(b[96:]),
	}
	copy(c.Key[:], b[48:80])
	return c, true
}

// ErrVersion reports a journal of another format version.
var ErrVersion = errors.New("journal: unknown format version")

// CorruptError reports damage to committed data: the journal cannot be
// replayed without losing acknowledged updates.
type CorruptError struct {
	Offset int64
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("journal damaged at byte offset %d: %s", e.Offset, e.Reason)
}

// Replay is what reading a journal found.
type Replay struct {
	Batches []Batch
	// Good is the length of the journal up to the end of its last commit
	// record: where the next batch is appended.
	Good int64
	// Torn is the length of the incomplete last batch that was dropped,
	// and TornUpdates the whole update records in it.
	Torn        int64
	TornUpdates int
}

// Updates is the number of updates in the committed batches.
func (r *Replay) Updates() int {
	n := 0
	for _, b := range r.Batches {
		n += len(b.Updates)
	}
	return n
}

// Read parses a whole journal. An empty or header-less file (a crash while
// creating it) reads as an empty journal. Damage to committed data is a
// *CorruptError.
func Read(b []byte) (*Replay, error) {
	r := &Replay{}
	if len(b) < HeaderSize {
		r.Torn = int64(len(b))
		return r, nil
	}
	if err := checkHeader(b); err != nil {
		return nil, err
	}
	off := HeaderSize
	r.Good = HeaderSize
	var (
		pending []Update
		lastSeq uint64
		start   = off
	)
	for off < len(b) {
		if u, ok := decodeUpdate(b[off:]); ok {
			if u.Seq <= lastSeq {
				return nil, &CorruptError{int64(off), fmt.Sprintf("update sequence %d does not follow %d", u.Seq, lastSeq)}
			}
			if int(u.Index) != len(pending) {
				return nil, &CorruptError{int64(off), fmt.Sprintf("update %d of its batch stands where update %d belongs", u.Index, len(pending))}
			}
			if len(pending) == 0 {
				start = off
			}
			pending = append(pending, u)
			lastSeq = u.Seq
			off += UpdateSize
			continue
		}
		if c, ok := decodeCommit(b[off:]); ok {
			if len(pending) == 0 {
				start = off
			}
			if err := checkBatch(b[start:off], pending, &c); err != nil {
				return nil, &CorruptError{int64(off), err.Error()}
			}
			r.Batches = append(r.Batches, Batch{Updates: pending, Commit: c, Offset: int64(start)})
			pending = nil
			off += CommitSize
			r.Good = int64(off)
			continue
		}
		// A record that does not decode: the end of a torn append, or
		// damage. Torn only if no commit record and no other batch's
		// first update follows, and the bad record is not a whole commit
		// record at the very end.
		if at := nextCommit(b, off+1); at >= 0 {
			return nil, &CorruptError{int64(off), fmt.Sprintf("a damaged record is followed by a commit record at offset %d", at)}
		}
		if at := nextBatchStart(b, off+1); at >= 0 {
			return nil, &CorruptError{int64(off), fmt.Sprintf("a damaged record is followed by the start of a later batch at offset %d", at)}
		}
		if !torn(b, off) {
			return nil, &CorruptError{int64(off), "a whole record fails its checksum"}
		}
		break
	}
	r.Torn = int64(len(b)) - r.Good
	r.TornUpdates = int(r.Torn / UpdateSize)
	if len(pending) < r.TornUpdates {
		r.TornUpdates = len(pending)
	}
	return r, nil
}

func checkHeader(b []byte) error {
	if string(b[:6]) == Magic[:6] && string(b[:8]) != Magic {
		return fmt.Errorf("%w: %q, this reader knows %q", ErrVersion, b[:8], Magic)
	}
	if string(b[:8]) != Magic {
		return &CorruptError{0, "not an lnpdb journal (bad magic)"}
	}
	if !allZero(b[8:HeaderSize]) {
		return &CorruptError{8, "header bytes 8 to 16 are not zero"}
	}
	return nil
}

// checkBatch checks a commit record against the update records before it.
func checkBatch(raw []byte, ups []Update, c *Commit) error {
	if int(c.Count) != len(ups) {
		return fmt.Errorf("commit record counts %d updates, %d precede it", c.Count, len(ups))
	}
	if len(ups) > 0 && c.Seq != ups[len(ups)-1].Seq {
		return fmt.Errorf("commit record names sequence %d, its batch ends at %d", c.Seq, ups[len(ups)-1].Seq)
	}
	if got := xxhash.Sum64(raw); got != c.Sum {
		return fmt.Errorf("batch checksum mismatch (stored %016x, computed %016x)", c.Sum, got)
	}
	return nil
}

// nextCommit returns the offset of the first valid commit record at or
// after from, or -1. Records are not aligned after damage, so every offset
// is tried; the kind byte rules out all but a few before any hashing.
func nextCommit(b []byte, from int) int {
	for off := from; off+CommitSize <= len(b); off++ {
		i := bytes.IndexByte(b[off+8:len(b)-CommitSize+9], kindCommit)
		if i < 0 {
			return -1
		}
		off += i
		if _, ok := decodeCommit(b[off:]); ok {
			return off
		}
	}
	return -1
}

// nextBatchStart returns the offset of the first valid update record at or
// after from that is the first of its batch, or -1.
func nextBatchStart(b []byte, from int) int {
	for off := from; off+UpdateSize <= len(b); off++ {
		if isAction(b[off+8]) && b[off+13]|b[off+14]|b[off+15] == 0 {
			if _, ok := decodeUpdate(b[off:]); ok {
				return off
			}
		}
	}
	return -1
}

// torn reports whether the bad record at off can be the end of an append
// cut short by a crash: it runs past the end of the file, or it overlaps a
// sector of zeros (one the crash left unwritten). A kill leaves a prefix of
// what was written, so a whole record that is wrong is damage.
func torn(b []byte, off int) bool {
	size := UpdateSize
	if b[off+min(8, len(b)-off-1)] == kindCommit {
		size = CommitSize
	}
	if len(b)-off < size {
		return true
	}
	const sector = 512
	for s := off / sector * sector; s < off+size; s += sector {
		if allZero(b[s:min(s+sector, len(b))]) {
			return true
		}
	}
	return false
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Lost describes a stretch of a damaged journal that Salvage could not keep.
type Lost struct {
	Offset, Length int64
	// Updates is how many update records the stretch held, as far as a
	// commit record after it tells (0 when none does).
	Updates int
}

// Salvage reads a damaged journal as far as it can: every batch whose update
// records and commit record verify is kept, in order; the stretches between
// them are reported as lost. An incomplete last batch is dropped as Read
// drops it.
func Salvage(b []byte) (*Replay, []Lost, error) {
	r := &Replay{}
	if len(b) < HeaderSize {
		return r, nil, nil
	}
	if err := checkHeader(b); err != nil {
		var ce *CorruptError
		if !errors.As(err, &ce) {
			return nil, nil, err
		}
	}
	var lost []Lost
	from := HeaderSize
	r.Good = HeaderSize
	lastSeq := uint64(0)
	for from < len(b) {
		at := nextCommit(b, from)
		if at < 0 {
			break
		}
		c, _ := decodeCommit(b[at:])
		start := at - int(c.Count)*UpdateSize
		var ups []Update
		ok := start >= from
		for off := start; ok && off < at; off += UpdateSize {
			u, good := decodeUpdate(b[off:])
			ok = good && int(u.Index) == len(ups) && (len(ups) == 0 || u.Seq > ups[len(ups)-1].Seq)
			ups = append(ups, u)
		}
		if ok && len(ups) > 0 && lastSeq != 0 && ups[0].Seq <= lastSeq {
			ok = false
		}
		if ok {
			ok = checkBatch(b[start:at], ups, &c) == nil
		}
		if !ok {
			lost = append(lost, Lost{Offset: int64(from), Length: int64(at + CommitSize - from), Updates: int(c.Count)})
		} else {
			if start > from {
				lost = append(lost, Lost{Offset: int64(from), Length: int64(start - from)})
			}
			r.Batches = append(r.Batches, Batch{Updates: ups, Commit: c, Offset: int64(start)})
			if len(ups) > 0 {
				lastSeq = ups[len(ups)-1].Seq
			}
		}
		from = at + CommitSize
		r.Good = int64(from)
	}
	r.Torn = int64(len(b)) - r.Good
	r.TornUpdates = int(r.Torn / UpdateSize)
	return r, lost, nil
}
