package lrn

import (
	"time"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/core/lookup"
	"github.com/lnpdb/lnpdb/internal/core/nanp"
)

// lookupMessaging is LookupInto with messaging: the ported record, the
// block row and the messaging record are read into a MessagingRoute, whose
// messaging record is a pointer into the table's dictionary rather than a
// copy of it, and r's messaging answer is written once, field by field.
func lookupMessaging(db *format.DB, number string, opt Options, r *Result) error {
	n, canonical := nanp.ParseCanonical(number)
	if !canonical {
		var err error
		if n, _, err = nanp.Parse(number); err != nil {
			return err
		}
	}
	var mr format.MessagingRoute
	if err := db.GetMessagingRoute(uint64(n), !opt.Enhanced, &mr); err != nil {
		return lookup.Error("lrn", err)
	}
	if !mr.Ported.OK && !mr.Block.Assigned {
		return ErrNotFound // before number's canonical form, which allocates
	}
	if !canonical {
		number = n.String()
	}
	// resolve's answer, written in this frame, with the messaging answer
	// from the same current carrier.
	lrn, at, source, c, _ := route(&mr.Ported, &mr.Block, number)
	var t lnpdb.Time // lnpdb.Unix(at), inlined (see set)
	if at != 0 {
		t.Time = time.Unix(at, 0).UTC()
	}
	r.set(lrn, t, source, c, number)
	switch {
	case opt.Enhanced:
		// setEnhanced written out: its call and frame cost more than
		// its body on the path every enhanced lookup takes.
		e, rc := &r.Enhanced, mr.Block.RateCenter
		e.present = true
		if c != nil {
			e.Carrier, e.CarrierType, e.OCN = c.Name, c.Type, c.OCN
		} else {
			e.Carrier, e.CarrierType, e.OCN = "", "", ""
		}
		e.LineType = LineTypeOfNumber(mr.Ported.SVType, c)
		if rc == nil {
			rc = &noRateCenter
		}
		e.City, e.State, e.County, e.ZIPCode = rc.City, rc.State, rc.County, rc.ZIP
		e.LATA, e.RateCenter = rc.LATA, rc.Name
		e.Timezone, e.IANAZone = rc.UTCOffset, rc.TimeZone
	case r.Enhanced.present: // not IsZero, which copies the whole struct
		r.Enhanced = Enhanced{}
	}
	r.Messaging.Set(mr.Messaging, c)
	return nil
}
