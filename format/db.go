package format

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/lnpdb/lnpdb/format/internal/journal"
	"github.com/lnpdb/lnpdb/internal/core/atomicfile"
	"github.com/lnpdb/lnpdb/internal/core/spamtype"
	"github.com/lnpdb/lnpdb/internal/core/vfs"
)

// DB is an open table. It is safe for concurrent use by any number of
// goroutines, and Close may be called while lookups run: a lookup that started
// before Close finishes on the mapping it started with, and the mapping is
// unmapped when the last such lookup returns.
type DB struct {
	path string
	fs   vfs.FS
	cfg  openConfig
	snap atomic.Pointer[snapshot]

	mu          sync.Mutex              // serialises writers: Apply, swaps, Close
	lock        vfs.File                // LockPath's, held while open for updates
	compactMu   sync.Mutex              // one compaction at a time
	jw          *journal.Writer         // open for appending once the first Apply needs it
	seq         uint64                  // last update sequence number
	journalGood int64                   // journal bytes through its last commit
	keys        map[[32]byte]remembered // idempotency keys of the last IdempotencyWindow
	recovery    Recovery                // what Open found; SetAside is setAsideN

	// Read without db.mu, so that status pages never wait for a long
	// Apply.
	broken    atomic.Pointer[error] // set by an append that could not be undone
	setAsideN atomic.Int64

	// compactWritten, when set, runs between writing a compacted file and
	// renaming it into place (tests replace the table there); set and
	// read under compactMu.
	compactWritten func()
}

// Recovery is what opening a table found and mended, for the operator's log.
type Recovery struct {
	// An incomplete last batch of the journal, dropped: it was never
	// acknowledged.
	TornBytes   int64
	TornUpdates int
	// Temporary files of an interrupted build, compaction or journal
	// rewrite, removed.
	RemovedTemps []string
	// Updates set aside since Open (see SetAsidePath).
	SetAside int
}

// snapshot is one state of the table: a mapped file with its decoded
// dictionaries, and the updates applied on top of it. Lookups load the DB's
// current snapshot once and read only from it, so a swap is atomic.
type snapshot struct {
	mp   *mapping
	m    *region // mp.m
	hdr  header
	dir  map[string]dirEntry
	id   string // FileID of the mapped file
	meta meta

	ov *overlay // updates since the file was written; nil when none

	carriers    []Carrier
	carrierIdx  map[string]uint32 // OCN → index, to resolve updates
	rateCenters []RateCenter
	lrnNums     []uint64
	lrns        []string // 11-digit forms of lrnNums
	msgStrings  []string
	pairRaw     []lrnPair   // (sorted LRN index, carrier index, SV Type)
	pairs       []Ported    // pairRaw resolved; ActivatedAt is per record
	msgTupleRaw []msgTuple  // indexes into msgStrings
	msgTuples   []Messaging // msgTupleRaw resolved

	blocks blockIndex
	num    [numSectionCount]numSection // the per-number sections, as numSpecs
	names  nameHeap
	b      []byte // m.Bytes(): the whole file
}

// Option configures Open, OpenWriter and OpenBytes.
type Option func(*openConfig)

type openConfig struct {
	verify    bool
	readOnly  bool
	shared    bool // with readOnly: the journal is replayed all the same
	hugePages bool
	inMemory  bool // OpenBytes: no file, no journal
	fs        vfs.FS
}

// Verify makes Open check every section's checksum and structure (see
// DB.Verify) before it returns, and Reload check every file before it
// swaps it in: a full read of the file, in exchange for the certainty that
// no lookup will meet a damaged byte. A server should use it; its cost is
// about a second per GB of table on a warm page cache.
func Verify() Option { return func(c *openConfig) { c.verify = true } }

