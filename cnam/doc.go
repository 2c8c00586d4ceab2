// Package cnam answers caller name (CNAM) lookups (CONTRACT §3): the name,
// at most 15 characters, that a terminating switch shows for a calling
// number.
//
// The name is the number's CNAM record where there is one. Without a record
// it falls back as switches do: "WIRELESS CALLER" when the number's current
// carrier is a wireless carrier, else the city and state of its rate center
// in capitals, such as "WASHINGTON DC". [Result.Source] says which rule
// answered.
//
//	r, err := cnam.Lookup(db, "12025550123", cnam.Options{})
//	if errors.Is(err, cnam.ErrNotFound) { ... } // vacant NPA-NXX
//	fmt.Println(r.CNAM)
//
// Every function is safe for concurrent use.
package cnam
