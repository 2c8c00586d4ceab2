package cnam_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cnam"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/format/build"
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

	for _, number := range []string{"+1 201-481-4567", "+1 201-481-0234", "+1 202-555-0123"} {
		r, err := cnam.Lookup(db, number)
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
