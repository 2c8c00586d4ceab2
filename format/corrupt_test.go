package format_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// openAndVerify opens the bytes as a table and verifies it, returning the
// first error. Lookups on whatever opens must not panic, and a batch must
// read what single lookups read: an error when one of them fails, else the
// same records.
func openAndVerify(t testing.TB, dir string, b []byte) error {
	p := filepath.Join(dir, "x.lnpdb")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	db, err := format.OpenWriter(p)
	if err != nil {
		_, berr := format.OpenBytes(bytes.Clone(b))
		assert.Error(t, berr, "OpenBytes of a table Open refuses")
		return err
	}
	defer db.Close()
	tns := []uint64{2025550123, 2025550124, 2025553001, 2025554001, 3122001234, 6023001111, 6023017001, 9999999999}
	want := make([]format.Record, len(tns))
	var getErr error
	for i, tn := range tns {
		if want[i], err = db.Get(tn, format.FieldAll); err != nil {
			getErr = err
		}
	}
	out := make([]format.Record, len(tns))
	if err := db.GetMany(tns, format.FieldAll, out); err != nil || getErr != nil {
		assert.Equal(t, getErr != nil, err != nil, "Get: %v; GetMany: %v", getErr, err)
	} else {
		assert.Equal(t, want, out, "GetMany")
	}
	// GetRoute reads what Get of the ported record reads, one number or a
	// batch at a time, and fails where it fails.
	routes := make([]format.Route, len(tns))
	var routeErr error
	for i, tn := range tns {
		rec, gerr := db.Get(tn, format.FieldPorted)
		rerr := db.GetRoute(tn, false, &routes[i])
		if assert.Equal(t, gerr != nil, rerr != nil, "%d: Get: %v; GetRoute: %v", tn, gerr, rerr) && rerr == nil {
			assert.Equal(t, format.Route{Block: rec.Block, Ported: rec.Ported}, routes[i], "GetRoute %d", tn)
		} else if rerr != nil {
			routeErr = rerr
		}
	}
	// GetMessagingRoute reads what Get of the ported and messaging
	// records reads, and fails where it fails.
	for _, tn := range tns {
		rec, gerr := db.Get(tn, format.FieldPorted|format.FieldMessaging)
		var mr format.MessagingRoute
		merr := db.GetMessagingRoute(tn, false, &mr)
		if assert.Equal(t, gerr != nil, merr != nil, "%d: Get: %v; GetMessagingRoute: %v", tn, gerr, merr) && merr == nil {
			assert.Equal(t, messagingRoute(rec), mr, "GetMessagingRoute %d", tn)
		}
	}
	batch := make([]format.Route, len(tns))
	if err := db.GetRoutes(tns, false, batch); err != nil || routeErr != nil {
		assert.Equal(t, routeErr != nil, err != nil, "GetRoute: %v; GetRoutes: %v", routeErr, err)
	} else {
		assert.Equal(t, routes, batch, "GetRoutes")
	}
	verr := db.Verify()
	// OpenBytes of the same bytes opens, answers and verifies alike.
	mem, err := format.OpenBytes(bytes.Clone(b))
	if !assert.NoError(t, err, "OpenBytes of a table Open opens") {
		return verr
	}
	defer mem.Close()
	for _, tn := range tns {
		rec, ferr := db.Get(tn, format.FieldAll)
		got, berr := mem.Get(tn, format.FieldAll)
		if assert.Equal(t, ferr == nil, berr == nil, "OpenBytes: Get %d: %v, %v", tn, ferr, berr) && berr == nil {
			assert.Equal(t, rec, got, "OpenBytes: Get %d", tn)
		}
	}
	assert.Equal(t, verr == nil, mem.Verify() == nil, "OpenBytes: Verify")
	return verr
}

func miniTable(t testing.TB) []byte {
	b, err := os.ReadFile(testdb.Build(t, mini))
	require.NoError(t, err)
	return b
}

func TestTruncatedFiles(t *testing.T) {
	good := miniTable(t)
	dir := t.TempDir()
	for _, n := range []int{0, 1, 8, 63, 64, 100, 511, len(good) / 2, len(good) - 1} {
		err := openAndVerify(t, dir, good[:n])
		require.Error(t, err, "truncated to %d bytes", n)
		assert.True(t, errors.Is(err, format.ErrCorrupt) || errors.Is(err, format.ErrFormat), "%d: %v", n, err)
	}
	require.Error(t, openAndVerify(t, dir, append(append([]byte{}, good...), 0)), "an extended file")
}

