package cnam_test

import (
	"fmt"
	"log"
	"os"
	"testing"

	"github.com/lnpdb/lnpdb/cnam"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

func Example() {
	for _, number := range []string{"+1 201-481-4567", "+1 201-481-0234", "+1 202-555-0123"} {
		r, err := cnam.Lookup(db, number, cnam.Options{})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s %-15s (%s)\n", r.PhoneNumber, r.CNAM, r.Source)
	}
	// Output:
	// 12014814567 PATEL THOMAS    (record)
	// 12014810234 WIRELESS CALLER (wireless)
	// 12025550123 WASHINGTON DC   (location)
}

// db is the table the examples look up in: the sample that ships with the
// module, opened once for them with format.Open, as a deployment opens a
// table that lnpdb build wrote from licensed data.
var db *format.DB

func TestMain(m *testing.M) { os.Exit(testdb.Main(m, &db)) }
