// Package diptest holds what the front ends' tests share: numbers of every
// kind a number portability dip must tell apart, found in a table by asking
// lrn.Lookup, so that the tests assert against the library rather than
// against answers written by hand; a fixed table to serve; and a front end
// over the sample with both.
package diptest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/lnpdb/lnpdb/lrn"
)

// Fixed returns the Tables of a front end that serves db and nothing else
// (nil: no table, as before the first one loads).
func Fixed(db *format.DB) FixedTables { return FixedTables{db} }

// FixedTables serves one table; see Fixed.
type FixedTables struct{ db *format.DB }

// DB returns the table.
func (t FixedTables) DB() *format.DB { return t.db }

// Sample builds and opens the embedded sample for a front end's test and
// returns the front end that serve makes over it (the front end's New with
// the sample as its fixed Tables), the table, and its numbers of every kind.
func Sample[S any](t testing.TB, serve func(FixedTables) (S, error)) (S, *format.DB, Numbers) {
	t.Helper()
	db := testdb.Sample(t)
	s, err := serve(Fixed(db))
	if err != nil {
		t.Fatal(err)
	}
	return s, db, Find(t, db)
}

// Numbers are one number of each kind, canonical 11 digits (Invalid is not
// a NANP number).
type Numbers struct {
	Ported  string // ported to another switch: LRN from its own record, != number
	Pooled  string // in a pooled thousands-block: LRN from the block, != number
	Home    string // routes on itself (LRN == number)
	Vacant  string // in an unassigned NPA-NXX: lrn.ErrNotFound
	Invalid string // not NANP (N11 NPA): lrn.ErrInvalidNumber
}

// All returns the numbers with their kinds, in a fixed order.
func (n Numbers) All() [][2]string {
	return [][2]string{{"ported", n.Ported}, {"pooled", n.Pooled}, {"home", n.Home}, {"vacant", n.Vacant}, {"invalid", n.Invalid}}
}

// Vacant returns a valid number of db whose NPA-NXX code is vacant, quicker
// than Find: the first code NPA-555 that is.
func Vacant(t testing.TB, db *format.DB) string {
	t.Helper()
	for npa := 201; npa <= 989; npa++ {
		n := fmt.Sprintf("1%d5550100", npa)
		if _, err := lrn.Lookup(db, n, lrn.Options{}); errors.Is(err, lrn.ErrNotFound) {
			return n
		}
	}
	t.Fatal("diptest: no vacant NPA-555 code")
	return ""
}

// Find scans db's codes in order for one number of each kind, and fails t
// when a kind is missing.
func Find(t testing.TB, db *format.DB) Numbers {
	t.Helper()
	n, err := FindIn(db)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// FindIn is Find without a testing.TB, for load clients and scripts.
func FindIn(db *format.DB) (Numbers, error) {
	n := Numbers{Invalid: "12115550123"}
	if _, err := lrn.Lookup(db, n.Invalid, lrn.Options{}); !errors.Is(err, lrn.ErrInvalidNumber) {
		return n, fmt.Errorf("diptest: %s should be invalid, got %v", n.Invalid, err)
	}
	for npa := 201; npa <= 989 && (n.Ported == "" || n.Pooled == "" || n.Home == "" || n.Vacant == ""); npa++ {
		for nxx := 200; nxx <= 999 && (n.Ported == "" || n.Pooled == "" || n.Home == "" || n.Vacant == ""); nxx++ {
			for line := 0; line < 10000; line++ {
				num := fmt.Sprintf("1%03d%03d%04d", npa, nxx, line)
				r, err := lrn.Lookup(db, num, lrn.Options{})
				switch {
				case errors.Is(err, lrn.ErrInvalidNumber):
					line = 10000 // the whole code is invalid
				case errors.Is(err, lrn.ErrNotFound):
					if n.Vacant == "" {
						n.Vacant = num
					}
					line = 10000 // vacant codes are vacant throughout
				case err != nil:
					return n, err
				case r.LRN == r.PhoneNumber:
					if n.Home == "" {
						n.Home = num
					}
				case r.Source == lrn.SourcePorted:
					if n.Ported == "" {
						n.Ported = num
					}
				case r.Source == lrn.SourcePooled:
					if n.Pooled == "" {
						n.Pooled = num
					}
				}
			}
		}
	}
	for _, k := range n.All() {
		if k[1] == "" {
			return n, fmt.Errorf("diptest: the table has no %s number", k[0])
		}
	}
	return n, nil
}
