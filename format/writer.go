package format

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/lnpdb/lnpdb/internal/core/atomicfile"
	"github.com/lnpdb/lnpdb/internal/core/nanp"
	"github.com/lnpdb/lnpdb/internal/core/vfs"
)

// Writer assembles a table and writes it. A source reader (package
// format/build) and compaction feed it the same way: carriers and rate
// centers first, then blocks, then per-number rows, then WriteFile. It
// interns what records share into the file's dictionaries, so a caller
// passes values, not indexes, except for the carrier and rate center
// indexes that AddCarrier and AddRateCenter return.
//
// Per-number rows are held in memory, or past SetMemory's budget in
// temporary spill files, until WriteFile; the file's bytes do not depend on
// whether or where rows spilled. A Writer is not safe for concurrent use,
// except that AddPorted may run on one goroutine while AddMessaging,
// AddCNAM and AddTrust run on another: the two sides share no state once
// the blocks are added. Close releases spill files; WriteFile does too.
type Writer struct {
	carriers   []Carrier
	carrierIdx map[string]uint32
	rcs        []RateCenter

	codes     map[uint32]*codeRows // npa*1000+nxx
	codeState *[1000 * 1000]uint8  // 0 vacant, 1 code row, 2 thousands rows only
	thouRow   []uint64             // bitmap over npa*10000+nxx*10+x: a thousands row exists

	// The ported side: LRNs (first-seen order, sorted when written) and
	// (LRN, carrier, SV Type) routes.
	lrns  dict[uint64]
	pairs dict[lrnPair]
	// The other side: messaging strings and tuples, caller names.
	msgStrs   dict[string]
	msgTuples dict[msgTuple]
	names     dict[string]

	ported    partitioned[portedRow]
	messaging partitioned[messagingRow]
	cnam      partitioned[cnamRow]
	trust     partitioned[trustRow]

	// Ported rows and the other sides' rows each have a budget, so that
	// the two sides never touch each other's (spill.go).
	portedSpill, otherSpill budget

	fs vfs.FS // every file the Writer creates: spill files and the table
}

// NewWriter returns an empty Writer that holds every row in memory.
func NewWriter() *Writer {
	w := &Writer{
		carrierIdx: map[string]uint32{},
		codes:      map[uint32]*codeRows{},
		codeState:  new([1000 * 1000]uint8),
		thouRow:    make([]uint64, 1000*10000/64),
	}
	w.msgStrs.intern("") // index 0 is the empty string
	w.ported.codec, w.ported.held = portedCodec, &w.portedSpill.held
	w.messaging.codec, w.messaging.held = messagingCodec, &w.otherSpill.held
	w.cnam.codec, w.cnam.held = cnamCodec, &w.otherSpill.held
	w.trust.codec, w.trust.held = trustCodec, &w.otherSpill.held
	w.setFS(vfs.Default)
	w.portedSpill.all = []spiller{&w.ported}
	w.otherSpill.all = []spiller{&w.messaging, &w.cnam, &w.trust}
	return w
}

// SetMemory bounds the bytes of per-number rows held in memory: ported
// rows to ported bytes, messaging, CNAM and trust rows together to other
// bytes. Past a bound the side's largest collection goes to a spill file
// in dir. Zero (the default) never spills. Call it before adding rows.
func (w *Writer) SetMemory(ported, other int64, dir string) {
	w.portedSpill.limit, w.portedSpill.dir = ported, dir
	w.otherSpill.limit, w.otherSpill.dir = other, dir
}

// Spilled is the number of per-number rows that went through spill files.
func (w *Writer) Spilled() int { return w.portedSpill.spilled + w.otherSpill.spilled }

// Close removes the Writer's spill files. WriteFile calls it.
func (w *Writer) Close() {
	w.portedSpill.close()
	w.otherSpill.close()
}

// AddCarrier adds a carrier and returns its index. If a carrier with the
// same OCN is already there, it returns that one's index and false.
func (w *Writer) AddCarrier(c Carrier) (uint32, bool) {
	if i, dup := w.carrierIdx[c.OCN]; dup {
		return i, false
	}
	i := uint32(len(w.carriers))
	w.carrierIdx[c.OCN] = i
	w.carriers = append(w.carriers, c)
	return i, true
}

// Carrier returns the index of the carrier with the given OCN.
func (w *Writer) Carrier(ocn string) (uint32, bool) {
	i, ok := w.carrierIdx[ocn]
	return i, ok
}

