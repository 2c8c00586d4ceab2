package trust_test

import (
	"fmt"
	"log"
	"os"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/lnpdb/lnpdb/trust"
)

func Example() {
	// A fixed clock, so that the port a week before counts as recent.
	opt := trust.Options{Now: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)}
	for _, number := range []string{"12014810234", "14309955840"} {
		r, err := trust.Lookup(db, number, opt)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(r.PhoneNumber, r.Score, r.Level, r.SpamType, r.Reasons)
	}
	// Output:
	// 12014810234 100 high NONE []
	// 14309955840 13 low SPAM [SPAM_TYPE_SPAM COMPLAINTS PORTED_7D]
}

// db is the table the examples look up in: the sample that ships with the
// module, opened once for them with format.Open, as a deployment opens a
// table that lnpdb build wrote from licensed data.
var db *format.DB

func TestMain(m *testing.M) { os.Exit(testdb.Main(m, &db)) }