// HugePages holds the table in huge pages (2 MiB on x86-64), for
// users who have the RAM: on a table larger than the CPU caches every
// random lookup then misses the TLB far less often. (Without it, Open
// advises its file mapping MADV_HUGEPAGE, and tables are written so that
// a page cache with large folios (Linux 6.18 on ext4 does; older kernels
// and file systems may not) holds them in 2 MiB folios, mapped as huge
// pages; with it they are on huge pages wherever transparent huge pages
// work.) Open copies the file into anonymous memory advised MADV_HUGEPAGE,
// so the table costs its whole size in memory the kernel cannot reclaim
// (and twice that while a Reload or Compact swaps in a new file), on top
// of the page cache's copy of the file, which the kernel may drop; a file
// that already sits on a tmpfs is mapped as it is and advised the same
// way (a tmpfs mounted with huge=always gives huge pages without the
// copy). It takes effect where transparent huge pages are enabled for
// madvise or always (/sys/kernel/mm/transparent_hugepage/enabled); set to
// never, the copy is made on small pages, and on a kernel built without
// them Open fails, naming madvise. Reloads, compaction and live updates
// work the same; Info reports how the table is held.
func HugePages() Option { return func(c *openConfig) { c.hugePages = true } }

// IgnoreJournal makes Open read the table file alone: the journal of live
// updates beside it is not read. For inspecting and verifying a file (a
// damaged journal is not a damaged table). OpenWriter refuses it.
func IgnoreJournal() Option {
	return func(c *openConfig) { c.readOnly, c.shared = true, false }
}

// WithVerify is Verify.
//
// Deprecated: use Verify.
func WithVerify() Option { return Verify() }

// WithHugePages is HugePages.
//
// Deprecated: use HugePages.
func WithHugePages() Option { return HugePages() }

// ReadOnly is IgnoreJournal: Open reads the table file alone.
//
// Deprecated: Open is read-only; use IgnoreJournal to leave the journal
// out, or nothing to read the table as its writer left it.
func ReadOnly() Option { return IgnoreJournal() }

// Shared is Open's default: it reads a table beside its writer.
//
// Deprecated: Open does what Shared did; drop it.
func Shared() Option {
	return func(c *openConfig) { c.readOnly, c.shared = true, true }
}

// ErrLocked reports a table that another process has open for updates
// (OpenWriter): a table has one writer at a time, as its journal has one
// end. Errors wrapping it say which lock file is held.
var ErrLocked = errors.New("format: table locked by its writer")

// LockPath is the lock file of the table at path: held, as an advisory
// lock, by the one DB that has the table open for updates (OpenWriter), so
// that no second writer — another server, lnpdb apply, compact or journal
// recover — appends to its journal or replaces it meanwhile, which would
// lose updates the first had acknowledged. It is empty and never removed.
// Open neither takes nor creates it.
func LockPath(path string) string { return path + ".lock" }

// ErrReadOnly reports an update or compaction of a table opened for
// reading (Open, OpenBytes), or an option OpenWriter cannot honour.
var ErrReadOnly = errors.New("format: table opened read-only")

// Open maps the table file at path for reading. It reads the header, the
// section directory and the small dictionaries, and checks their
// checksums; its cost does not grow with the number of numbers in the
// table. Damage in the large sections is found by Verify (or the Verify
// option); lookups on a damaged file return errors, never panic.
//
// Open writes nothing and takes no lock: it works beside a process that
// has the table open for updates (OpenWriter, as lnpdb serve does). It
// sees the table as that writer left it: the file, plus the updates of its
// journal (JournalPath) as far as the last complete batch; an incomplete
// last batch, temporary files and updates the table cannot resolve are
// left as they are, for the writer. Updates applied after Open are seen
// after Reload. Apply, ApplyBatch and Compact return ErrReadOnly.
func Open(path string, opts ...Option) (*DB, error) {
	cfg := openConfig{fs: vfs.Default, readOnly: true, shared: true}
	for _, o := range opts {
		o(&cfg)
	}
	db := &DB{path: path, fs: cfg.fs, cfg: cfg, keys: map[[32]byte]remembered{}}
	if !cfg.shared {
		s, err := openSnapshot(path, cfg.verify, cfg.hugePages)
		if err != nil {
			return nil, err
		}
		db.snap.Store(s)
		return db, nil
	}
	return db.openShared()
}

