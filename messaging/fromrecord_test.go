package messaging_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/messaging"
)

func TestFromRecord(t *testing.T) {
	withDefault := &format.Carrier{OCN: "2002", Type: "WIRELESS", MessagingProvider: "Capital Messaging", MessagingEnabled: true}
	disabledDefault := &format.Carrier{OCN: "3003", Type: "VOIP", MessagingProvider: "Beltway SMS"}
	none := &format.Carrier{OCN: "1001", Type: "ILEC"}
	record := format.Messaging{OK: true, Provider: "Windy Texts", Enabled: false, Country: "US", CountryCode: "1", ReferenceID: "ref-9"}

	for _, tt := range []struct {
		name string
		rec  format.Record
		want messaging.Info
	}{
		{"record beats carrier default",
			format.Record{Block: format.Block{Assigned: true, Carrier: withDefault}, Messaging: record},
			messaging.Info{Provider: "Windy Texts", Country: "US", CountryCode: "1", ReferenceID: "ref-9", Source: messaging.SourceRecord}},
		{"block carrier default",
			format.Record{Block: format.Block{Assigned: true, Carrier: withDefault}},
			messaging.Info{Provider: "Capital Messaging", Enabled: true, Country: "US", CountryCode: "1", Source: messaging.SourceCarrierDefault}},
		{"ported carrier's default, not the block's",
			format.Record{Block: format.Block{Assigned: true, Carrier: withDefault}, Ported: format.Ported{OK: true, Carrier: disabledDefault}},
			messaging.Info{Provider: "Beltway SMS", Country: "US", CountryCode: "1", Source: messaging.SourceCarrierDefault}},
		{"ported to a carrier without a default",
			format.Record{Block: format.Block{Assigned: true, Carrier: withDefault}, Ported: format.Ported{OK: true, Carrier: none}},
			messaging.Info{Country: "US", CountryCode: "1", Source: messaging.SourceNone}},
		{"a Canadian number's record keeps its country",
			format.Record{Block: format.Block{Assigned: true, Carrier: withDefault}, Messaging: format.Messaging{OK: true, Provider: "Maple Texts", Enabled: true, Country: "CA", CountryCode: "1"}},
			messaging.Info{Provider: "Maple Texts", Enabled: true, Country: "CA", CountryCode: "1", Source: messaging.SourceRecord}},
		{"a record without a country is US",
			format.Record{Block: format.Block{Assigned: true, Carrier: withDefault}, Messaging: format.Messaging{OK: true, Provider: "Windy Texts"}},
			messaging.Info{Provider: "Windy Texts", Country: "US", CountryCode: "1", Source: messaging.SourceRecord}},
		{"nothing at all",
			format.Record{},
			messaging.Info{Country: "US", CountryCode: "1", Source: messaging.SourceNone}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := messaging.FromRecord(&tt.rec)
			assert.False(t, got.IsZero())
			// Compare everything but the unexported presence flag.
			assert.Equal(t, tt.want.Provider, got.Provider)
			assert.Equal(t, tt.want.Enabled, got.Enabled)
			assert.Equal(t, tt.want.Country, got.Country)
			assert.Equal(t, tt.want.CountryCode, got.CountryCode)
			assert.Equal(t, tt.want.ReferenceID, got.ReferenceID)
			assert.Equal(t, tt.want.Source, got.Source)
		})
	}
	assert.True(t, messaging.Info{}.IsZero())
}

func TestReset(t *testing.T) {
	i := messaging.FromRecord(&format.Record{})
	assert.False(t, i.IsZero())
	i.Reset()
	assert.True(t, i.IsZero())
	assert.Equal(t, messaging.Info{}, i)
	i.Reset()
	assert.Equal(t, messaging.Info{}, i)
}

// TestSetOverwrites: Set answers what FromRecord answers for the same
// record and carrier, into an Info whose every field holds an earlier
// answer, as a reused Result's does; a record without a country gets the
// defaults.
func TestSetOverwrites(t *testing.T) {
	withDefault := &format.Carrier{OCN: "2002", MessagingProvider: "Capital Messaging", MessagingEnabled: true}
	none := &format.Carrier{OCN: "1001"}
	full := format.Messaging{OK: true, Provider: "Windy Texts", Enabled: true, Country: "CA", CountryCode: "1", ReferenceID: "ref-9"}
	bare := format.Messaging{OK: true, Provider: "Bare"}
	stale := messaging.FromRecord(&format.Record{Messaging: full})
	for _, rec := range []format.Record{
		{Messaging: full},
		{Messaging: bare},
		{Messaging: bare, Ported: format.Ported{OK: true, Carrier: withDefault}},
		{Block: format.Block{Assigned: true, Carrier: withDefault}},
		{Block: format.Block{Assigned: true, Carrier: withDefault}, Ported: format.Ported{OK: true, Carrier: none}},
		{},
	} {
		var m *format.Messaging
		if rec.Messaging.OK {
			m = &rec.Messaging
		}
		got := stale
		got.Set(m, rec.CurrentCarrier())
		assert.Equal(t, messaging.FromRecord(&rec), got, "%+v", rec)
	}
	i := messaging.FromRecord(&format.Record{Messaging: bare})
	assert.Equal(t, "US", i.Country)
	assert.Equal(t, "1", i.CountryCode)
}
