// Package source reads the source files a table is built from — carriers,
// rate centers, blocks, ported numbers (as CSV or in NPAC's bulk data
// shape), messaging, CNAM, trust and update feeds — one row at a time,
// checking every value against the rules of the data spec
// (docs/DATA.md).
//
// # Basic usage
//
// Each file has one reader, which calls a function for every good row:
//
//	err := source.ReadPorted(f, "ported.csv", source.Options{}, func(p *source.Ported) error {
//		return b.addPorted(*p) // copy: p is reused for the next row
//	})
//	var re *source.RowError
//	var ce *source.ColumnError
//	switch {
//	case errors.As(err, &re): // a bad row: re.File, re.Line, re.Column, re.Reason
//	case errors.As(err, &ce): // a required column is missing from the header
//	}
//
// With [Options.SkipBadRows] a bad row is handed to [Options.OnSkip] and
// reading goes on; a missing column, a missing header and a read error stay
// fatal. An error the callback returns stops the read and comes back as is.
//
// # CSV files
//
// CSV files are RFC 4180 with a header row, one record a line: no value may
// hold a line end, so a quoted field that does not close on its line is a
// row error for that line alone. Header names are matched without regard
// to case or surrounding spaces; columns may come in any order, unknown
// ones are ignored and a UTF-8 byte order mark is dropped. Values are
// trimmed of spaces. Empty lines are skipped; a row with a different number
// of fields than the header, or with bad quoting, is a row error.
//
// # Lines
//
// Every reader reads its file through internal/core/lineio: lines end in
// LF, CR or CRLF, and a line longer than 1 MiB is a row error found
// without holding the line, so that a small compressed file that expands
// to one enormous line costs no memory. [Options.Count] tallies every line
// as header, blank, row or skipped: none goes unaccounted.
//
// Checks that need more than one row or file — unknown OCNs, unknown rate
// centers, duplicate numbers — are the builder's, not this package's.
//
// # Performance
//
// The ported-number files may hold hundreds of millions of rows, so the
// readers stream and reuse: the struct passed to the callback is the same
// one for every row (its strings stay valid after the callback returns, the
// struct does not), numbers, times and flags are parsed without allocating,
// and strings that repeat, such as SPIDs, OCNs and providers, are shared. A
// CSV row costs the one allocation encoding/csv makes for it; an NPAC record
// costs none.
//
// # NPAC bulk data download files
//
// [ReadSubscriptionVersions], [ReadPoolBlocks], [ReadServiceProviders],
// [ReadNetworkLRNs], [ReadNetworkNPANXX] and [ReadNetworkNPANXXX] read the
// NPAC SMS BDD files field by field, as docs/DATA.md describes them; a
// subscription version or pool block record costs no allocation.
package source