// ErrInMemory reports a Reload of a table opened from memory (OpenBytes),
// which has no file to read again.
var ErrInMemory = errors.New("format: table opened from memory")

// OpenBytes opens a table held in memory — embedded with //go:embed, or
// received whole — as Open opens a file: the same checks of the header,
// the directory and the dictionaries, and with Verify every checksum and
// record. A damaged or truncated table is an error, never a panic.
//
// b is read in place, not copied: it must not change while the DB is
// open, and it stays referenced until Close. A table has no journal in
// memory: Apply, ApplyBatch and Compact return ErrReadOnly, and Reload
// ErrInMemory. HugePages is ignored; the lookups cost what they cost on a
// mapped file, but for a buffer that is not 64-byte aligned, where a
// bucket may straddle two cache lines.
func OpenBytes(b []byte, opts ...Option) (*DB, error) {
	cfg := openConfig{fs: vfs.Default}
	for _, o := range opts {
		o(&cfg)
	}
	cfg.readOnly, cfg.shared, cfg.hugePages, cfg.inMemory = true, false, false, true
	s, err := loadSnapshot(newRegion(b, nil, placementBytes))
	if err == nil && cfg.verify {
		err = s.verify()
	}
	if err != nil {
		return nil, err
	}
	db := &DB{fs: cfg.fs, cfg: cfg, keys: map[[32]byte]remembered{}}
	db.snap.Store(s)
	return db, nil
}

// OpenWriter opens the table file at path for updates: as Open, and it
// also takes the table's lock (LockPath; a second writer gets ErrLocked),
// replays the table's journal (refusing one damaged anywhere but in an
// incomplete last batch, ErrJournalCorrupt), cutting a torn last batch,
// and removes temporary files that an interrupted build, compaction or
// journal rewrite of this table left beside it; Recovery reports both.
// Apply, ApplyBatch, Reload and Compact then keep the table current.
func OpenWriter(path string, opts ...Option) (*DB, error) {
	cfg := openConfig{fs: vfs.Default}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.readOnly {
		return nil, fmt.Errorf("%w: OpenWriter of %s with an option that reads only (IgnoreJournal, ReadOnly); use Open", ErrReadOnly, path)
	}
	db := &DB{path: path, fs: cfg.fs, cfg: cfg, keys: map[[32]byte]remembered{}}
	// The lock before the mapping: a writer that held it until just
	// now may have compacted, replacing the file and then trimming
	// the journal to what the new file lacks; that journal replayed on
	// the file mapped before the rename would lose what was folded in.
	if _, err := os.Stat(path); err != nil {
		return nil, err // no lock file for a table that is not there
	}
	var err error
	if db.lock, err = claim(db.fs, path); err != nil {
		return nil, err
	}
	s, err := openSnapshot(path, cfg.verify, cfg.hugePages)
	if err != nil {
		db.unlock()
		return nil, err
	}
	for _, p := range []string{path, JournalPath(path)} {
		removed, _ := atomicfile.RemoveStale(db.fs, p)
		db.recovery.RemovedTemps = append(db.recovery.RemovedTemps, removed...)
	}
	if err := db.replay(s, &db.recovery); err != nil {
		s.mp.retire()
		db.unlock()
		return nil, err
	}
	db.snap.Store(s)
	return db, nil
}

// openShared is Open's reading of the table as its writer left it.
func (db *DB) openShared() (*DB, error) {
	s, err := db.readShared(&db.recovery)
	if err != nil {
		return nil, err
	}
	db.snap.Store(s)
	return db, nil
}

