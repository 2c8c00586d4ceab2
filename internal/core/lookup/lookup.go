// Package lookup holds the steps every lookup package (lrn, cnam,
// messaging, trust) takes alike before it applies its own rules: parse the
// number, read its record, refuse a vacant one, and wrap a table's error;
// and the one way their enumerations print.
// It imports only format, the root package and internal/core/nanp, so that the
// lookup packages stay within the library's dependency rule; it must not
// import a lookup package or anything of a server.
package lookup

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/core/nanp"
)

// Get parses number, in any form CONTRACT §1 accepts, reads its record
// with fields f into *rec, and returns the number's canonical 11-digit
// form: number itself when it already is one, so that nothing allocates.
// An unparsable number is an error matching lnpdb.ErrInvalidNumber that
// says why; a number that is not ported and whose NPA-NXX code is vacant
// is lnpdb.ErrNotFound; a table's error is as Error returns it, for the
// package named pkg.
func Get(db *format.DB, number string, f format.Fields, pkg string, rec *format.Record) (string, error) {
	// The canonical leaf first, as nanp.Parse does, without Parse's call
	// for the form every front end sends.
	n, canonical := nanp.ParseCanonical(number)
	if !canonical {
		var err error
		if n, _, err = nanp.Parse(number); err != nil {
			return "", err
		}
	}
	if err := db.GetInto(uint64(n), f, rec); err != nil {
		return "", Error(pkg, err)
	}
	return Answered(number, n, canonical, rec.Ported.OK || rec.Block.Assigned)
}

// Answered is what a lookup returns for a number n it has read, given in
// the form number (canonical says whether that is already canonical):
// lnpdb.ErrNotFound unless it is ported or in an assigned code (routed),
// else its canonical form, number itself when it already was one, so that
// neither a miss nor a canonical input allocates.
func Answered(number string, n nanp.Number, canonical, routed bool) (string, error) {
	if !routed {
		return "", lnpdb.ErrNotFound
	}
	if !canonical {
		number = n.String()
	}
	return number, nil
}

// Error passes lnpdb.ErrClosed through and wraps anything else (a corrupt
// table) in the package pkg's name, so that errors.Is(err,
// format.ErrCorrupt) still matches.
func Error(pkg string, err error) error {
	if errors.Is(err, lnpdb.ErrClosed) {
		return lnpdb.ErrClosed
	}
	return fmt.Errorf("%s: %w", pkg, err)
}

// Name returns names[v], the name of the enumeration typ's value v, or
// "typ(v)" for a value without one: what the String method of a lookup
// package's enumeration answers.
func Name[T ~uint8](typ string, names []string, v T) string {
	if int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return typ + "(" + strconv.Itoa(int(v)) + ")"
}
