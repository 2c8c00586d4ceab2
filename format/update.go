package format

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/lnpdb/lnpdb/format/internal/journal"
	"github.com/lnpdb/lnpdb/internal/core/atomicfile"
	"github.com/lnpdb/lnpdb/internal/core/nanp"
)

// JournalPath is where the journal of the table at path lives.
func JournalPath(path string) string { return path + ".journal" }

// SetAsidePath is where the updates set aside from the table at path are
// kept: pending updates naming an SPID that a replacement table does not
// have (see Reload).
func SetAsidePath(path string) string { return path + ".setaside" }

// ErrInvalidUpdate reports an update that was refused; errors wrapping it
// say which update and why. A refused batch applies nothing.
var ErrInvalidUpdate = errors.New("format: invalid update")

// Apply applies updates to the ported numbers, as one batch with no
// idempotency key; see ApplyBatch.
func (db *DB) Apply(updates []Update) error {
	_, err := db.ApplyBatch(updates, "")
	return err
}

// ApplyBatch applies a batch of updates to the ported numbers, all or
// nothing. It returns only after the batch and its commit record are in the
// journal and fsync'd, so a batch ApplyBatch acknowledged survives a crash;
// lookups see the whole batch from the moment it returns, and never part of
// it. A batch that fails — refused, or a journal write that failed (a full
// disk, an I/O error) — leaves no trace, in memory or on disk.
//
// The batch is validated first: if any update is invalid (an unknown SPID,
// an invalid number, a number in no assigned code) nothing is applied. Add
// and Modify both set the number's ported record; Delete removes it, so the
// number routes by its block again.
//
// A non-empty idempotencyKey makes a retry safe: the same key with the same
// updates within IdempotencyWindow returns the first batch's Receipt (with
// Replayed set) and applies nothing; the same key with other updates is
// ErrIdempotencyKeyReused.
//
// ApplyBatch is safe to call concurrently with lookups and with itself.
func (db *DB) ApplyBatch(updates []Update, idempotencyKey string) (Receipt, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	s := db.snap.Load()
	switch {
	case s == nil:
		return Receipt{}, ErrClosed
	case db.cfg.readOnly:
		return Receipt{}, ErrReadOnly
	case len(updates) > journal.MaxBatch:
		return Receipt{}, fmt.Errorf("%w: a batch holds at most %d updates, this one %d", ErrInvalidUpdate, journal.MaxBatch, len(updates))
	}
	recs := make([]journal.Update, len(updates))
	for i := range updates {
		recs[i] = updates[i].record(db.seq + 1 + uint64(i))
	}
	var key [32]byte
	if idempotencyKey != "" {
		key = keyDigest(idempotencyKey)
		if r, ok := db.keys[key]; ok && time.Since(time.Unix(0, r.commit.Time)) < IdempotencyWindow {
			if r.commit.Fingerprint != journal.Fingerprint(recs) {
				return Receipt{}, ErrIdempotencyKeyReused
			}
			return r.receipt(), nil
		}
	}
	entries := make([]*overlayEntry, len(updates))
	for i := range updates {
		e, err := s.resolve(updates[i], false)
		if err != nil {
			return Receipt{}, fmt.Errorf("%w: update %d (%c %d): %v", ErrInvalidUpdate, i+1, updates[i].Action, updates[i].TN, err)
		}
		e.seq = recs[i].Seq
		entries[i] = e
	}
	if len(updates) == 0 {
		return Receipt{Pending: s.pending()}, nil
	}
	if broken := db.JournalBroken(); broken != nil {
		return Receipt{}, fmt.Errorf("%w: %v", ErrJournalBroken, broken)
	}
	if db.jw == nil {
		w, err := journal.OpenWriter(db.fs, JournalPath(db.path), db.journalGood)
		if err != nil {
			return Receipt{}, fmt.Errorf("format: journal: %w", err)
		}
		db.jw = w
	}
	pending := s.pendingAfter(updates)
	c := journal.Commit{Time: time.Now().UnixNano(), Pending: uint64(pending), Key: key}
	if err := db.jw.Append(recs, &c); err != nil {
		if errors.Is(err, journal.ErrBroken) {
			db.broken.Store(&err)
			return Receipt{}, fmt.Errorf("%w: %v", ErrJournalBroken, err)
		}
		return Receipt{}, fmt.Errorf("format: journal: %w", err)
	}
	db.seq += uint64(len(updates))
	db.journalGood = db.jw.Size()
	if idempotencyKey != "" {
		db.keys[key] = remembered{commit: c}
	}
	if s.ov == nil {
		ns := *s
		ns.ov = newOverlay()
		db.snap.Store(&ns)
		s = &ns
	}
	for i, e := range entries {
		s.ov.put(updates[i].TN, e)
	}
	r := remembered{commit: c}.receipt()
	r.Replayed = false
	return r, nil
}

