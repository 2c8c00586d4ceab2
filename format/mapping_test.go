package format

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// replaceByRename puts a copy of the file at path back over it, as an
// operator replaces a table.
func replaceByRename(t *testing.T, path string) {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	tmp := path + ".incoming"
	require.NoError(t, os.WriteFile(tmp, b, 0o644))
	require.NoError(t, os.Rename(tmp, path))
}

// A mapping the DB moved away from stays mapped while a reader holds it and
// is unmapped by the last one to let go; with no reader, at once.
func TestMappingReleasedByLastReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.lnpdb")
	w := NewWriter()
	c, _ := w.AddCarrier(Carrier{OCN: "2002", Name: "Capital Wireless", Type: "WIRELESS"})
	rc := w.AddRateCenter(RateCenter{State: "DC", Name: "WASHINGTON", TimeZone: "America/New_York", UTCOffset: "-0500"})
	require.True(t, w.AddBlock(202, 555, -1, BlockRow{Carrier: c, RateCenter: rc}))
	require.NoError(t, w.AddPorted(2025550123, 1, 2025569000, c, 1552575766, SVTypeWireless))
	_, err := w.WriteFile(context.Background(), path, WriteOptions{})
	require.NoError(t, err)
	db, err := OpenWriter(path)
	require.NoError(t, err)

	s, ref := db.acquire(2025550123)
	require.NotNil(t, s)
	held := s.mp
	replaceByRename(t, path)
	require.NoError(t, db.Reload())
	assert.False(t, held.unmapped(), "a reader still holds the old mapping")
	var r Record
	require.NoError(t, s.get(2025550123, FieldPorted, &r), "and can still read it")
	assert.Equal(t, "12025569000", r.Ported.LRN)
	s2, again := db.acquire(2025550123)
	assert.NotSame(t, held, s2.mp, "new readers get the new mapping")
	s2.mp.release(again)
	held.release(ref)
	assert.True(t, held.unmapped(), "the last reader unmaps it")

	idle := db.snap.Load().mp
	replaceByRename(t, path)
	require.NoError(t, db.Reload())
	assert.True(t, idle.unmapped(), "no reader: unmapped by the swap")

	cur := db.snap.Load().mp
	require.NoError(t, db.Close())
	assert.True(t, cur.unmapped(), "Close unmaps")
	_, err = db.Get(2025550123, FieldPorted)
	assert.ErrorIs(t, err, ErrClosed)
	require.NoError(t, db.Close(), "Close is idempotent")
}

// A lookup whose add met a mapping retired since its load of the snapshot
// drops that reference, unmapping the old file when it was the last, and
// reads the current one; after Close it gets none.
func TestReenterAfterRetire(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.lnpdb")
	w := NewWriter()
	c, _ := w.AddCarrier(Carrier{OCN: "2002", Name: "Capital Wireless", Type: "WIRELESS"})
	rc := w.AddRateCenter(RateCenter{State: "DC", Name: "WASHINGTON", TimeZone: "America/New_York", UTCOffset: "-0500"})
	require.True(t, w.AddBlock(202, 555, -1, BlockRow{Carrier: c, RateCenter: rc}))
	require.NoError(t, w.AddPorted(2025550123, 1, 2025569000, c, 1552575766, SVTypeNone))
	_, err := w.WriteFile(context.Background(), path, WriteOptions{})
	require.NoError(t, err)
	db, err := OpenWriter(path)
	require.NoError(t, err)

	s, ref, ok := db.enter(2025550123)
	require.True(t, ok)
	replaceByRename(t, path)
	require.NoError(t, db.Reload())
	require.True(t, s.mp.retired.Load())
	require.False(t, s.mp.unmapped(), "held")

	s2, ref2 := db.reenter(s, ref, 2025550123)
	require.NotNil(t, s2)
	assert.True(t, s.mp.unmapped(), "the dropped reference was the last")
	assert.Same(t, db.snap.Load(), s2, "the current snapshot")
	var r Route
	require.NoError(t, db.GetRoute(2025550123, false, &r))
	assert.Equal(t, "12025569000", r.Ported.LRN)
	s2.mp.release(ref2)

	s3, ref3, ok := db.enter(2025550123)
	require.True(t, ok)
	require.NoError(t, db.Close())
	s4, _ := db.reenter(s3, ref3, 2025550123)
	assert.Nil(t, s4, "closed")
	assert.True(t, s3.mp.unmapped())
	require.ErrorIs(t, db.GetRoute(2025550123, false, &r), ErrClosed)
}

// Each shard's counter of a mapping's reference count is on a cache line
// of its own, and the fields every lookup reads (the region, retired) are
// on none of those lines: a lookup on one core then never writes a line
// that a lookup on another shard writes or reads. The shards are 64 bytes
// apart, so this holds wherever the heap places the mapping: at 522 bytes
// with pointers it gets an 8-byte allocation header, and the shards start
// 8 bytes into their lines.
func TestMappingShardsOwnTheirLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.lnpdb")
	w := NewWriter()
	_, err := w.WriteFile(context.Background(), path, WriteOptions{})
	require.NoError(t, err)
	line := func(p unsafe.Pointer) uintptr { return uintptr(p) / 64 }
	for range 16 { // several mappings, at several places in their span
		db, err := OpenWriter(path)
		require.NoError(t, err)
		s, ref := db.acquire(2025550123)
		require.NotNil(t, s)
		mp := s.mp
		owner := map[uintptr]string{}
		claim := func(p unsafe.Pointer, size uintptr, name string) {
			for _, l := range []uintptr{line(p), line(unsafe.Add(p, size-1))} {
				if o, taken := owner[l]; taken && o != name {
					t.Errorf("%s shares a line with %s", name, o)
				}
				owner[l] = name
			}
		}
		for i := range mp.refs {
			claim(unsafe.Pointer(&mp.refs[i].n), unsafe.Sizeof(mp.refs[i].n), fmt.Sprintf("shard %d", i))
		}
		claim(unsafe.Pointer(&mp.m), unsafe.Sizeof(mp.m), "the read fields")
		claim(unsafe.Pointer(&mp.retired), unsafe.Sizeof(mp.retired), "the read fields")
		mp.release(ref)
		require.NoError(t, db.Close())
	}
}
