package format

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cespare/xxhash/v2"
)

// The journal (the table's path + ".journal") makes applied updates durable:
// Apply appends their records and fsyncs before it returns, and Open replays
// them. Layout: a 16-byte header ("LNPDBJ1\n", then 8 zero bytes) and
// 48-byte records:
//
//	[0,8)   xxhash64 of bytes [8,48)
//	[8,16)  sequence number (increasing)
//	[16]    action: 'A' add, 'U' update, 'D' delete
//	[17,21) SPID (4 ASCII bytes; zero for a delete)
//	[21,24) zero
//	[24,32) TN, 10-digit national number
//	[32,40) LRN, 10-digit national number (0 for a delete)
//	[40,48) activation time, unix seconds (signed; 0 unknown)
//
// A crash in the middle of an append leaves a torn tail: replay stops at the
// first record that is short or fails its checksum, and that tail — never
// acknowledged, since Apply returns only after fsync — is cut off before the
// next append. Replaying a record twice gives the same state as once (adds
// and updates set a number's record, deletes remove it), which is what makes
// compaction's crash windows safe.

const (
	journalMagic  = "LNPDBJ1\n"
	journalHeader = 16
	journalRecord = 48
)

// Action is what an Update does.
type Action byte

// The actions of an NPAC update feed.
const (
	Add    Action = 'A' // a new port: the number gets a ported record
	Modify Action = 'U' // a changed port: the record is replaced
	Delete Action = 'D' // a disconnect or port-back: the record is removed
)

// Update is one change to the ported numbers.
type Update struct {
	Action      Action
	TN          uint64 // 10-digit national number
	LRN         uint64 // 10-digit national number; Add and Modify only
	SPID        string // the new current carrier's SPID; Add and Modify only
	ActivatedAt int64  // unix seconds, 0 if unknown
}

func (u *Update) encode(seq uint64, b []byte) {
	clear(b[:journalRecord])
	binary.LittleEndian.PutUint64(b[8:], seq)
	b[16] = byte(u.Action)
	copy(b[17:21], u.SPID)
	binary.LittleEndian.PutUint64(b[24:], u.TN)
	binary.LittleEndian.PutUint64(b[32:], u.LRN)
	binary.LittleEndian.PutUint64(b[40:], uint64(u.ActivatedAt))
	binary.LittleEndian.PutUint64(b, xxhash.Sum64(b[8:journalRecord]))
}

func decodeRecord(b []byte) (Update, uint64, bool) {
	if binary.LittleEndian.Uint64(b) != xxhash.Sum64(b[8:journalRecord]) {
		return Update{}, 0, false
	}
	u := Update{
		Action:      Action(b[16]),
		TN:          binary.LittleEndian.Uint64(b[24:]),
		LRN:         binary.LittleEndian.Uint64(b[32:]),
		ActivatedAt: int64(binary.LittleEndian.Uint64(b[40:])),
	}
	if u.Action != Delete {
		u.SPID = string(b[17:21])
	}
	return u, binary.LittleEndian.Uint64(b[8:]), true
}

// replayed is what reading a journal found.
type replayed struct {
	updates []Update
	seqs    []uint64
	goodLen int64 // bytes up to the end of the last good record
	torn    int64 // bytes after it
}

func readJournal(path string) (*replayed, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &replayed{}, nil
	}
	if err != nil {
		return nil, err
	}
	r := &replayed{}
	if len(b) < journalHeader {
		// A crash while creating the journal: nothing was acknowledged.
		r.torn = int64(len(b))
		return r, nil
	}
	if string(b[:8]) != journalMagic {
		return nil, fmt.Errorf("%w: %s is not an lnpdb journal", ErrFormat, path)
	}
	off := journalHeader
	for off+journalRecord <= len(b) {
		u, seq, ok := decodeRecord(b[off:])
		if !ok {
			break
		}
		r.updates = append(r.updates, u)
		r.seqs = append(r.seqs, seq)
		off += journalRecord
	}
	r.goodLen = int64(off)
	r.torn = int64(len(b) - off)
	return r, nil
}

// journal is the open, appendable journal.
type journal struct {
	f    *os.File
	path string
	buf  []byte
}

// openJournal opens the journal for appending, first cutting off a torn tail
// so that new records follow the last good one.
func openJournal(path string, goodLen int64) (*journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if goodLen < journalHeader {
		hdr := make([]byte, journalHeader)
		copy(hdr, journalMagic)
		if _, err := f.WriteAt(hdr, 0); err != nil {
			f.Close()
			return nil, err
		}
		goodLen = journalHeader
	}
	if st.Size() != goodLen {
		if err := f.Truncate(goodLen); err != nil {
			f.Close()
			return nil, err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(goodLen, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	syncDir(dirOf(path))
	return &journal{f: f, path: path}, nil
}

// append writes the records and fsyncs them: when it returns nil, the
// updates survive a crash.
func (j *journal) append(updates []Update, firstSeq uint64) error {
	j.buf = j.buf[:0]
	var rec [journalRecord]byte
	for i := range updates {
		updates[i].encode(firstSeq+uint64(i), rec[:])
		j.buf = append(j.buf, rec[:]...)
	}
	if _, err := j.f.Write(j.buf); err != nil {
		return err
	}
	return j.f.Sync()
}

func (j *journal) close() error { return j.f.Close() }

// writeJournal replaces the journal at path with one holding exactly these
// updates, by writing a temporary file and renaming it.
func writeJournal(path string, updates []Update, seqs []uint64) error {
	tmp, err := os.CreateTemp(dirOf(path), ".journal.tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	b := make([]byte, journalHeader, journalHeader+len(updates)*journalRecord)
	copy(b, journalMagic)
	var rec [journalRecord]byte
	for i := range updates {
		updates[i].encode(seqs[i], rec[:])
		b = append(b, rec[:]...)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	syncDir(dirOf(path))
	return nil
}