func TestWrongMagicAndVersion(t *testing.T) {
	good := miniTable(t)
	dir := t.TempDir()
	b := append([]byte{}, good...)
	copy(b, "SQLite f")
	require.ErrorIs(t, openAndVerify(t, dir, b), format.ErrFormat)
	// Version 1 stored keys in 24 bits, version 2 in perfect-hash records,
	// version 3 had no SV Type, version 4 searched a bucket entry by entry;
	// a newer version is unknown.
	for _, v := range []byte{1, 2, 3, 4, 99} {
		b = append([]byte{}, good...)
		b[8] = v
		err := openAndVerify(t, dir, b)
		require.ErrorIs(t, err, format.ErrFormat)
		assert.Contains(t, err.Error(), fmt.Sprintf("version %d", v))
		if v < 5 {
			assert.Contains(t, err.Error(), "rebuild the table")
		}
	}
}

// TestFlippedBytes flips bytes all over a table — every byte of the header
// and directory, every 61st byte, and random ones — and requires Open or
// Verify to fail each time, naming a section.
func TestFlippedBytes(t *testing.T) {
	t.Parallel()
	good := miniTable(t)
	dir := t.TempDir()
	offsets := map[int]bool{}
	for i := range min(1024, len(good)) {
		offsets[i] = true
	}
	step := 61
	if testing.Short() || raceEnabled {
		step = 997
	}
	for i := 0; i < len(good); i += step {
		offsets[i] = true
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		offsets[r.IntN(len(good))] = true
	}
	b := append([]byte{}, good...)
	for off := range offsets {
		b[off] ^= 1 << r.IntN(8)
		err := openAndVerify(t, dir, b)
		b[off] = good[off]
		require.Error(t, err, "flip at offset %d went unnoticed", off)
		var ce *format.CorruptError
		if !errors.As(err, &ce) {
			require.ErrorIs(t, err, format.ErrFormat, "offset %d: %v", off, err)
		}
	}
}

// FuzzFlip flips one byte of a valid table anywhere: Open or Verify must
// fail, and nothing may panic.
func FuzzFlip(f *testing.F) {
	good := miniTable(f)
	f.Add(uint32(0), byte(1))
	f.Add(uint32(70), byte(0x80))
	f.Add(uint32(len(good)/2), byte(0xff))
	f.Add(uint32(len(good)-1), byte(2))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, off uint32, x byte) {
		if x == 0 {
			return
		}
		b := append([]byte{}, good...)
		b[int(off)%len(b)] ^= x
		require.Error(t, openAndVerify(t, dir, b))
	})
}

// FuzzOpen opens arbitrary bytes: an error is fine, a panic is not.
func FuzzOpen(f *testing.F) {
	good := miniTable(f)
	f.Add(good)
	f.Add(good[:64])
	f.Add([]byte("LNPDB\r\n\x1a"))
	f.Add([]byte{})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		openAndVerify(t, dir, b)
	})
}

// TestFileID: an open table's Info.ID is the FileID of its file; another
// table has another; a damaged header or directory has none.
func TestFileID(t *testing.T) {
	good := miniTable(t)
	id, err := format.FileID(bytes.NewReader(good), int64(len(good)))
	require.NoError(t, err)
	assert.Regexp(t, `^[0-9a-f]{16}$`, id)

	path := testdb.Build(t, mini)
	db, err := format.OpenWriter(path)
	require.NoError(t, err)
	defer db.Close()
	assert.Equal(t, id, db.Info().ID)

	sample, err := os.ReadFile(testdb.Build(t, lnpdb.Sample()))
	require.NoError(t, err)
	other, err := format.FileID(bytes.NewReader(sample), int64(len(sample)))
	require.NoError(t, err)
	assert.NotEqual(t, id, other, "two tables, two identities")

	for _, off := range []int{0, 12, 24, 70, 100} { // magic, section count, size, directory
		bad := bytes.Clone(good)
		bad[off] ^= 0x40
		_, err := format.FileID(bytes.NewReader(bad), int64(len(bad)))
		assert.Error(t, err, "a flipped bit at %d", off)
	}
	_, err = format.FileID(bytes.NewReader(good), int64(len(good))+1)
	assert.Error(t, err, "a file longer than its header says")
}

