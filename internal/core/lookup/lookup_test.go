package lookup

import (
	"errors"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

func TestError(t *testing.T) {
	assert.Same(t, lnpdb.ErrClosed, Error("lrn", format.ErrClosed))
	err := Error("lrn", &format.CorruptError{Section: "PORTED", Reason: "bad record"})
	assert.ErrorIs(t, err, format.ErrCorrupt)
	assert.False(t, errors.Is(err, lnpdb.ErrNotFound) || errors.Is(err, lnpdb.ErrInvalidNumber))
	assert.Equal(t, "lrn: format: corrupt table: section PORTED: bad record", err.Error())
}

func TestGet(t *testing.T) {
	db := testdb.Open(t, lnpdb.Sample())
	var rec format.Record

	phone, err := Get(db, "12025550123", format.FieldPorted, "x", &rec)
	require.NoError(t, err)
	assert.Equal(t, "12025550123", phone)
	assert.True(t, rec.Ported.OK)
	assert.Equal(t, "1506", rec.CurrentCarrier().OCN, "the ported record's SPID")

	phone, err = Get(db, "(202) 555-0123", format.FieldPorted, "x", &rec)
	require.NoError(t, err)
	assert.Equal(t, "12025550123", phone, "a non-canonical input is echoed canonical")

	_, err = Get(db, "12021", format.FieldPorted, "x", &rec)
	assert.ErrorIs(t, err, lnpdb.ErrInvalidNumber)

	var vacant, pooled uint64
	for tn := uint64(2014810000); tn < 9999999999 && (vacant == 0 || pooled == 0); tn += 10000 {
		r, err := db.Get(tn, format.FieldPorted)
		require.NoError(t, err)
		switch {
		case !r.Block.Assigned && !r.Ported.OK:
			vacant = tn
		case r.Block.Assigned && !r.Ported.OK && pooled == 0:
			pooled = tn
			assert.Same(t, r.Block.Carrier, r.CurrentCarrier(), "not ported: the block row's OCN")
		}
	}
	require.NotZero(t, vacant)
	require.NotZero(t, pooled)
	_, err = Get(db, "1"+strconv.FormatUint(vacant, 10), format.FieldPorted, "x", &rec)
	assert.ErrorIs(t, err, lnpdb.ErrNotFound)

	require.NoError(t, db.Close())
	_, err = Get(db, "12025550123", format.FieldPorted, "x", &rec)
	assert.Same(t, lnpdb.ErrClosed, err)
}

func TestName(t *testing.T) {
	type kind uint8
	names := []string{1: "one", 2: "two"}
	assert.Equal(t, "one", Name("kind", names, kind(1)))
	assert.Equal(t, "two", Name("kind", names, kind(2)))
	assert.Equal(t, "kind(0)", Name("kind", names, kind(0)), "a value without a name")
	assert.Equal(t, "kind(200)", Name("kind", names, kind(200)), "a value past the names")
}