// CheckBatch runs the checks ApplyBatch runs on updates against the table
// as it is now and applies nothing: nil when ApplyBatch would accept them,
// else the error it would return (wrapping ErrInvalidUpdate, or ErrClosed
// or ErrReadOnly). A node that hands a batch on to others first checks it
// here, so that a bad batch is refused before it goes anywhere.
func (db *DB) CheckBatch(updates []Update) error {
	s := db.snap.Load()
	switch {
	case s == nil:
		return ErrClosed
	case db.cfg.readOnly:
		return ErrReadOnly
	case len(updates) > journal.MaxBatch:
		return fmt.Errorf("%w: a batch holds at most %d updates, this one %d", ErrInvalidUpdate, journal.MaxBatch, len(updates))
	}
	for i := range updates {
		if _, err := s.resolve(updates[i], false); err != nil {
			return fmt.Errorf("%w: update %d (%c %d): %v", ErrInvalidUpdate, i+1, updates[i].Action, updates[i].TN, err)
		}
	}
	return nil
}

// pending is the number of numbers with an update in the overlay.
func (s *snapshot) pending() int {
	if s.ov == nil {
		return 0
	}
	return s.ov.len()
}

// pendingAfter is what pending will be once updates are in the overlay.
func (s *snapshot) pendingAfter(updates []Update) int {
	n := s.pending()
	seen := make(map[uint64]struct{}, len(updates))
	for _, u := range updates {
		if _, dup := seen[u.TN]; dup {
			continue
		}
		seen[u.TN] = struct{}{}
		if s.ov == nil {
			n++
		} else if _, ok := s.ov.get(u.TN); !ok {
			n++
		}
	}
	return n
}

// errUnknownSPID marks an update whose SPID the table does not have.
var errUnknownSPID = errors.New("unknown SPID")

// resolve checks an update against the snapshot and turns it into an
// overlay entry. In replay the number's block is not checked again: the
// update was accepted against the table of its day.
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
	if u.SVType > MaxSVType {
		return nil, fmt.Errorf("SV Type %d out of range (NPAC 0 to %d)", int(u.SVType)-1, MaxSVType-1)
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
	if !ok {
		return nil, fmt.Errorf("%w %q", errUnknownSPID, u.SPID)
	}
	e.ported = Ported{OK: true, LRN: nanp.Number(u.LRN).String(), Carrier: &s.carriers[c], ActivatedAt: u.ActivatedAt, SVType: u.SVType}
	return e, nil
}

// replay loads the journal into the snapshot's overlay, and says in rec
// what it found of a torn last batch.
func (db *DB) replay(s *snapshot, rec *Recovery) error {
	jp := JournalPath(db.path)
	r, err := readJournal(db.fs, jp)
	if err != nil {
		return err
	}
	db.journalGood = r.Good
	rec.TornBytes, rec.TornUpdates = r.Torn, r.TornUpdates
	var aside []*overlayEntry
	now := time.Now()
	for _, b := range r.Batches {
		if b.Commit.Key != ([32]byte{}) && now.Sub(time.Unix(0, b.Commit.Time)) < IdempotencyWindow {
			db.keys[b.Commit.Key] = remembered{commit: b.Commit}
		}
		for i := range b.Updates {
			u := fromRecord(&b.Updates[i])
			e, err := s.resolve(u, true)
			if errors.Is(err, errUnknownSPID) {
				e, err = &overlayEntry{u: u}, nil
				aside = append(aside, e)
			}
			if err != nil {
				return fmt.Errorf("%w: %s: update %d: %v", ErrJournalCorrupt, jp, b.Updates[i].Seq, err)
			}
			e.seq = b.Updates[i].Seq
			db.seq = max(db.seq, e.seq)
			if e.ported.OK || u.Action == Delete {
				if s.ov == nil {
					s.ov = newOverlay()
				}
				s.ov.put(u.TN, e)
			}
		}
		db.seq = max(db.seq, b.Commit.Seq)
	}
	if len(aside) > 0 {
		// A later update of the same number may have superseded the one
		// set aside; only what the overlay ends up without is set aside.
		if s.ov != nil {
			aside = slices.DeleteFunc(aside, func(e *overlayEntry) bool {
				cur, ok := s.ov.get(e.u.TN)
				return ok && cur.seq > e.seq
			})
		}
		if db.cfg.shared {
			return nil // left out, and left to the table's writer
		}
		return db.setAside(s, aside, "replay")
	}
	return nil
}

