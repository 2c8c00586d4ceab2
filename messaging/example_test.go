package messaging_test

import (
	"encoding/json"
	"fmt"
	"log"
	"os"
	"testing"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/lnpdb/lnpdb/messaging"
)

func Example() {
	r, err := messaging.Lookup(db, "202-555-0123", messaging.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Provider, r.Enabled, r.Source)
	body, _ := json.Marshal(r) // the body of POST /api/v1/messaging
	fmt.Println(string(body))
	// Output:
	// Signalpost true carrier_default
	// {"phone_number":"12025550123","messaging_provider":"Signalpost","messaging_enabled":true,"messaging_country":"US","messaging_country_code":"1","reference_id":""}
}

// db is the table the examples look up in: the sample that ships with the
// module, opened once for them with format.Open, as a deployment opens a
// table that lnpdb build wrote from licensed data.
var db *format.DB

func TestMain(m *testing.M) { os.Exit(testdb.Main(m, &db)) }
