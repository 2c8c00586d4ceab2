// Package lrn answers LRN (local routing number) lookups: where to route a
// call to a US number after number portability, and optionally who serves it
// and where it is (enhanced data) and who delivers its messages.
//
// # Basic usage
//
//	db, err := format.Open("us.lnpdb")
//	if err != nil { ... }
//	defer db.Close()
//	r, err := lrn.Lookup(db, "+1 (202) 555-0123", lrn.Options{Enhanced: true})
//	switch {
//	case errors.Is(err, lrn.ErrInvalidNumber): // 400 INVALID_PHONE_NUMBER
//	case errors.Is(err, lrn.ErrNotFound):      // 404 NUMBER_NOT_FOUND
//	case err != nil:                           // 500: closed or corrupt table
//	}
//	fmt.Println(r.LRN, r.ActivatedAt, r.Enhanced.Carrier, r.TelURI())
//
// A number asked of several lookups is parsed once: [lnpdb.ParseNumber]
// gives an [lnpdb.Number], which [LookupNumber], [LookupNumberInto] and the
// other lookup packages' LookupNumber forms take.
//
// A [Result] marshals with encoding/json to exactly the body of the REST
// endpoint POST /api/v1/lrn: enhanced_lrn_data and messaging appear only when
// requested, lrn_activated_at only when known.
//
// # Resolution
//
// A number's LRN is, in this order (as NPAC routing works): its ported
// record's LRN; else its pooled thousands-block's LRN; else, when its NPA-NXX
// code is assigned, the number itself; else the number is vacant and the
// lookup answers [ErrNotFound]. [Result.Source] says which step answered.
//
// The enhanced carrier is the current one: the ported record's new SPID, else
// the OCN holder of the number's most specific block row (its
// thousands-block row where there is one, else its code row). The location
// always comes from that block row's rate center: a port never moves a number
// out of its rate center.
//
// # Performance
//
// [Lookup] reads only what it needs (the ported record, the messaging
// record when asked for, and the block data unless the number is ported and
// enhanced data was not asked for), starts the memory accesses of the
// sections it reads together rather than one after another, and allocates
// nothing when the input is already
// canonical (11 digits starting with 1): the strings of a Result point into
// the table's dictionaries, which are decoded once at Open. Other input
// forms cost one 16-byte allocation for the echoed phone_number.
//
// [LookupMany] parses a whole batch and reads it with one
// [format.DB.GetRoutes] call ([format.DB.GetMany] with messaging), which
// takes dozens of numbers through each step of a lookup together so that
// their memory accesses overlap; on a table larger than the CPU caches it
// answers about twice as many numbers per second as a loop over Lookup
// (2.09x at 10M ported numbers, 2.24x at 100M; 1.58x and 1.93x with
// enhanced and messaging data: the "batch lookups" rows
// of benchmarks/results/10M.md and 100M.md, where format.DB.GetMany's own
// figures stand beside them; BenchmarkLargeBatch measures it here,
// run with -bench.ported=10000000; the generated table is kept in the
// temporary directory for later runs).
//
// # Errors
//
// [ErrInvalidNumber], [ErrNotFound] and [ErrClosed] are the root package's
// sentinels; match them with errors.Is. An invalid number's error says what
// is wrong with it, e.g. "lnpdb: invalid phone number: NPA 911 is an N11
// code, which is not a geographic area code". Any other error means the table is damaged; it wraps a
// *format.CorruptError (errors.Is(err, format.ErrCorrupt) holds) and should be
// reported as an internal error, never to a caller as a lookup answer.
//
// Every function is safe for concurrent use, also with Close.
package lrn
