package format_test

import (
	"testing"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/stretchr/testify/require"
)

// TestGetManyFieldsChange runs GetMany with every selection of fields, one
// call after another, up and down, and GetRoutes between them: the
// batches the calls share must carry nothing of one selection into the
// next (a probe of a section the next call does not select, a count of
// kinds, a thousands entry).
func TestGetManyFieldsChange(t *testing.T) {
	db := testdb.Sample(t)
	o := loadOracle(t, lnpdb.Sample())
	var tns []uint64
	for tn := range o.ported {
		if tns = append(tns, tn, tn+1); len(tns) >= 200 {
			break
		}
	}
	for k := range o.codes {
		if tns = append(tns, k*10000+7); len(tns) >= 300 {
			break
		}
	}
	tns = append(tns, 1, 9999999999, 2000000000)
	const all = format.FieldAll | format.BlockUnlessPorted
	var fs []format.Fields
	for f := range all + 1 {
		fs = append(fs, f&all)
	}
	for f := all; f > 0; f-- {
		fs = append(fs, (f-1)&all)
	}
	out := make([]format.Record, len(tns))
	routes := make([]format.Route, len(tns))
	for _, f := range fs {
		require.NoError(t, db.GetMany(tns, f, out))
		for i, tn := range tns {
			want, err := db.Get(tn, f)
			require.NoError(t, err)
			require.Equal(t, want, out[i], "GetMany(%d, %b)", tn, f)
		}
		lazy := f&format.FieldPorted == 0
		require.NoError(t, db.GetRoutes(tns, lazy, routes))
		for i, tn := range tns {
			var want format.Route
			require.NoError(t, db.GetRoute(tn, lazy, &want))
			require.Equal(t, want, routes[i], "GetRoutes(%d, %v)", tn, lazy)
		}
	}
}
