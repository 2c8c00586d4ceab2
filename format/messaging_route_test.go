package format_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/format"
)

// messagingRoute is the MessagingRoute that a Record read with at least
// FieldPorted|FieldMessaging holds.
func messagingRoute(rec format.Record) format.MessagingRoute {
	mr := format.MessagingRoute{Route: format.Route{Block: rec.Block, Ported: rec.Ported}}
	if rec.Messaging.OK {
		mr.Messaging = &rec.Messaging
	}
	return mr
}

// TestGetMessagingRouteAgreesWithGet: GetMessagingRoute answers what Get
// with FieldPorted|FieldMessaging answers (the messaging record by
// pointer, nil for none), for numbers with and without ported and
// messaging records, vacant and out-of-range numbers, before and after
// updates, with the block asked for always and only unless ported, into a
// MessagingRoute whose every field is stale; and it allocates nothing.
func TestGetMessagingRouteAgreesWithGet(t *testing.T) {
	db, _ := openMini(t)
	tns := []uint64{0, 1999999999, 2000000000, 9999999999, 6023010001, 6023017001,
		2025550199, 2025550123, 3122001234, 2025553001}
	for tn := uint64(2025550000); tn < 2025560000; tn += 7 {
		tns = append(tns, tn)
	}
	stale := format.MessagingRoute{
		Route: format.Route{
			Ported: format.Ported{OK: true, LRN: "stale", Carrier: &format.Carrier{}, ActivatedAt: 1, SVType: 1},
			Block: format.Block{Assigned: true, Thousands: true, Carrier: &format.Carrier{}, RateCenter: &format.RateCenter{},
				LRN: "stale", ActivatedAt: 1},
		},
		Messaging: &format.Messaging{OK: true, Provider: "stale"},
	}
	var withMessaging int
	check := func(state string) {
		t.Helper()
		for _, blockUnlessPorted := range []bool{false, true} {
			f := format.FieldPorted | format.FieldMessaging
			if blockUnlessPorted {
				f |= format.BlockUnlessPorted
			}
			for _, tn := range tns {
				rec, err := db.Get(tn, f)
				require.NoError(t, err)
				mr := stale
				require.NoError(t, db.GetMessagingRoute(tn, blockUnlessPorted, &mr))
				require.Equal(t, messagingRoute(rec), mr, "%s: %d, block unless ported %v", state, tn, blockUnlessPorted)
				require.Same(t, rec.CurrentCarrier(), mr.CurrentCarrier())
				if mr.Messaging != nil {
					withMessaging++
				}
			}
		}
	}
	check("file")
	require.NotZero(t, withMessaging, "the test must see messaging records")
	require.NoError(t, db.Apply([]format.Update{
		{Action: format.Add, TN: 2025550199, LRN: 2025569000, SPID: "3003", ActivatedAt: 1700000000},
		{Action: format.Modify, TN: 2025550123, LRN: 3122009999, SPID: "4004"},
		{Action: format.Delete, TN: 3122001234},
	}))
	check("updated")

	var mr format.MessagingRoute
	allocs := testing.AllocsPerRun(100, func() {
		for _, tn := range tns[:10] {
			if err := db.GetMessagingRoute(tn, false, &mr); err != nil {
				t.Fatal(err)
			}
		}
	})
	assert.Zero(t, allocs, "GetMessagingRoute")

	require.NoError(t, db.Close())
	mr = stale
	assert.ErrorIs(t, db.GetMessagingRoute(2025550123, false, &mr), format.ErrClosed)
	assert.Equal(t, format.MessagingRoute{}, mr, "cleared on error")
}
