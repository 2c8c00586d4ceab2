package trust_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/format/build"
	"github.com/lnpdb/lnpdb/trust"
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
