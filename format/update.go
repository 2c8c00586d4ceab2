package format

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/lnpdb/lnpdb/internal/nanp"
)

func dirOf(path string) string { return filepath.Dir(path) }

// JournalPath is where the journal of the table at path lives.
func JournalPath(path string) string { return path + ".journal" }

// ErrInvalidUpdate reports an update that was refused; errors wrapping it
// say which update and why. A refused batch applies nothing.
var ErrInvalidUpdate = errors.New("format: invalid update")

// Apply applies updates to the ported numbers. It returns only after the
// updates are in the journal and fsync'd, so an update Apply acknowledged
// survives a crash; lookups see each update from the moment Apply returns,
// and never half of one. The batch is validated first: if any update is
// invalid (an unknown SPID, an invalid number, a number in no assigned code)
// nothing is applied. Add and Modify both set the number's ported record;
// Delete removes it, so the number routes by its block again.
//
// Apply is safe to call concurrently with lookups and with itself.
func (db *DB) Apply(updates []Update) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	s := db.snap.Load()
	if s == nil {
		return ErrClosed
	}
	entries := make([]*overlayEntry, len(updates))
	for i := range updates {
		e, err := s.resolve(updates[i], false)
		if err != nil {
			return fmt.Errorf("%w: update %d (%c %d): %v", ErrInvalidUpdate, i+1, updates[i].Action, updates[i].TN, err)
		}
		e.seq = db.seq + 1 + uint64(i)
		entries[i] = e
	}
	if len(updates) == 0 {
		return nil
	}
	if db.j == nil {
		j, err := openJournal(JournalPath(db.path), db.journalGood)
		if err != nil {
			return err
		}
		db.j = j
	}
	if err := db.j.append(updates, db.seq+1); err != nil {
		// The tail may hold part of the batch; replay would cut it off as
		// torn only if it is damaged, so close the journal and let the next
		// Apply reopen it after the last good record.
		db.j.close()
		db.j = nil
		if r, rerr := readJournal(JournalPath(db.path)); rerr == nil {
			db.journalGood = r.goodLen
		}
		return fmt.Errorf("format: journal: %w", err)
	}
	db.seq += uint64(len(updates))
	db.journalGood += int64(len(updates)) * journalRecord
	if s.ov == nil {
		ns := *s
		ns.ov = newOverlay()
		db.snap.Store(&ns)
		s = &ns
	}
	for i, e := range entries {
		s.ov.put(updates[i].TN, e)
	}
	return nil
}

// resolve checks an update against the snapshot and turns it into an
// overlay entry. In replay, an SPID the table does not know (the table was
// replaced since) is kept as a bare carrier instead of refused.
func (s *snapshot) resolve(u Update, replay bool) (*overlayEntry, error) {
	if !nanp.Number(u.TN).Valid() {
		return nil, errors.New("not a valid NANP number")
	}
	e := &overlayEntry{u: u}
	switch u.Action {
	case Delete:
		return e, nil
	case Add, Modify:
	default:
		return nil, fmt.Errorf("unknown action %q", u.Action)
	}
	if !nanp.Number(u.LRN).Valid() {
		return nil, errors.New("LRN is not a valid NANP number")
	}
	if u.ActivatedAt < 0 || u.ActivatedAt > 1<<32-1 {
		return nil, errors.New("activation time out of range")
	}
	if !replay {
		blk, err := s.block(u.TN/10000000, u.TN%10000000)
		if err != nil {
			return nil, err
		}
		if !blk.Assigned {
			return nil, errors.New("the number is in no assigned code or thousands-block")
		}
	}
	c, ok := s.carrierIdx[u.SPID]
	var carrier *Carrier
	switch {
	case ok:
		carrier = &s.carriers[c]
	case replay:
		carrier = &Carrier{OCN: u.SPID}
	default:
		return nil, fmt.Errorf("unknown SPID %q", u.SPID)
	}
	e.ported = Ported{OK: true, LRN: canonical(u.LRN), Carrier: carrier, ActivatedAt: u.ActivatedAt}
	return e, nil
}

// replay loads the journal into the snapshot's overlay.
func (db *DB) replay(s *snapshot) error {
	r, err := readJournal(JournalPath(db.path))
	if err != nil {
		return err
	}
	db.journalGood = r.goodLen
	db.journalTorn = r.torn
	if len(r.updates) == 0 {
		return nil
	}
	s.ov = newOverlay()
	for i, u := range r.updates {
		e, err := s.resolve(u, true)
		if err != nil {
			return fmt.Errorf("%w: journal record %d: %v", ErrCorrupt, i+1, err)
		}
		e.seq = r.seqs[i]
		s.ov.put(u.TN, e)
		db.seq = max(db.seq, e.seq)
	}
	return nil
}

