package format_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/format"
)

// TestGetRouteAgreesWithGet: GetRoute, and GetRoutes for all the numbers
// at once, answer what Get answers for the ported record and the block row,
// for numbers ported in the file, numbers next to them, vacant and
// out-of-range numbers, before and after updates that add, change and
// delete ports, with the block asked for always and only unless ported;
// and they allocate nothing.
func TestGetRouteAgreesWithGet(t *testing.T) {
	db, _ := openMini(t)
	tns := []uint64{0, 1999999999, 2000000000, 9999999999, 6023010001, 6023017001,
		2025550199, 2025550123, 3122001234, 2025553001}
	for tn := uint64(2025550000); tn < 2025560000; tn += 7 {
		tns = append(tns, tn)
	}
	// Every field of the Route set, as a reused one's may be: GetRoute
	// overwrites each.
	stale := format.Route{
		Ported: format.Ported{OK: true, LRN: "stale", Carrier: &format.Carrier{}, ActivatedAt: 1, SVType: 1},
		Block: format.Block{Assigned: true, Thousands: true, Carrier: &format.Carrier{}, RateCenter: &format.RateCenter{},
			LRN: "stale", ActivatedAt: 1},
	}
	check := func(state string) {
		t.Helper()
		for _, blockUnlessPorted := range []bool{false, true} {
			f := format.FieldPorted
			if blockUnlessPorted {
				f |= format.BlockUnlessPorted
			}
			var rt format.Route
			for _, tn := range tns {
				want, err := db.Get(tn, f)
				require.NoError(t, err)
				rt = stale
				require.NoError(t, db.GetRoute(tn, blockUnlessPorted, &rt))
				require.Equal(t, format.Route{Block: want.Block, Ported: want.Ported}, rt, "%s: %d, block unless ported %v", state, tn, blockUnlessPorted)
				require.Same(t, want.CurrentCarrier(), rt.CurrentCarrier())
			}
			out := make([]format.Route, len(tns)+1)
			for i := range out {
				out[i].Ported.LRN = "stale"
			}
			require.NoError(t, db.GetRoutes(tns, blockUnlessPorted, out))
			for i, tn := range tns {
				require.NoError(t, db.GetRoute(tn, blockUnlessPorted, &rt))
				require.Equal(t, rt, out[i], "%s: GetRoutes %d, block unless ported %v", state, tn, blockUnlessPorted)
			}
			assert.Equal(t, "stale", out[len(tns)].Ported.LRN, "past the numbers, out is left alone")
			require.Error(t, db.GetRoutes(tns, blockUnlessPorted, out[:len(tns)-1]), "out too short")
		}
	}
	check("file")
	var rt format.Route
	require.NoError(t, db.GetRoute(2025550123, false, &rt))
	require.True(t, rt.Ported.OK, "the test must see ported numbers")
	require.NoError(t, db.Apply([]format.Update{
		{Action: format.Add, TN: 2025550199, LRN: 2025569000, SPID: "3003", ActivatedAt: 1700000000},
		{Action: format.Modify, TN: 2025550123, LRN: 3122009999, SPID: "4004"},
		{Action: format.Delete, TN: 3122001234},
	}))
	check("updated")
	require.NoError(t, db.GetRoute(2025550199, true, &rt))
	assert.Equal(t, "12025569000", rt.Ported.LRN, "an added port")

	allocs := testing.AllocsPerRun(100, func() {
		for _, tn := range tns[:10] {
			if err := db.GetRoute(tn, false, &rt); err != nil {
				t.Fatal(err)
			}
		}
	})
	assert.Zero(t, allocs, "GetRoute")
	routes := make([]format.Route, len(tns))
	allocs = testing.AllocsPerRun(100, func() {
		if err := db.GetRoutes(tns, true, routes); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs, "GetRoutes")

	require.NoError(t, db.Close())
	rt.Ported.OK = true
	assert.ErrorIs(t, db.GetRoute(2025550123, false, &rt), format.ErrClosed)
	assert.Equal(t, format.Route{}, rt, "cleared on error")
	assert.ErrorIs(t, db.GetRoutes(tns, false, routes), format.ErrClosed)
}