// AddRateCenter adds a rate center and returns its index.
func (w *Writer) AddRateCenter(rc RateCenter) uint32 {
	w.rcs = append(w.rcs, rc)
	return uint32(len(w.rcs) - 1)
}

// BlockRow is one row of block data: a whole NPA-NXX code or one of its
// thousands-blocks.
type BlockRow struct {
	Carrier     uint32 // index from AddCarrier
	RateCenter  uint32 // index from AddRateCenter
	LRN         uint64 // the block's LRN, 10 digits; 0: none
	ActivatedAt int64  // unix seconds, 0 if unknown
}

// AddBlock adds the row of code npa-nxx (x < 0) or of its thousands-block
// x (0 to 9). It returns false, adding nothing, when that code or block
// already has a row.
func (w *Writer) AddBlock(npa, nxx, x int, r BlockRow) bool {
	key := uint32(npa*1000 + nxx)
	cr := w.codes[key]
	if cr == nil {
		cr = &codeRows{}
		w.codes[key] = cr
	}
	row := blockRow{carrier: r.Carrier + 1, rc: r.RateCenter, activated: uint32(r.ActivatedAt)}
	if r.LRN != 0 {
		row.lrn = w.lrns.intern(r.LRN) + 1
	}
	if x < 0 {
		if cr.hasCode {
			return false
		}
		cr.code, cr.hasCode = row, true
		w.codeState[key] = 1
		return true
	}
	if cr.thousands[x].carrier != 0 {
		return false
	}
	cr.thousands[x], cr.split = row, true
	if w.codeState[key] == 0 {
		w.codeState[key] = 2
	}
	bit := key*10 + uint32(x)
	w.thouRow[bit/64] |= 1 << (bit % 64)
	return true
}

// Assigned reports whether the 10-digit number tn lies in a code or
// thousands-block added so far: per-number data for a vacant number could
// never be answered and points at a bad source.
func (w *Writer) Assigned(tn uint64) bool {
	code := uint32(tn / 10000)
	if code >= uint32(len(w.codeState)) {
		return false
	}
	switch w.codeState[code] {
	case 1:
		return true
	case 2:
		bit := code*10 + uint32(tn/1000%10)
		return w.thouRow[bit/64]&(1<<(bit%64)) != 0
	}
	return false
}

// AddPorted adds tn's ported record: its LRN, the index of its current
// carrier, its activation and its SV Type (at most MaxSVType). line is the
// source line, which a duplicate reported by WriteFile names; the first of
// two rows for a number wins. The error is a spill file's.
func (w *Writer) AddPorted(tn uint64, line int, lrn uint64, carrier uint32, activatedAt int64, sv SVType) error {
	if sv > MaxSVType {
		return fmt.Errorf("format: AddPorted %d: SV Type %d out of range", tn, sv)
	}
	w.ported.add(nanp.Number(tn), line, portedRow{pair: w.pairs.intern(lrnPair{w.lrns.intern(lrn), carrier, sv}), act: uint32(activatedAt)})
	return w.portedSpill.check()
}

// AddMessaging adds tn's messaging record (m.OK is not looked at).
func (w *Writer) AddMessaging(tn uint64, line int, m Messaging) error {
	w.messaging.add(nanp.Number(tn), line, messagingRow{tuple: w.msgTuples.intern(msgTuple{
		provider: w.msgStrs.intern(m.Provider), enabled: m.Enabled,
		country: w.msgStrs.intern(m.Country), code: w.msgStrs.intern(m.CountryCode), ref: w.msgStrs.intern(m.ReferenceID),
	})})
	return w.otherSpill.check()
}

// AddCNAM adds tn's caller name.
func (w *Writer) AddCNAM(tn uint64, line int, name string) error {
	w.cnam.add(nanp.Number(tn), line, cnamRow{name: w.names.intern(name)})
	return w.otherSpill.check()
}

// ErrSpamType reports a trust record whose spam type is not one that the
// file format stores (trust.SpamTypes).
var ErrSpamType = errors.New("format: unknown spam type")

// AddTrust adds tn's trust record (t.OK is not looked at). Its SpamType
// must be one of trust.SpamTypes ("" is not): ErrSpamType otherwise.
func (w *Writer) AddTrust(tn uint64, line int, t Trust) error {
	st := slices.Index(spamTypes[:], t.SpamType)
	if st < 0 {
		return fmt.Errorf("%w %q", ErrSpamType, t.SpamType)
	}
	w.trust.add(nanp.Number(tn), line, trustRow{spam: uint8(st), complaints: t.Complaints, first: uint32(t.FirstReported), last: uint32(t.LastReported)})
	return w.otherSpill.check()
}