// readShared maps the file and replays its journal without writing. The
// writer may replace the file and then trim the journal (a compaction)
// while it is read: a journal read after the file it belongs to was
// replaced is replayed on the new file, by reading again, so that nothing
// the compaction folded in is missed.
func (db *DB) readShared(rec *Recovery) (*snapshot, error) {
	for attempt := 0; ; attempt++ {
		before, err := os.Stat(db.path)
		if err != nil {
			return nil, err
		}
		s, err := openSnapshot(db.path, db.cfg.verify, db.cfg.hugePages)
		if err != nil {
			return nil, err
		}
		db.keys, db.seq, *rec = map[[32]byte]remembered{}, 0, Recovery{}
		if err := db.replay(s, rec); err != nil {
			s.mp.retire()
			return nil, err
		}
		after, err := os.Stat(db.path)
		if err == nil && os.SameFile(before, after) {
			return s, nil
		}
		s.mp.retire()
		if attempt == 9 {
			return nil, fmt.Errorf("%s: replaced while it was being opened, ten times in a row", db.path)
		}
	}
}

// unlock releases the writer's lock, if db holds it.
func (db *DB) unlock() {
	if db.lock != nil {
		db.lock.Close()
		db.lock = nil
	}
}

// claim takes the writer's lock of the table at path (LockPath).
func claim(fs vfs.FS, path string) (vfs.File, error) {
	f, err := atomicfile.Claim(fs, LockPath(path))
	if errors.Is(err, atomicfile.ErrClaimed) {
		return nil, fmt.Errorf("%w: %s is open for updates in another process, which holds %s", ErrLocked, path, LockPath(path))
	}
	return f, err
}

func openSnapshot(path string, verify, huge bool) (*snapshot, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	m, err := openRegion(path, huge)
	if err != nil {
		return nil, err
	}
	s, err := loadSnapshot(m)
	if err == nil && verify {
		err = s.verify()
	}
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func loadSnapshot(m *region) (*snapshot, error) {
	h, dir, head, err := readHead(m, int64(m.Len()))
	if err != nil {
		return nil, err
	}
	s := &snapshot{mp: &mapping{m: m}, m: m, b: m.Bytes(), hdr: h, dir: dir, id: headID(head)}
	if err := s.loadDictionaries(); err != nil {
		return nil, err
	}
	if err := loadBlocks(m, dir[secBlocks], &s.blocks); err != nil {
		return nil, err
	}
	for i := range numSpecs {
		spec := &numSpecs[i]
		if err := loadNumSection(m, dir[spec.id], spec, &s.num[i]); err != nil {
			return nil, err
		}
	}
	if err := loadNameHeap(m, dir[secCNAMNames], &s.names); err != nil {
		return nil, err
	}
	return s, nil
}

// section returns a section's stored bytes after checking its checksum, and
// decompresses it when it is zstd-encoded.
func (s *snapshot) section(id string) ([]byte, error) {
	e := s.dir[id]
	b := make([]byte, e.length)
	if _, err := s.m.ReadAt(b, int64(e.offset)); err != nil {
		return nil, corrupt(id, "%v", err)
	}
	if got := xxhash.Sum64(b); got != e.checksum {
		return nil, corrupt(id, "checksum mismatch (stored %016x, computed %016x)", e.checksum, got)
	}
	if e.encoding == encZstd {
		raw, err := decompress(b)
		if err != nil {
			return nil, corrupt(id, "zstd: %v", err)
		}
		return raw, nil
	}
	return b, nil
}

func (s *snapshot) loadDictionaries() error {
	var err error
	load := func(id string, decode func([]byte) error) {
		if err != nil {
			return
		}
		var b []byte
		if b, err = s.section(id); err != nil {
			return
		}
		if derr := decode(b); derr != nil {
			err = corrupt(id, "%v", derr)
		}
	}
	load(secMeta, func(b []byte) error { return json.Unmarshal(b, &s.meta) })
	load(secCarriers, func(b []byte) (e error) {
		s.carriers, e = decodeCarriers(b)
		s.carrierIdx = make(map[string]uint32, len(s.carriers))
		for i, c := range s.carriers {
			s.carrierIdx[c.OCN] = uint32(i)
		}
		return
	})
	load(secRateCenters, func(b []byte) (e error) { s.rateCenters, e = decodeRateCenters(b); return })
	load(secLRNs, func(b []byte) (e error) { s.lrnNums, s.lrns, e = decodeLRNs(b); return })
	load(secMsgStrings, func(b []byte) (e error) { s.msgStrings, e = decodeStrings(b); return })
	load(secPairs, func(b []byte) (e error) {
		if s.pairRaw, e = decodePairs(b, len(s.lrns), len(s.carriers)); e != nil {
			return e
		}
		s.pairs = make([]Ported, len(s.pairRaw))
		for i, p := range s.pairRaw {
			s.pairs[i] = Ported{OK: true, LRN: s.lrns[p.lrn], Carrier: &s.carriers[p.carrier], SVType: p.sv}
		}
		return nil
	})
	load(secMsgTuples, func(b []byte) (e error) {
		if s.msgTupleRaw, e = decodeMsgTuples(b, len(s.msgStrings)); e != nil {
			return e
		}
		s.msgTuples = make([]Messaging, len(s.msgTupleRaw))
		for i, t := range s.msgTupleRaw {
			m := s.msgStrings
			s.msgTuples[i] = Messaging{OK: true, Provider: m[t.provider], Enabled: t.enabled, Country: m[t.country], CountryCode: m[t.code], ReferenceID: m[t.ref]}
		}
		return nil
	})
	return err
}

// Close releases the table. Lookups after Close return ErrClosed; lookups in
// flight finish normally, and the last of them unmaps the file. Close is
// idempotent.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if s := db.snap.Swap(nil); s != nil {
		s.mp.retire()
	}
	var err error
	if db.jw != nil {
		err = db.jw.Close()
		db.jw = nil
	}
	// Released after the journal is closed: the next writer's Open
	// replays all of it.
	db.unlock()
	return err
}

