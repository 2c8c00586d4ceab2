// Package messaging answers messaging provider lookups (CONTRACT §4): which
// provider delivers SMS and MMS to a US number, and whether it can receive
// them.
//
// The answer is the number's own messaging record where there is one, else
// the current carrier's default provider (the carrier of the ported record's
// SPID, else of the number's most specific block row), else no provider and
// not enabled. The country and its calling code are the messaging
// record's (a NANP number may be Canadian or Caribbean), and US and 1 when
// the record leaves them empty or there is none.
//
// [Lookup] answers the flat body of POST /api/v1/messaging; [Info.Set], from
// a number's messaging record and current carrier, and [FromRecord], from
// a Record, give the nested messaging object of an LRN lookup, which
// package lrn uses.
//
//	r, err := messaging.Lookup(db, "12025550123", messaging.Options{})
//	if errors.Is(err, messaging.ErrNotFound) { ... } // vacant NPA-NXX
//	fmt.Println(r.Provider, r.Enabled)
//
// Every function is safe for concurrent use.
package messaging
