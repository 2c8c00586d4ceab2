package trust

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/lnpdb/lnpdb/format"
)

func TestScore(t *testing.T) {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) int64 { return now.Add(-d).Unix() }
	const day = 24 * time.Hour
	voip := &format.Carrier{OCN: "3003", Type: "VOIP"}
	ilec := &format.Carrier{OCN: "1001", Type: "ILEC"}
	code := format.Block{Assigned: true, Carrier: ilec}
	pooled := func(at int64) format.Block {
		return format.Block{Assigned: true, Thousands: true, Carrier: ilec, LRN: "12025559999", ActivatedAt: at}
	}
	ported := func(at int64, c *format.Carrier) format.Ported {
		return format.Ported{OK: true, LRN: "12025569000", Carrier: c, ActivatedAt: at}
	}
	spam := func(typ string, n uint32) format.Trust { return format.Trust{OK: true, SpamType: typ, Complaints: n} }

	tests := []struct {
		name    string
		rec     format.Record
		score   int
		level   string
		reasons []string
	}{
		{"clean", format.Record{Block: code}, 100, LevelHigh, []string{}},
		{"scam", format.Record{Block: code, Trust: spam("SCAM", 0)}, 40, LevelMedium, []string{ReasonScam}},
		{"robocall", format.Record{Block: code, Trust: spam("ROBOCALL", 0)}, 50, LevelMedium, []string{ReasonRobocall}},
		{"spam", format.Record{Block: code, Trust: spam("SPAM", 0)}, 60, LevelMedium, []string{ReasonSpam}},
		{"telemarketer", format.Record{Block: code, Trust: spam("TELEMARKETER", 0)}, 75, LevelHigh, []string{ReasonTelemarketer}},
		{"none with complaints", format.Record{Block: code, Trust: spam("NONE", 4)}, 88, LevelHigh, []string{ReasonComplaints}},
		{"complaints capped", format.Record{Block: code, Trust: spam("NONE", 4_000_000_000)}, 70, LevelHigh, []string{ReasonComplaints}},
		{"ported 7 days ago exactly", format.Record{Block: code, Ported: ported(ago(7*day), ilec)}, 80, LevelHigh, []string{ReasonPorted7D}},
		{"ported 8 days ago", format.Record{Block: code, Ported: ported(ago(8*day), ilec)}, 90, LevelHigh, []string{ReasonPorted30D}},
		{"ported 30 days ago exactly", format.Record{Block: code, Ported: ported(ago(30*day), ilec)}, 90, LevelHigh, []string{ReasonPorted30D}},
		{"ported 31 days ago", format.Record{Block: code, Ported: ported(ago(31*day), ilec)}, 100, LevelHigh, []string{}},
		{"ported in the future", format.Record{Block: code, Ported: ported(ago(-day), ilec)}, 100, LevelHigh, []string{}},
		{"ported at an unknown time", format.Record{Block: code, Ported: ported(0, ilec)}, 100, LevelHigh, []string{}},
		{"pooled 1 day ago", format.Record{Block: pooled(ago(day))}, 80, LevelHigh, []string{ReasonPooled7D}},
		{"pooled 20 days ago", format.Record{Block: pooled(ago(20 * day))}, 90, LevelHigh, []string{ReasonPooled30D}},
		{"code row activation does not count", format.Record{Block: format.Block{Assigned: true, Carrier: ilec, ActivatedAt: ago(day)}}, 100, LevelHigh, []string{}},
		{"ported beats its pooled block", format.Record{Block: pooled(ago(day)), Ported: ported(ago(100*day), ilec)}, 100, LevelHigh, []string{}},
		{"voip block carrier", format.Record{Block: format.Block{Assigned: true, Carrier: voip}}, 90, LevelHigh, []string{ReasonVoIP}},
		{"ported away from voip", format.Record{Block: format.Block{Assigned: true, Carrier: voip}, Ported: ported(0, ilec)}, 100, LevelHigh, []string{}},
		{"ported to voip", format.Record{Block: code, Ported: ported(0, voip)}, 90, LevelHigh, []string{ReasonVoIP}},
		{"medium floor", format.Record{Block: code, Trust: spam("TELEMARKETER", 5), Ported: ported(ago(day), ilec)}, 40, LevelMedium, []string{ReasonTelemarketer, ReasonComplaints, ReasonPorted7D}},
		{"low ceiling", format.Record{Block: code, Trust: spam("SPAM", 7), Ported: ported(ago(day), ilec)}, 19, LevelLow, []string{ReasonSpam, ReasonComplaints, ReasonPorted7D}},
		{"clamped at 0", format.Record{Block: code, Trust: spam("SCAM", 100), Ported: ported(ago(day), voip)}, 0, LevelLow, []string{ReasonScam, ReasonComplaints, ReasonPorted7D, ReasonVoIP}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Result
			score(&tt.rec, "12025550123", now, &r)
			assert.Equal(t, tt.score, r.Score)
			assert.Equal(t, tt.level, r.Level)
			assert.Equal(t, tt.reasons, r.Reasons)
		})
	}
}

func TestScoreLevelsAtBoundaries(t *testing.T) {
	// 70 is high, 69 medium, 40 medium, 39 low: reach them with complaints.
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	block := format.Block{Assigned: true, Carrier: &format.Carrier{Type: "ILEC"}}
	for _, tt := range []struct {
		spam       string
		complaints uint32
		score      int
		level      string
	}{
		{"NONE", 10, 70, LevelHigh},
		{"SPAM", 0, 60, LevelMedium},
		{"SPAM", 7, 39, LevelLow},
		{"SCAM", 0, 40, LevelMedium},
		{"SCAM", 1, 37, LevelLow},
	} {
		rec := format.Record{Block: block, Trust: format.Trust{OK: true, SpamType: tt.spam, Complaints: tt.complaints}}
		var r Result
		score(&rec, "12025550123", now, &r)
		assert.Equal(t, tt.score, r.Score, "%s %d", tt.spam, tt.complaints)
		assert.Equal(t, tt.level, r.Level, "%s %d", tt.spam, tt.complaints)
	}
}