// Path is the file the DB was opened from; "" for OpenBytes.
func (db *DB) Path() string { return db.path }

// The spam types a trust record can carry.
//
// Deprecated: the trust vocabulary is package trust's: use trust.SpamNone,
// trust.SpamSpam, trust.SpamScam, trust.SpamRobocall and
// trust.SpamTelemarketer.
const (
	SpamNone         = spamtype.None
	SpamSpam         = spamtype.Spam
	SpamScam         = spamtype.Scam
	SpamRobocall     = spamtype.Robocall
	SpamTelemarketer = spamtype.Telemarketer
)

// SpamTypes lists the spam types.
//
// Deprecated: use trust.SpamTypes.
var SpamTypes = spamTypes

// spamTypes are the spam types a TRUST record stores as an index here, so
// the order is part of the file format; trust.SpamTypes exports them.
var spamTypes = spamtype.Types

// Get reads everything the table holds for the 10-digit national number tn
// (e.g. 2025550123): the block data always (unless f includes
// BlockUnlessPorted and the number is ported), and the per-number sections
// that f selects, all from one snapshot. A number outside the NANP range reads
// as unassigned. Get allocates nothing unless f includes FieldCNAM and the
// number has a caller name. The only errors are ErrClosed and *CorruptError.
func (db *DB) Get(tn uint64, f Fields) (r Record, err error) {
	s, c, ok := db.enter(tn) // acquire, inlined
	if !ok {
		if s, c = db.reenter(s, c, tn); s == nil {
			return Record{}, ErrClosed
		}
	}
	err = s.get(tn, f, &r)
	if c.drop() {
		s.mp.lastReleased()
	}
	return r, err
}