// WriteOptions configure WriteFile; the zero value writes a table built
// now that refuses duplicate numbers.
type WriteOptions struct {
	// BuiltAt is recorded in the header; zero means now.
	BuiltAt time.Time
	// Duplicate, when set, is called for the second and later rows of a
	// number in a per-number section (f names it: FieldPorted, …), with
	// their source lines; the first row is kept. A non-nil error fails the
	// write. When nil, a duplicate fails the write.
	Duplicate func(f Fields, tn uint64, line, first int) error
	// BeforeRename, when set, runs once the new file is written and
	// verified, and may still refuse to put it in place.
	BeforeRename func() error
}

// WriteFile writes the table to a temporary file beside path, verifies it
// and renames it over path, so that a failed write leaves no partial
// output and an existing file untouched; leftovers of a killed earlier
// write of path are removed first. It returns the table's counts. The
// Writer is spent afterwards.
func (w *Writer) WriteFile(ctx context.Context, path string, opt WriteOptions) (Counts, error) {
	// Leftovers of a write of path that was killed: no one else writes
	// them (their lock is gone), and each can be as large as the table.
	atomicfile.RemoveStale(w.fs, path)
	return w.writeTable(ctx, w.fs, path, opt)
}

// setFS makes the Writer create its files through fs.
func (w *Writer) setFS(fs vfs.FS) {
	w.fs, w.portedSpill.fs, w.otherSpill.fs = fs, fs, fs
}

// writeTable writes, verifies and renames the table into place through
// fsys (atomicfile).
func (w *Writer) writeTable(ctx context.Context, fsys vfs.FS, path string, opt WriteOptions) (Counts, error) {
	defer w.Close()
	var counts Counts
	err := atomicfile.Write(fsys, path, func(f vfs.File) error {
		return w.write(ctx, f, opt)
	}, atomicfile.Options{
		Check: func(tmp string) error {
			db, err := Open(tmp, Verify(), IgnoreJournal())
			if err != nil {
				return fmt.Errorf("format: the table just written fails verification: %w", err)
			}
			counts = db.Info().Counts
			return db.Close()
		},
		BeforeRename: opt.BeforeRename,
	})
	return counts, err
}

// dict interns values into a dictionary: each distinct value gets the next
// index, in first-seen order.
type dict[K comparable] struct {
	list []K
	idx  map[K]uint32
}

func (d *dict[K]) intern(v K) uint32 {
	if i, ok := d.idx[v]; ok {
		return i
	}
	if d.idx == nil {
		d.idx = map[K]uint32{}
	}
	i := uint32(len(d.list))
	d.idx[v] = i
	d.list = append(d.list, v)
	return i
}

// reset makes the dictionary hold list, in that order.
func (d *dict[K]) reset(list []K) {
	d.list = list
	d.idx = make(map[K]uint32, len(list))
	for i, v := range list {
		d.idx[v] = uint32(i)
	}
}

// sortedLRNs returns the LRN dictionary in ascending order and the map from
// first-seen index to sorted index.
func (w *Writer) sortedLRNs() ([]uint64, []uint32) {
	lrns := w.lrns.list
	order := make([]uint32, len(lrns))
	for i := range order {
		order[i] = uint32(i)
	}
	sort.Slice(order, func(i, j int) bool { return lrns[order[i]] < lrns[order[j]] })
	sorted := make([]uint64, len(lrns))
	remap := make([]uint32, len(lrns))
	for newIdx, old := range order {
		sorted[newIdx] = lrns[old]
		remap[old] = uint32(newIdx)
	}
	return sorted, remap
}

type codeRows struct {
	code      blockRow
	hasCode   bool
	thousands [10]blockRow
	split     bool
}

// A ported record stores one index into a dictionary of routes — (LRN,
// SPID, SV Type), called pairs for their first two — not one index for
// each: an LRN belongs to a switch and a provider's numbers have few SV
// Types, so the routes are few and the index is about half as wide. Likewise a messaging record stores
// one index into a dictionary of whole messaging tuples.
type lrnPair struct {
	lrn, carrier uint32
	sv           SVType
}
type portedRow struct{ pair, act uint32 }
type msgTuple struct {
	provider, country, code, ref uint32
	enabled                      bool
}
type messagingRow struct{ tuple uint32 }
type cnamRow struct{ name uint32 }
type trustRow struct {
	spam        uint8
	complaints  uint32
	first, last uint32
}
