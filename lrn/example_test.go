package lrn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cnam"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/format/build"
	"github.com/lnpdb/lnpdb/lrn"
	"github.com/lnpdb/lnpdb/messaging"
	"github.com/lnpdb/lnpdb/trust"
)

// openSample builds the sample that ships with the module into a temporary
// directory and opens it; a real deployment opens a table built from
// licensed data. The caller closes the table and removes the directory.
func openSample() (*format.DB, string) {
	dir, err := os.MkdirTemp("", "lnpdb-example-")
	if err != nil {
		log.Fatal(err)
	}
	path := filepath.Join(dir, "sample.lnpdb")
	if _, err := build.Build(context.Background(), lnpdb.Sample(), path, build.Options{}); err != nil {
		log.Fatal(err)
	}
	db, err := format.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	return db, dir
}

func Example() {
	db, dir := openSample()
	defer os.RemoveAll(dir)
	defer db.Close()

	r, err := lrn.Lookup(db, "+1 (202) 555-0123", lrn.Options{Enhanced: true})
	switch {
	case errors.Is(err, lrn.ErrInvalidNumber):
		fmt.Println("not a NANP number")
	case errors.Is(err, lrn.ErrNotFound):
		fmt.Println("vacant code")
	case err != nil:
		log.Fatal(err)
	}
	fmt.Println(r.PhoneNumber, "routes to", r.LRN, "since", r.ActivatedAt)
	fmt.Println(r.Source, r.SPID, r.Enhanced.Carrier, r.Enhanced.LineType, r.Enhanced.City, r.Enhanced.State, r.Enhanced.IANAZone)
	fmt.Println(r.TelURI())
	// Output:
	// 12025550123 routes to 17718860000 since 2021-01-08T02:23:58+00:00
	// ported 1506 Lorora Connect, Inc. voip Washington DC America/New_York
	// tel:+12025550123;npdi;rn=+17718860000
}

// The Result marshals to exactly the REST body of POST /api/v1/lrn.
func Example_json() {
	db, dir := openSample()
	defer os.RemoveAll(dir)
	defer db.Close()

	r, err := lrn.Lookup(db, "12052890234", lrn.Options{Messaging: true})
	if err != nil {
		log.Fatal(err)
	}
	body, _ := json.Marshal(r)
	fmt.Println(string(body))

	r, err = lrn.Lookup(db, "12014810234", lrn.Options{})
	if err != nil {
		log.Fatal(err)
	}
	body, _ = json.Marshal(r)
	fmt.Println(string(body))
	// Output:
	// {"lrn":"12052890999","phone_number":"12052890234","lrn_activated_at":"2021-10-11T21:02:34+00:00","messaging":{"provider":"","enabled":false,"country":"US","country_code":"1","reference_id":""}}
	// {"lrn":"12014810234","phone_number":"12014810234"}
}

func ExampleLookupMany() {
	db, dir := openSample()
	defer os.RemoveAll(dir)
	defer db.Close()

	numbers := []string{"12025550123", "12052890234", "12014810234", "12025560123", "911", "19115550123"}
	var answers []lrn.Answer // reuse it across batches: answers[:0]
	answers = lrn.LookupMany(db, numbers, lrn.Options{}, answers[:0])
	for i, a := range answers {
		if a.Err != nil {
			fmt.Println(numbers[i], "error:", a.Err)
			continue
		}
		fmt.Println(a.PhoneNumber, a.LRN, a.Source)
	}
	// Output:
	// 12025550123 17718860000 ported
	// 12052890234 12052890999 pooled
	// 12014810234 12014810234 code
	// 12025560123 error: lnpdb: number not found
	// 911 error: lnpdb: invalid phone number: must be 10 digits, or 11 digits starting with 1
	// 19115550123 error: lnpdb: invalid phone number: NPA 911 is an N11 code, which is not a geographic area code
}

// Numbers parsed once (here from tel: URIs, as a SIP front end receives
// them) are looked up as a batch, on LookupMany's fast path.
func ExampleLookupManyNumbers() {
	db, dir := openSample()
	defer os.RemoveAll(dir)
	defer db.Close()

	var numbers []lnpdb.Number
	for _, s := range []string{"tel:+1-202-555-0123", "tel:+1-205-289-0234", "tel:+1-201-481-0234", "tel:+1-202-556-0123"} {
		n, err := lnpdb.ParseNumber(s)
		if err != nil {
			log.Fatal(err)
		}
		numbers = append(numbers, n)
	}
	var answers []lrn.Answer // reuse it across batches: answers[:0]
	answers = lrn.LookupManyNumbers(db, numbers, lrn.Options{}, answers[:0])
	for i, a := range answers {
		if a.Err != nil {
			fmt.Println(numbers[i], "error:", a.Err)
			continue
		}
		fmt.Println(a.PhoneNumber, a.LRN, a.Source)
	}
	// Output:
	// 12025550123 17718860000 ported
	// 12052890234 12052890999 pooled
	// 12014810234 12014810234 code
	// 12025560123 error: lnpdb: number not found
}

// One parse serves every lookup of a number: each lookup package takes the
// lnpdb.Number that ParseNumber returns.
func ExampleLookupNumber() {
	db, dir := openSample()
	defer os.RemoveAll(dir)
	defer db.Close()

	n, err := lnpdb.ParseNumber("tel:+1-201-481-4567")
	if err != nil {
		log.Fatal(err)
	}
	r, err := lrn.LookupNumber(db, n, lrn.Options{Messaging: true})
	if err != nil {
		log.Fatal(err)
	}
	c, err := cnam.LookupNumber(db, n, cnam.Options{})
	if err != nil {
		log.Fatal(err)
	}
	m, err := messaging.LookupNumber(db, n, messaging.Options{})
	if err != nil {
		log.Fatal(err)
	}
	t, err := trust.LookupNumber(db, n, trust.Options{Now: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, r.LRN, r.Source)
	fmt.Println(c.CNAM, "|", m.Provider, "|", t.Score, t.Level)
	// Output:
	// 12014814567 17327370999 ported
	// PATEL THOMAS | Parcelnet SMS | 100 high
}

func ExampleParseTelURI() {
	t, err := lrn.ParseTelURI("tel:+1-202-555-0123;npdi;rn=+17718860000")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(t.Number, t.RN, t.NPDI)
	fmt.Println(t.SIPUser())
	// Output:
	// 12025550123 17718860000 true
	// +12025550123;npdi;rn=+17718860000
}