// GetInto is Get writing into *r, which it overwrites whole: a caller that
// keeps a Record (or a slice of them) saves Get's copy of the result. On
// an error *r is zero.
func (db *DB) GetInto(tn uint64, f Fields, r *Record) error {
	s, c, ok := db.enter(tn) // acquire, inlined
	if !ok {
		if s, c = db.reenter(s, c, tn); s == nil {
			*r = Record{}
			return ErrClosed
		}
	}
	err := s.get(tn, f, r)
	if c.drop() {
		s.mp.lastReleased()
	}
	if err != nil {
		*r = Record{}
	}
	return err
}

// MessagingRoute is a Route with the number's messaging record: what an
// LRN lookup with messaging reads (CONTRACT §2 and §4).
type MessagingRoute struct {
	Route
	// Messaging is the number's messaging record, nil when it has none.
	// It points into the table's dictionary, which every number with the
	// same record shares: read it, never write to it.
	Messaging *Messaging
}

// GetMessagingRoute is GetRoute with the messaging record too (Get's
// FieldPorted|FieldMessaging, with BlockUnlessPorted or without), into a
// MessagingRoute, which it overwrites whole.
//
// It is GetRoute's one frame with a second bucket: both buckets are aimed
// and touched, the number's BLOCKS entries are located while they are on
// their way, then the buckets are searched, and only then is the block
// row decoded and resolved. Each part of r is written once. The rule that
// finds the BLOCKS entries is codeIndex and thouIndex, inlined here as in
// GetRoute; the steps around it are GetRoute's again rather than one body
// for both, whose messaging section optional cost a plain lookup 16
// instructions (of 586), and called as functions they cost this lookup 38.
func (db *DB) GetMessagingRoute(tn uint64, blockUnlessPorted bool, r *MessagingRoute) error {
	s, c, ok := db.enter(tn) // acquire, inlined
	if !ok {
		if s, c = db.reenter(s, c, tn); s == nil {
			*r = MessagingRoute{}
			return ErrClosed
		}
	}
	if !inNANP(tn) {
		return s.failMessagingRoute(c, r, nil)
	}
	npa, rem := tn/10000000, tn%10000000
	ps, ms := &s.num[numPorted], &s.num[numMessaging]
	var pq, mq probe
	x := lineKey(rem)
	ps.aimKey(npa, x, &pq)
	ms.aimKey(npa, x, &mq)
	sink := touch(s.b, &pq) ^ touch(s.b, &mq)
	// The number's BLOCKS entries, located as GetRoute locates them.
	var (
		code *codeEntry
		thou *thouEntry
	)
	bl := &s.blocks
	nxx := rem / 10000
	if i, ok := bl.codeIndex(npa, nxx); ok {
		if i >= uint64(len(bl.codeEntries)) {
			return s.failMessagingRoute(c, r, errCorruptRecord)
		}
		code = &bl.codeEntries[i]
		if i, ok := thouIndex(code, rem, nxx); ok {
			if i >= uint64(len(bl.thouEntries)) {
				return s.failMessagingRoute(c, r, errCorruptRecord)
			}
			thou = &bl.thouEntries[i]
		}
	}
	keep(sink)
	if err := ps.find(s.b, &pq); err != nil {
		return s.failMessagingRoute(c, r, err)
	}
	if err := ms.find(s.b, &mq); err != nil {
		return s.failMessagingRoute(c, r, err)
	}
	switch {
	case s.ov != nil && s.portedFromOverlay(tn, &r.Ported):
	case pq.hit:
		if err := s.portedFrom(ps.field(pq.w, 0), ps.field(pq.w, 1), &r.Ported); err != nil {
			return s.failMessagingRoute(c, r, err)
		}
	default:
		r.Ported = Ported{}
	}
	var m *Messaging
	if mq.hit {
		t := ms.field(mq.w, 0)
		if t >= uint64(len(s.msgTuples)) {
			return s.failMessagingRoute(c, r, errCorruptRecord)
		}
		m = &s.msgTuples[t]
	}
	r.Messaging = m
	if code == nil || blockUnlessPorted && r.Ported.OK {
		r.Block = Block{}
	} else if err := s.blockFrom(code, thou, &r.Block); err != nil {
		return s.failMessagingRoute(c, r, err)
	}
	if c.drop() {
		s.mp.lastReleased()
	}
	return nil
}

