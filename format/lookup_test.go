package format_test

import (
	"testing"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lookupNumbers are ported numbers, their neighbours (mostly not ported, in
// assigned codes), numbers in vacant codes and numbers outside the NANP
// range: every branch of the lookup path.
func lookupNumbers(t *testing.T) []uint64 {
	o := loadOracle(t, lnpdb.Sample())
	var tns []uint64
	for tn := range o.ported {
		tns = append(tns, tn, tn+1, tn-1000)
	}
	for k := range o.codes {
		tns = append(tns, k*10000+7)
	}
	return append(tns, 1, 1999999999, 2000000000, 9999999999, 10000000000, 5550000000)
}

// TestGetFieldsAgree checks, for every combination of fields, that Get,
// GetInto and GetMany (whose batches stage the reads differently) give the
// same records, and that BlockUnlessPorted only leaves out the block data of
// ported numbers.
func TestGetFieldsAgree(t *testing.T) {
	t.Parallel()
	db := testdb.Sample(t)
	tns := lookupNumbers(t)
	out := make([]format.Record, len(tns))
	for f := format.Fields(0); f < 1<<5; f++ {
		require.NoError(t, db.GetMany(tns, f, out))
		var into format.Record
		into.CNAM.Name = "stale" // GetInto overwrites the whole record
		for i, tn := range tns {
			want, err := db.Get(tn, f)
			require.NoError(t, err)
			require.Equal(t, want, out[i], "GetMany %d fields %05b", tn, f)
			require.NoError(t, db.GetInto(tn, f, &into))
			require.Equal(t, want, into, "GetInto %d fields %05b", tn, f)
			if f&format.BlockUnlessPorted == 0 {
				continue
			}
			full, err := db.Get(tn, f&^format.BlockUnlessPorted)
			require.NoError(t, err)
			if f&format.FieldPorted != 0 && full.Ported.OK {
				assert.Zero(t, want.Block, "%d: ported, block left out", tn)
				full.Block = format.Block{}
			}
			require.Equal(t, full, want, "%d fields %05b", tn, f)
		}
	}
}

func TestGetIntoAllocs(t *testing.T) {
	db := testdb.Sample(t)
	tns := lookupNumbers(t)
	var r format.Record
	for _, f := range []format.Fields{format.FieldPorted | format.BlockUnlessPorted, format.FieldPorted | format.FieldMessaging | format.FieldTrust} {
		allocs := testing.AllocsPerRun(20, func() {
			for _, tn := range tns {
				if err := db.GetInto(tn, f, &r); err != nil {
					t.Fatal(err)
				}
			}
		})
		assert.Zero(t, allocs, "GetInto fields %05b", f)
		out := make([]format.Record, len(tns))
		allocs = testing.AllocsPerRun(20, func() {
			if err := db.GetMany(tns, f, out); err != nil {
				t.Fatal(err)
			}
		})
		assert.Zero(t, allocs, "GetMany fields %05b", f)
	}
}

func TestGetIntoClosed(t *testing.T) {
	db := testdb.Sample(t)
	require.NoError(t, db.Close())
	r := format.Record{Number: 1}
	require.ErrorIs(t, db.GetInto(2025550123, format.FieldAll, &r), format.ErrClosed)
	assert.Zero(t, r)
}
