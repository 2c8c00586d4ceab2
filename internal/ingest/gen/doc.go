// Package gen writes synthetic lnpdb source directories of any size:
// carriers.csv, ratecenters.csv, blocks.csv, ported.csv, messaging.csv,
// cnam.csv and trust.csv, in exactly the shapes of the design's DATA.md. It
// is what `lnpdb gen` runs, what the benchmarks build their tables from, and
// what wrote the committed sample in testdata/sample.
//
// # Basic usage
//
//	st, err := gen.Generate(ctx, "/tmp/src", gen.Config{
//		Seed: 1, Ported: 100_000_000,
//		Messaging: gen.DefaultMessaging, CNAM: gen.DefaultCNAM, Trust: gen.DefaultTrust,
//	})
//
// The same Config writes the same bytes, on any machine; another seed
// writes other data of the same shape.
//
// # Shape
//
//   - Location is real: 362 real NPAs of the 50 states, DC and the
//     territories, each with its real state and a few of its real cities as
//     rate centers, with their county, IANA time zone, and a plausible ZIP
//     code and LATA (places.csv, embedded; written from public knowledge,
//     no third-party data set). Overlay NPAs share their parent's cities.
//   - Carriers are invented: 4-character OCNs, coined names, a type drawn
//     like the OCN population (many ILECs and CLECs, fewer WIRELESS and
//     VOIP), a Zipf-like size (a dozen national carriers hold most codes and
//     take most ports, mostly wireless), and for many a default messaging
//     provider from a small set of invented providers.
//   - Codes (NPA-NXX, [2-9]XX and not N11, 555, 950, 958, 959 or 976) are
//     spread over the NPAs, skewed towards busy ones; 202-555 is always
//     assigned. About half are split into thousands-blocks: a block is left
//     in the pool, retained by the code holder, or pooled (with an LRN and
//     an activation time), most often to another carrier.
//   - Every carrier that holds a code or block in a (state, LATA) has one
//     LRN there: a number of its own code or block, ending the way LRNs
//     usually do (0000, 9999, x999 …). A port's LRN is its new carrier's LRN
//     in the number's state and LATA; a pooled block's LRN is its holder's.
//   - Ported numbers are distinct and clustered Zipf-like in busy codes (up
//     to 80 % of a code's numbers), only in assigned blocks; the new carrier
//     is usually not the one the number was assigned to. Activation times
//     run from 1998 (wireless from November 2003) to [Now], denser in recent
//     years, 2 % in the last 30 days; NPAC's yyyymmddhhmmss and RFC 3339
//     (Z or a numeric offset) are mixed.
//   - messaging.csv, cnam.csv and trust.csv hold rows for a share of the
//     "listed" numbers: the ported ones and a third as many unported numbers
//     in service. Messaging reference ids are shared by many rows; CNAM names
//     are at most 15 upper-case characters; trust rows cover every spam type
//     with log-skewed complaint counts and first ≤ last report.
//   - 202-555-0123, the example number of the docs, is ported whenever any
//     number is.
//
// # Performance
//
// Per-number rows are streamed code by code through buffered writers with
// strconv-style appends (no fmt, no allocation per row), each code drawing
// from its own PCG stream. Memory is bounded by the number of codes, not of
// numbers: 100 million ported numbers take about a minute and a few tens of
// MB. Files are written under temporary names and renamed into place when
// all are complete.
package gen