// failMessagingRoute is GetMessagingRoute's return on an error, or for a
// number outside the NANP: it clears r, which may be filled in part,
// releases the reference on shard c, and returns err. Not inlined, as it
// is rare.
//
//go:noinline
func (s *snapshot) failMessagingRoute(c *refShard, r *MessagingRoute, err error) error {
	*r = MessagingRoute{}
	s.mp.release(c)
	return err
}

// get sets r, which it overwrites whole, each part once (a clear first
// would write every pointer twice), for tn; on an error r may be filled in
// part. It takes the lookup in stages so that the memory accesses of the
// sections f selects overlap: first every section's bucket is computed
// and touched (independent loads, each of which only the number decided),
// then the raw block row is read (small and mostly in cache) while those
// lines are on their way, and only then are the buckets searched and
// decoded, and the block row resolved against the dictionaries last, not
// at all when BlockUnlessPorted leaves it out. Its loops visit only the
// sections f selects.
func (s *snapshot) get(tn uint64, f Fields, r *Record) error {
	if !inNANP(tn) {
		*r = Record{Number: tn}
		return nil
	}
	r.Number = tn
	npa, rem := tn/10000000, tn%10000000
	sel := f & FieldAll
	var q [numSectionCount]probe
	var sink byte
	x := lineKey(rem)
	for m := sel; m != 0; m &= m - 1 {
		i := bits.TrailingZeros8(uint8(m))
		s.num[i].aimKey(npa, x, &q[i])
		sink ^= touch(s.b, &q[i])
	}
	row, thousands, assigned, err := s.blockRow(npa, rem)
	if err != nil {
		return err
	}
	keep(sink)
	for m := sel; m != 0; m &= m - 1 {
		i := bits.TrailingZeros8(uint8(m))
		if err := s.num[i].find(s.b, &q[i]); err != nil {
			return err
		}
	}
	// Each part once: the file's record, the pending updates' ported
	// record, or zero for a number without one or a section not read.
	switch {
	case sel&FieldPorted == 0:
		r.Ported = Ported{}
	case s.ov != nil && s.portedFromOverlay(tn, &r.Ported):
	case q[numPorted].hit:
		ps := &s.num[numPorted]
		if err := s.portedFrom(ps.field(q[numPorted].w, 0), ps.field(q[numPorted].w, 1), &r.Ported); err != nil {
			return err
		}
	default:
		r.Ported = Ported{}
	}
	if !q[numMessaging].hit {
		r.Messaging = Messaging{}
	}
	if !q[numCNAM].hit {
		r.CNAM = CNAM{}
	}
	if !q[numTrust].hit {
		r.Trust = Trust{}
	}
	for m := sel &^ FieldPorted; m != 0; m &= m - 1 {
		i := bits.TrailingZeros8(uint8(m))
		if q[i].hit {
			var v fieldValues
			s.num[i].fields(q[i].w, &v)
			if err := s.decodeSection(i, &v, r); err != nil {
				return err
			}
		}
	}
	if !assigned || f&(FieldPorted|BlockUnlessPorted) == FieldPorted|BlockUnlessPorted && r.Ported.OK {
		r.Block = Block{}
		return nil
	}
	if err := s.resolveBlock(row, thousands, &r.Block); err != nil {
		return err
	}
	if row.lrn == 0 {
		r.Block.LRN = "" // resolveBlock writes it only for a row with one
	}
	return nil
}