// setAside writes updates that the snapshot cannot resolve to the set-aside
// file, then rewrites the journal without them. A crash between the two
// sets them aside again at the next Open: the file may repeat an update,
// each line naming its sequence number.
func (db *DB) setAside(s *snapshot, aside []*overlayEntry, when string) error {
	if len(aside) == 0 {
		return nil
	}
	sortEntries(aside)
	p := SetAsidePath(db.path)
	f, err := db.fs.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("format: setting updates aside: %w", err)
	}
	st, err := f.Stat()
	var buf []byte
	// The SV Type is the last column; a file begun before it had one
	// goes on without it, so that every row matches the file's header.
	const header = "action,tn,lrn,spid,activated_at,seq,set_aside_at,reason"
	withSV := true
	if err == nil && st.Size() == 0 {
		buf = append(buf, header+",sv_type\n"...)
	} else if err == nil {
		first := make([]byte, len(header)+1)
		n, _ := f.ReadAt(first, 0)
		withSV = string(first[:n]) != header+"\n"
	}
	at := time.Now().UTC().Format(time.RFC3339)
	for _, e := range aside {
		u := e.u
		buf = fmt.Appendf(buf, "%c,%d,%d,%s,%s,%d,%s,%s: SPID %q not in the table", u.Action, u.TN, u.LRN, u.SPID,
			strconv.FormatInt(u.ActivatedAt, 10), e.seq, at, when, u.SPID)
		if withSV {
			buf = append(buf, ',')
			if u.SVType != SVTypeNone {
				buf = strconv.AppendInt(buf, int64(u.SVType)-1, 10) // the NPAC's value
			}
		}
		buf = append(buf, '\n')
	}
	if err == nil {
		_, err = f.Write(buf)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("format: setting updates aside: %w", err)
	}
	var keep []*overlayEntry
	if s.ov != nil {
		for _, e := range s.ov.entries() {
			keep = append(keep, e)
		}
	}
	if err := db.rewriteJournal(keep); err != nil {
		return err
	}
	db.setAsideN.Add(int64(len(aside)))
	return nil
}

// rewriteJournal replaces the journal with one holding keep (as one batch)
// and the idempotency keys still remembered. The caller holds db.mu or has
// not published the DB yet.
func (db *DB) rewriteJournal(keep []*overlayEntry) error {
	sortEntries(keep)
	var batches []journal.Batch
	if len(keep) > 0 {
		b := journal.Batch{Commit: journal.Commit{Time: time.Now().UnixNano(), Pending: uint64(len(keep))}}
		for _, e := range keep {
			b.Updates = append(b.Updates, e.u.record(e.seq))
		}
		batches = append(batches, b)
	}
	now := time.Now()
	for k, r := range db.keys {
		if now.Sub(time.Unix(0, r.commit.Time)) >= IdempotencyWindow {
			delete(db.keys, k)
			continue
		}
		c := r.commit
		c.Seq = db.seq
		batches = append(batches, journal.Batch{Commit: c})
	}
	if db.jw != nil {
		db.jw.Close()
		db.jw = nil
	}
	size, err := journal.Rewrite(db.fs, JournalPath(db.path), batches)
	if errors.Is(err, atomicfile.ErrDirSync) {
		// The new journal is the one on disk now, and appends must
		// follow its last commit; the caller still hears of the failure.
		db.journalGood = size
	}
	if err != nil {
		return fmt.Errorf("format: journal: %w", err)
	}
	// The journal on disk is the state in memory again: a failed append
	// that broke the old one is behind us.
	db.journalGood = size
	db.broken.Store(nil)
	return nil
}

// PendingUpdates is the number of numbers whose latest update is not yet
// compacted into the mapped file.
func (db *DB) PendingUpdates() int {
	s := db.snap.Load()
	if s == nil {
		return 0
	}
	return s.pending()
}

// Recovery reports what Open found and mended, and how many updates were
// set aside since. It does not wait for an update in progress.
func (db *DB) Recovery() Recovery {
	r := db.recovery // written only by Open and OpenWriter
	r.RemovedTemps = slices.Clone(r.RemovedTemps)
	r.SetAside = int(db.setAsideN.Load())
	return r
}

// JournalBroken returns why the DB refuses updates, or nil when it accepts
// them. It does not wait for an update in progress.
func (db *DB) JournalBroken() error {
	if p := db.broken.Load(); p != nil {
		return *p
	}
	return nil
}

// ErrReplaced reports a compaction given up because the table file was
// replaced while it ran: the new file is left in place, the updates stay
// pending, and Reload followed by Compact folds them into the new file.
var ErrReplaced = errors.New("format: the table file was replaced during compaction")

