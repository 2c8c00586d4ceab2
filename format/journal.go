package format

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/lnpdb/lnpdb/format/internal/journal"
	"github.com/lnpdb/lnpdb/internal/core/vfs"
)

// The journal (the table's path + ".journal") makes applied updates durable.
// Its layout is documented in the package doc ("The journal"); its codec
// lives in format/internal/journal.

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
	SVType      SVType // the number's SV Type; Add and Modify only
}

func (u *Update) record(seq uint64) journal.Update {
	r := journal.Update{Seq: seq, Action: byte(u.Action), TN: u.TN, LRN: u.LRN, ActivatedAt: u.ActivatedAt}
	if u.Action != Delete {
		copy(r.SPID[:], u.SPID)
		r.SVType = uint8(u.SVType)
	}
	return r
}

func fromRecord(r *journal.Update) Update {
	u := Update{Action: Action(r.Action), TN: r.TN, LRN: r.LRN, ActivatedAt: r.ActivatedAt}
	if u.Action != Delete {
		u.SPID = string(r.SPID[:])
		u.SVType = SVType(r.SVType)
	}
	return u
}

// Receipt is what a batch of updates did, as Apply first answered it.
type Receipt struct {
	Applied  int `json:"applied"`
	Added    int `json:"added"`
	Modified int `json:"modified"`
	Deleted  int `json:"deleted"`
	// Pending is the number of numbers awaiting compaction right after
	// the batch.
	Pending int `json:"pending"`
	// Replayed is true when the answer is that of an earlier batch with
	// the same idempotency key: nothing was applied this time.
	Replayed bool `json:"-"`
}

// IdempotencyWindow is how long ApplyBatch remembers an idempotency key,
// across restarts and compactions.
const IdempotencyWindow = 24 * time.Hour

// ErrIdempotencyKeyReused reports an idempotency key sent again with other
// updates than the first time: nothing is applied.
var ErrIdempotencyKeyReused = errors.New("format: idempotency key already used for other updates")

// ErrJournalBroken reports a journal that a failed append left in a state
// that could not be brought back to its last commit. The DB refuses updates
// until a compaction rewrites the journal or the table is opened again;
// lookups go on.
var ErrJournalBroken = errors.New("format: the journal refuses updates")

// ErrJournalCorrupt reports a journal damaged somewhere other than in an
// incomplete last batch: replaying it could lose or invent acknowledged
// updates, so Open refuses it. RecoverJournal sets it aside.
var ErrJournalCorrupt = errors.New("format: journal damaged")

// remembered is an idempotency key's first answer.
type remembered struct {
	commit journal.Commit
}

func (r remembered) receipt() Receipt {
	c := r.commit
	return Receipt{
		Applied: int(c.Added + c.Modified + c.Deleted), Added: int(c.Added), Modified: int(c.Modified),
		Deleted: int(c.Deleted), Pending: int(c.Pending), Replayed: true,
	}
}

func keyDigest(key string) [32]byte { return sha256.Sum256([]byte(key)) }

// readJournal reads the journal at path; a journal that does not exist reads
// as empty.
func readJournal(fs vfs.FS, path string) (*journal.Replay, error) {
	b, err := vfs.ReadFile(fs, path)
	if errors.Is(err, os.ErrNotExist) {
		return &journal.Replay{}, nil
	}
	if err != nil {
		return nil, err
	}
	r, err := journal.Read(b)
	if err != nil {
		return nil, journalError(path, err)
	}
	return r, nil
}

func journalError(path string, err error) error {
	var ce *journal.CorruptError
	if errors.As(err, &ce) {
		return fmt.Errorf("%w: %s: %v (lnpdb journal check shows what is left; lnpdb journal recover sets it aside)", ErrJournalCorrupt, path, err)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// JournalReport describes a journal as CheckJournal or RecoverJournal found
// it.
type JournalReport struct {
	Path        string
	Size        int64
	Batches     int // committed batches that replay (or were kept)
	Updates     int // updates in them
	TornBytes   int64
	TornUpdates int   // whole update records in the dropped incomplete batch
	Damage      error // nil when the journal replays
	// After RecoverJournal: where the damaged journal was set aside, and
	// what could not be kept.
	SetAsideAs  string
	LostBytes   int64
	LostUpdates int
}

// CheckJournal reads the journal of the table at path without changing
// anything. A journal that does not exist is empty.
func CheckJournal(path string) (JournalReport, error) {
	jp := JournalPath(path)
	rep := JournalReport{Path: jp}
	b, err := vfs.ReadFile(vfs.Default, jp)
	if errors.Is(err, os.ErrNotExist) {
		return rep, nil
	}
	if err != nil {
		return rep, err
	}
	rep.Size = int64(len(b))
	r, err := journal.Read(b)
	if err != nil {
		rep.Damage = journalError(jp, err)
		if r, lost, serr := journal.Salvage(b); serr == nil {
			rep.Batches, rep.Updates = len(r.Batches), r.Updates()
			for _, l := range lost {
				rep.LostBytes += l.Length
				rep.LostUpdates += l.Updates
			}
		}
		return rep, nil
	}
	rep.Batches, rep.Updates = len(r.Batches), r.Updates()
	rep.TornBytes, rep.TornUpdates = r.Torn, r.TornUpdates
	return rep, nil
}

// RecoverJournal sets a damaged journal of the table at path aside — it is
// renamed to path.journal.damaged-<UTC time>, never overwritten — and
// writes in its place a journal holding every batch that still verifies.
// The report says what was kept and what was lost. A journal that replays
// is left alone. It takes the table's writer's lock (LockPath) while it
// works, and returns an error matching ErrLocked when a process has the
// table open for updates.
func RecoverJournal(path string) (JournalReport, error) {
	return recoverJournal(vfs.Default, path, time.Now())
}

func recoverJournal(fs vfs.FS, path string, now time.Time) (JournalReport, error) {
	lock, err := claim(fs, path)
	if err != nil {
		return JournalReport{Path: JournalPath(path)}, err
	}
	defer lock.Close()
	rep, err := CheckJournal(path)
	if err != nil || rep.Damage == nil {
		return rep, err
	}
	jp := rep.Path
	b, err := vfs.ReadFile(fs, jp)
	if err != nil {
		return rep, err
	}
	r, _, err := journal.Salvage(b)
	if err != nil {
		return rep, err
	}
	aside := jp + ".damaged-" + now.UTC().Format("20060102T150405Z")
	// A link, not a rename: it fails rather than replace a file of that
	// name, and the journal stays where it was until its successor is
	// in place.
	if err := fs.Link(jp, aside); err != nil {
		return rep, fmt.Errorf("setting the damaged journal aside: %w", err)
	}
	if _, err := journal.Rewrite(fs, jp, r.Batches); err != nil {
		return rep, err
	}
	rep.SetAsideAs = aside
	return rep, nil
}
