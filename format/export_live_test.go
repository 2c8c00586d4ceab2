package format

import "github.com/lnpdb/lnpdb/format/internal/vfs"

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