// Compact writes a new table file with the pending updates folded in,
// renames it over the DB's file, switches lookups to it and rewrites the
// journal to hold only what the new file lacks. Lookups keep answering
// throughout, each from either the old or the new state; updates applied
// during the compaction stay pending. Only one compaction runs at a time.
//
// If the file at the DB's path is replaced while the compaction runs, the
// replacement wins: Compact returns ErrReplaced and leaves it in place.
// (A replacement landing between that check and the rename, a window of
// two system calls, is overwritten.)
func (db *DB) Compact(ctx context.Context) error {
	if db.cfg.readOnly {
		return ErrReadOnly
	}
	db.compactMu.Lock()
	defer db.compactMu.Unlock()
	db.mu.Lock()
	s, ref := db.acquire(0)
	upTo := db.seq
	db.mu.Unlock()
	if s == nil {
		return ErrClosed
	}
	defer s.mp.release(ref)
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
	w, err := writerFromSnapshot(s, folded)
	if err != nil {
		return err
	}
	_, err = w.writeTable(ctx, db.fs, db.path, WriteOptions{BuiltAt: time.Now(), BeforeRename: func() error {
		if db.compactWritten != nil {
			db.compactWritten()
		}
		if now, err := os.Stat(db.path); err != nil || !os.SameFile(start, now) ||
			now.Size() != start.Size() || !now.ModTime().Equal(start.ModTime()) {
			return fmt.Errorf("%w: %s", ErrReplaced, db.path)
		}
		return nil
	}})
	if err != nil {
		return err
	}
	return db.swap(upTo)
}

// Reload switches lookups to the file now at the DB's path — a new table
// renamed over the old one — keeping every pending update on top of it. A
// DB opened with Verify verifies the new file first; a file that fails is
// refused and the current table keeps serving.
//
// What happens to pending updates: each is kept and resolved against the
// new table (an update is newer than any table built before it was applied,
// and compaction later folds it in). An update whose SPID the new table does
// not have cannot be resolved: it is set aside — appended to the
// SetAsidePath file, with its sequence number and the reason, and removed
// from the overlay and the journal — so that lookups never answer a carrier
// the table does not know and compaction never blocks on it; Recovery
// counts it.
//
// A DB opened for reading (Open) reads the table again as its writer
// left it — the file now at its path and the journal's complete batches —
// and writes nothing.
func (db *DB) Reload() error {
	if db.cfg.readOnly {
		return db.reread()
	}
	return db.swap(0)
}

// reread is Reload of a DB opened for reading.
func (db *DB) reread() error {
	if db.cfg.inMemory {
		return ErrInMemory
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	var ns *snapshot
	var err error
	if db.cfg.shared {
		ns, err = db.readShared(&Recovery{}) // Recovery is what Open found
	} else {
		ns, err = openSnapshot(db.path, db.cfg.verify, db.cfg.hugePages)
	}
	if err != nil {
		return err
	}
	cur := db.snap.Load()
	if cur == nil {
		ns.mp.retire()
		return ErrClosed
	}
	db.snap.Store(ns)
	if ns.mp != cur.mp {
		cur.mp.retire()
	}
	return nil
}

// swap maps the file at db.path and makes it current, carrying over the
// pending updates with sequence numbers above upTo (all of them for a
// reload).
func (db *DB) swap(upTo uint64) error {
	if db.cfg.readOnly && upTo > 0 {
		return ErrReadOnly
	}
	ns, err := openSnapshot(db.path, db.cfg.verify && upTo == 0, db.cfg.hugePages)
	if err != nil {
		return err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	cur := db.snap.Load()
	if cur == nil {
		ns.mp.retire()
		return ErrClosed
	}
	var keep, aside []*overlayEntry
	if cur.ov != nil {
		ns.ov = newOverlay()
		for _, e := range cur.ov.entries() {
			if e.seq <= upTo {
				continue
			}
			re, err := ns.resolve(e.u, true)
			if errors.Is(err, errUnknownSPID) {
				aside = append(aside, e)
				continue
			}
			if err != nil {
				ns.mp.retire()
				return err
			}
			re.seq = e.seq
			ns.ov.put(e.u.TN, re)
			keep = append(keep, e)
		}
		if len(keep) == 0 {
			ns.ov = nil
		}
	}
	switch {
	case len(aside) > 0:
		if err := db.setAside(ns, aside, "reload"); err != nil {
			ns.mp.retire()
			return err
		}
	case upTo > 0:
		// The journal now needs only what the new file lacks. Until this
		// rename lands, a crash replays the old journal over the new file,
		// which gives the same state: replay is idempotent.
		if err := db.rewriteJournal(keep); err != nil {
			ns.mp.retire()
			return err
		}
	}
	db.snap.Store(ns)
	if ns.mp != cur.mp {
		cur.mp.retire()
	}
	return nil
}

func sortEntries(es []*overlayEntry) {
	slices.SortFunc(es, func(a, b *overlayEntry) int { return cmp.Compare(a.seq, b.seq) })
}
