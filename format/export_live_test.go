package format

import "github.com/lnpdb/lnpdb/internal/core/vfs"

// SetCompactWritten sets the hook db's Compact runs between writing the
// compacted file and renaming it into place; nil removes it.
func (db *DB) SetCompactWritten(f func()) {
	db.compactMu.Lock()
	defer db.compactMu.Unlock()
	db.compactWritten = f
}

// WithFS makes Open, and every write of the DB it opens, use fs.
func WithFS(fs vfs.FS) Option { return func(c *openConfig) { c.fs = fs } }

// Unmapped returns a function reporting whether the DB's current mapping
// has been unmapped.
func (db *DB) Unmapped() func() bool { return db.snap.Load().mp.unmapped }

// BlockOffsets returns where in the file tn's BLOCKS index word and code
// entry are (0 when it has none), and how many code entries and thousands
// groups the section holds.
func (db *DB) BlockOffsets(tn uint64) (word, entry int64, nentry, nthou uint32) {
	s := db.snap.Load()
	bi := &s.blocks
	t := bi.npa[tn/10000000]
	if t == noCodeTable {
		return 0, 0, bi.nentry, bi.nthou
	}
	nxx := tn % 10000000 / 10000
	word = bi.word(t, nxx)
	if idx, ok := bi.codeIndex(tn/10000000, nxx); ok {
		entry = bi.entry(uint32(idx))
	}
	return word, entry, bi.nentry, bi.nthou
}

// SetFS makes w create its files (spill files, the table) through fs.
func (w *Writer) SetFS(fs vfs.FS) { w.setFS(fs) }

// StoredSpamTypes are the spam types in the order a TRUST record stores
// them.
var StoredSpamTypes = spamTypes
