package lrn

import (
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
	resolve(r, &mr.Ported, &mr.Block, nil, number, opt)
	r.Messaging.Set(mr.Messaging, mr.CurrentCarrier())
	return nil
}
