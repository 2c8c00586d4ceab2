// Package lnpdb answers US phone-number routing questions — LRN (local routing
// number), carrier and location, messaging provider, caller name (CNAM) and
// trust — in-process, from one memory-mapped table file.
//
// # Basic usage
//
// Open a table with [github.com/lnpdb/lnpdb/format.Open], then ask one of the
// lookup packages:
//
//	db, err := format.Open("us.lnpdb")
//	if err != nil { ... }
//	defer db.Close()
//	r, err := lrn.Lookup(db, "12025550123", lrn.Options{Enhanced: true})
//	switch {
//	case errors.Is(err, lnpdb.ErrInvalidNumber): // not a dialable NANP number
//	case errors.Is(err, lnpdb.ErrNotFound):      // vacant NPA-NXX code
//	}
//	fmt.Println(r.LRN, r.ActivatedAt, r.Enhanced.Carrier)
//
// The lookup packages are [github.com/lnpdb/lnpdb/lrn],
// [github.com/lnpdb/lnpdb/cnam], [github.com/lnpdb/lnpdb/messaging] and
// [github.com/lnpdb/lnpdb/trust]. Their response structs marshal with
// encoding/json to exactly the REST wire bodies of the hosted service that
// lnpdb replaces.
//
// This package holds only what all of them share: the sentinel errors and the
// wire time type.
package lnpdb
