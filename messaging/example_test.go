package messaging_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/format/build"
	"github.com/lnpdb/lnpdb/messaging"
)

func Example() {
	// Build the sample that ships with the module; a real deployment opens
	// a table built from licensed data.
	dir, err := os.MkdirTemp("", "lnpdb-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "sample.lnpdb")
	if _, err := build.Build(context.Background(), lnpdb.Sample(), path, build.Options{}); err != nil {
		log.Fatal(err)
	}
	db, err := format.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	r, err := messaging.Lookup(db, "202-555-0123")
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