// TestDamagedBlockIndex damages the BLOCKS references a lookup follows (an
// index word naming a code entry the section does not have, a code entry
// naming a thousands group it does not have) in ways the file's structure
// alone does not show: Get and GetMany of the number must both report a
// corrupt table, and Verify too.
func TestDamagedBlockIndex(t *testing.T) {
	good := miniTable(t)
	const tn = 2025553001 // in 202-555, a code split into thousands-blocks
	db, err := format.OpenWriter(testdb.Build(t, mini))
	require.NoError(t, err)
	word, entry, nentry, nthou := db.BlockOffsets(tn)
	require.NoError(t, db.Close())
	require.NotZero(t, entry)

	cases := map[string]func(b []byte){
		"entry index past the entries":    func(b []byte) { binary.LittleEndian.PutUint32(b[word+8:], nentry) },
		"thousands group past the groups": func(b []byte) { binary.LittleEndian.PutUint32(b[entry+16:], nthou+1) },
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			b := append([]byte{}, good...)
			damage(b)
			p := filepath.Join(t.TempDir(), "x.lnpdb")
			require.NoError(t, os.WriteFile(p, b, 0o644))
			db, err := format.OpenWriter(p)
			require.NoError(t, err, "Open reads no record")
			defer db.Close()
			for _, f := range []format.Fields{format.FieldPorted, format.FieldAll} {
				_, err = db.Get(tn, f)
				assert.ErrorIs(t, err, format.ErrCorrupt, "Get")
				out := make([]format.Record, 2)
				assert.ErrorIs(t, db.GetMany([]uint64{2025550123, tn}, f, out), format.ErrCorrupt, "GetMany")
			}
			rec := format.Record{Number: 1, CNAM: format.CNAM{OK: true, Name: "stale"}}
			assert.ErrorIs(t, db.GetInto(tn, format.FieldAll, &rec), format.ErrCorrupt, "GetInto")
			assert.Zero(t, rec, "GetInto clears the record on an error")
			var rt format.Route
			assert.ErrorIs(t, db.GetRoute(tn, false, &rt), format.ErrCorrupt, "GetRoute")
			assert.ErrorIs(t, db.GetRoutes([]uint64{2025550123, tn}, false, make([]format.Route, 2)), format.ErrCorrupt, "GetRoutes")
			assert.ErrorIs(t, db.Verify(), format.ErrCorrupt)
		})
	}
}

// TestDamagedRowLeftOut damages a dictionary index (the rate center) in
// the code row of 312-200, which holds a ported number: every read that
// resolves the row reports a corrupt table, and so does Verify, while the
// reads that BlockUnlessPorted tells to leave a ported number's row out —
// Get, GetRoute, GetMany and GetRoutes alike — answer the ported record
// and leave the block zero. A number of the code that is not ported still
// reads the row, and reports it.
func TestDamagedRowLeftOut(t *testing.T) {
	good := miniTable(t)
	const ported, notPorted = 3122001234, 3122000001
	db, err := format.OpenWriter(testdb.Build(t, mini))
	require.NoError(t, err)
	_, entry, _, _ := db.BlockOffsets(ported)
	require.NoError(t, db.Close())
	require.NotZero(t, entry)

	b := append([]byte{}, good...)
	binary.LittleEndian.PutUint32(b[entry+4:], 0xFFFFFFF0) // rate center index
	p := filepath.Join(t.TempDir(), "x.lnpdb")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	db, err = format.OpenWriter(p)
	require.NoError(t, err, "Open reads no record")
	defer db.Close()
	assert.ErrorIs(t, db.Verify(), format.ErrCorrupt)

	lazy := format.FieldPorted | format.BlockUnlessPorted
	for _, f := range []format.Fields{format.FieldPorted, format.FieldAll} {
		_, err := db.Get(ported, f)
		assert.ErrorIs(t, err, format.ErrCorrupt, "Get(%v) resolves the row", f)
		assert.ErrorIs(t, db.GetMany([]uint64{ported}, f, make([]format.Record, 1)), format.ErrCorrupt, "GetMany(%v)", f)
	}
	var rt format.Route
	assert.ErrorIs(t, db.GetRoute(ported, false, &rt), format.ErrCorrupt)
	assert.ErrorIs(t, db.GetRoutes([]uint64{ported}, false, make([]format.Route, 1)), format.ErrCorrupt)

	rec, err := db.Get(ported, lazy)
	require.NoError(t, err, "Get with BlockUnlessPorted leaves the row out")
	assert.True(t, rec.Ported.OK)
	assert.Equal(t, "13122009999", rec.Ported.LRN)
	assert.Equal(t, format.Block{}, rec.Block)
	recs := make([]format.Record, 1)
	require.NoError(t, db.GetMany([]uint64{ported}, lazy, recs))
	assert.Equal(t, rec, recs[0])
	require.NoError(t, db.GetRoute(ported, true, &rt))
	assert.Equal(t, format.Route{Ported: rec.Ported}, rt)
	routes := make([]format.Route, 1)
	require.NoError(t, db.GetRoutes([]uint64{ported}, true, routes))
	assert.Equal(t, rt, routes[0])

	_, err = db.Get(notPorted, lazy)
	assert.ErrorIs(t, err, format.ErrCorrupt, "a number that is not ported reads its row")
	assert.ErrorIs(t, db.GetRoute(notPorted, true, &rt), format.ErrCorrupt)
	assert.ErrorIs(t, db.GetRoutes([]uint64{notPorted}, true, make([]format.Route, 1)), format.ErrCorrupt)
}