// PendingUpdates is the number of numbers whose latest update is not yet
// compacted into the mapped file.
func (db *DB) PendingUpdates() int {
	s := db.snap.Load()
	if s == nil || s.ov == nil {
		return 0
	}
	return s.ov.len()
}

// ErrReplaced reports a compaction given up because the table file was
// replaced while it ran: the new file is left in place, the updates stay
// pending, and Reload followed by Compact folds them into the new file.
var ErrReplaced = errors.New("format: the table file was replaced during compaction")

// compactWritten, when set, runs between writing the compacted file and
// renaming it into place (tests replace the table there).
var compactWritten func()

// Compact writes a new table file with the pending updates folded in,
// renames it over the DB's file, switches lookups to it and trims the
// journal. Lookups keep answering throughout, each from either the old or
// the new state; updates applied during the compaction stay pending. Only
// one compaction runs at a time.
//
// If the file at the DB's path is replaced while the compaction runs, the
// replacement wins: Compact returns ErrReplaced and leaves it in place.
// (A replacement landing between that check and the rename, a window of
// two system calls, is overwritten.)
func (db *DB) Compact(ctx context.Context) error {
	db.compactMu.Lock()
	defer db.compactMu.Unlock()
	db.mu.Lock()
	s := db.snap.Load()
	upTo := db.seq
	db.mu.Unlock()
	if s == nil {
		return ErrClosed
	}
	if s.ov == nil {
		return nil
	}
	start, err := os.Stat(db.path)
	if err != nil {
		return err
	}
	folded := map[uint64]*overlayEntry{}
	for tn, e := range s.ov.entries() {
		if e.seq <= upTo {
			folded[tn] = e
		}
	}
	b, err := builderFromSnapshot(ctx, s, folded)
	if err != nil {
		return err
	}
	// Written under a name of its own first, so that a replacement of the
	// table made meanwhile can be noticed before it is overwritten.
	staged := filepath.Join(filepath.Dir(db.path), "."+filepath.Base(db.path)+".compacted")
	if _, err := b.writeTable(staged, time.Now()); err != nil {
		return err
	}
	if compactWritten != nil {
		compactWritten()
	}
	if now, err := os.Stat(db.path); err != nil || !os.SameFile(start, now) ||
		now.Size() != start.Size() || !now.ModTime().Equal(start.ModTime()) {
		os.Remove(staged)
		return fmt.Errorf("%w: %s", ErrReplaced, db.path)
	}
	if err := os.Rename(staged, db.path); err != nil {
		os.Remove(staged)
		return err
	}
	syncDir(filepath.Dir(db.path))
	return db.swap(upTo)
}

// Reload switches lookups to the file now at the DB's path — a new table
// renamed over the old one — keeping every pending update on top of it.
func (db *DB) Reload() error {
	return db.swap(0)
}

// swap maps the file at db.path and makes it current, carrying over the
// pending updates with sequence numbers above upTo.
func (db *DB) swap(upTo uint64) error {
	ns, err := openSnapshot(db.path)
	if err != nil {
		return err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	cur := db.snap.Load()
	if cur == nil {
		ns.m.Close()
		return ErrClosed
	}
	var keep []*overlayEntry
	if cur.ov != nil {
		for _, e := range cur.ov.entries() {
			if e.seq > upTo {
				keep = append(keep, e)
			}
		}
	}
	if len(keep) > 0 {
		ns.ov = newOverlay()
		for _, e := range keep {
			re, err := ns.resolve(e.u, true)
			if err != nil {
				ns.m.Close()
				return err
			}
			re.seq = e.seq
			ns.ov.put(e.u.TN, re)
		}
	}
	if upTo > 0 {
		// The journal now needs only what the new file lacks. Until this
		// rename lands, a crash replays the old journal over the new file,
		// which gives the same state: replay is idempotent.
		updates := make([]Update, 0, len(keep))
		seqs := make([]uint64, 0, len(keep))
		sortEntries(keep)
		for _, e := range keep {
			updates = append(updates, e.u)
			seqs = append(seqs, e.seq)
		}
		if db.j != nil {
			db.j.close()
			db.j = nil
		}
		if err := writeJournal(JournalPath(db.path), updates, seqs); err != nil {
			ns.m.Close()
			return err
		}
		db.journalGood = int64(journalHeader + len(updates)*journalRecord)
	}
	db.snap.Store(ns)
	return nil
}

func sortEntries(es []*overlayEntry) {
	slices.SortFunc(es, func(a, b *overlayEntry) int { return cmp.Compare(a.seq, b.seq) })
}