// decodeProbe fills r's part of section i from its found probe q, with the
// pending updates' ported record in place of the file's.
func (s *snapshot) decodeProbe(tn uint64, i int, q *probe, r *Record) error {
	if i == numPorted {
		return s.portedOf(tn, q, &r.Ported)
	}
	if !q.hit {
		return nil
	}
	var v fieldValues
	s.num[i].fields(q.w, &v)
	return s.decodeSection(i, &v, r)
}

// portedFrom decodes a PORTED record's fields into p.
func (s *snapshot) portedFrom(pair, at uint64, p *Ported) error {
	if pair >= uint64(len(s.pairs)) {
		return errCorruptRecord
	}
	*p = s.pairs[pair]
	p.ActivatedAt = int64(at)
	return nil
}

// Info describes an open table.
type Info struct {
	Path string
	// Placement is how the table's bytes are held: "file mapping", or with
	// WithHugePages "anonymous huge-page copy" or "huge-page tmpfs mapping".
	Placement string
	// ID is the file's identity, as FileID reports it.
	ID       string
	Version  int
	Size     int64
	BuiltAt  time.Time
	Counts   Counts
	Sections []SectionInfo
}

// Counts are the table's row counts by kind.
type Counts struct {
	Carriers        int `json:"carriers"`
	RateCenters     int `json:"rate_centers"`
	LRNs            int `json:"lrns"`
	Codes           int `json:"codes"`
	ThousandsBlocks int `json:"thousands_blocks"`
	Ported          int `json:"ported"`
	Messaging       int `json:"messaging"`
	CNAM            int `json:"cnam"`
	Trust           int `json:"trust"`
}

// SectionInfo describes one section of the file.
type SectionInfo struct {
	ID       string
	Encoding string // "raw" or "zstd"
	Offset   uint64
	Length   uint64
	Checksum uint64
}

// meta is the META section: what the builder knew that the other sections
// do not say.
type meta struct {
	Codes           int `json:"codes"`
	ThousandsBlocks int `json:"thousands_blocks"`
}

// HugePageBytes reports how many of the table's bytes are mapped by 2 MiB
// pages at this moment. With the default Open these are the page cache's
// large folios that the mapping uses, which a cache under memory pressure
// can lose (a lookup then pays a page-table walk besides its cache miss:
// docs/ARCHITECTURE.md measures half as much time again); with
// WithHugePages, the part of the copy or tmpfs file the kernel gave huge
// pages. It reads /proc/self/smaps: it is for monitoring, not for a
// lookup's path. It returns -1 where it cannot tell: a system other than
// Linux, a table read into memory, a closed DB.
func (db *DB) HugePageBytes() int64 {
	s, ref := db.acquire(0)
	if s == nil {
		return -1
	}
	defer s.mp.release(ref)
	return s.m.hugePageBytes()
}

// Info returns the table's description; after Close, an Info that holds
// only Path.
func (db *DB) Info() Info {
	s := db.snap.Load()
	if s == nil {
		return Info{Path: db.path}
	}
	info := Info{
		Path:      db.path,
		Placement: s.m.Placement(),
		ID:        s.id,
		Version:   version,
		Size:      int64(s.hdr.fileSize),
		BuiltAt:   time.Unix(s.hdr.builtAt, 0).UTC(),
		Counts: Counts{
			Carriers:        len(s.carriers),
			RateCenters:     len(s.rateCenters),
			LRNs:            len(s.lrns),
			Codes:           s.meta.Codes,
			ThousandsBlocks: s.meta.ThousandsBlocks,
			Ported:          int(s.num[numPorted].keys),
			Messaging:       int(s.num[numMessaging].keys),
			CNAM:            int(s.num[numCNAM].keys),
			Trust:           int(s.num[numTrust].keys),
		},
	}
	for _, id := range sectionOrder {
		e := s.dir[id]
		enc := "raw"
		if e.encoding == encZstd {
			enc = "zstd"
		}
		info.Sections = append(info.Sections, SectionInfo{ID: id, Encoding: enc, Offset: e.offset, Length: e.length, Checksum: e.checksum})
	}
	return info
}
