package lrn_test

import (
	"errors"
	"testing"

	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/lnpdb/lnpdb/lrn"
)

// FuzzLookup: whatever bytes arrive, a lookup answers a canonical number
// or one of the two lookup errors, never a panic (CONTRACT §1); and
// LookupMany agrees with it.
func FuzzLookup(f *testing.F) {
	for _, s := range []string{
		"12025550123", "+1 (202) 555-0123", "2014810234", "tel:+12025550123;npdi;rn=+17718860000",
		"12025560123", "", "1", "+", "tel:", "()", "1202555012\x00", "１２０２５５５０１２３", "+1-202-555-0123-",
	} {
		f.Add(s)
	}
	db := testdb.Sample(f)
	f.Fuzz(func(t *testing.T, s string) {
		r, err := lrn.Lookup(db, s, lrn.Options{Enhanced: true, Messaging: true})
		switch {
		case err == nil:
			if len(r.PhoneNumber) != 11 || r.PhoneNumber[0] != '1' || len(r.LRN) != 11 {
				t.Fatalf("Lookup(%q) = %+v", s, r)
			}
		case !errors.Is(err, lrn.ErrInvalidNumber) && !errors.Is(err, lrn.ErrNotFound):
			t.Fatalf("Lookup(%q): unexpected error %v", s, err)
		}
		a := lrn.LookupMany(db, []string{s}, lrn.Options{Enhanced: true, Messaging: true}, nil)
		if a[0].Err != err || a[0].Result != r {
			t.Fatalf("LookupMany(%q) = %+v, Lookup = %+v, %v", s, a[0], r, err)
		}
	})
}
