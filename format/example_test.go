package format_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/format/build"
)

// sampleTable builds the sample that ships with the module into a new
// temporary directory, as lnpdb build writes a table from licensed data,
// and returns its path. The caller removes the directory.
func sampleTable() (path, dir string) {
	dir, err := os.MkdirTemp("", "lnpdb-example-")
	if err != nil {
		log.Fatal(err)
	}
	path = filepath.Join(dir, "sample.lnpdb")
	if _, err := build.Build(context.Background(), lnpdb.Sample(), path, build.Options{}); err != nil {
		log.Fatal(err)
	}
	return path, dir
}

// Open maps a table for reading: it takes no lock and writes nothing, so
// it also answers beside a running lnpdb serve of the same file. Get reads
// a parsed number's raw records; the lookup packages apply the routing
// rules to them.
func ExampleOpen() {
	path, dir := sampleTable()
	defer os.RemoveAll(dir)

	db, err := format.Open(path, format.Verify())
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	n, err := lnpdb.ParseNumber("+1 (202) 555-0123")
	if err != nil {
		log.Fatal(err)
	}
	rec, err := db.Get(n.National(), format.FieldPorted)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, rec.Ported.OK, rec.Ported.LRN, rec.Ported.Carrier.Name)
	entries, _ := os.ReadDir(dir)
	fmt.Println(len(entries), "file in the directory")
	// Output:
	// 12025550123 true 17718860000 Lorora Connect, Inc.
	// 1 file in the directory
}

// OpenBytes opens a table held in memory, such as one a program embeds with
// //go:embed: the same checks as Open, no file.
func ExampleOpenBytes() {
	path, dir := sampleTable()
	defer os.RemoveAll(dir)
	table, err := os.ReadFile(path) // or: //go:embed sample.lnpdb
	if err != nil {
		log.Fatal(err)
	}

	db, err := format.OpenBytes(table, format.Verify())
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	n, _ := lnpdb.ParseNumber("2025550123")
	rec, err := db.Get(n.National(), format.FieldPorted)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rec.Ported.LRN, db.Info().Counts.Ported, "ported numbers")
	// Output:
	// 17718860000 3000 ported numbers
}

// OpenWriter opens a table for live updates: one process at a time holds
// it. An applied batch is journaled before ApplyBatch returns, answered at
// once, and seen by readers when they Reload.
func ExampleOpenWriter() {
	path, dir := sampleTable()
	defer os.RemoveAll(dir)

	w, err := format.OpenWriter(path)
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	r, err := format.Open(path) // a reader beside the writer
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()

	n, _ := lnpdb.ParseNumber("12025550199")
	err = w.Apply([]format.Update{{Action: format.Add, TN: n.National(), LRN: 2025569000, SPID: "0987"}})
	if err != nil {
		log.Fatal(err)
	}
	show := func(who string, db *format.DB) {
		rec, err := db.Get(n.National(), format.FieldPorted)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s %v %q\n", who, rec.Ported.OK, rec.Ported.LRN)
	}
	show("writer:", w)
	show("reader:", r)
	if err := r.Reload(); err != nil {
		log.Fatal(err)
	}
	show("reader after Reload:", r)
	// Output:
	// writer: true "12025569000"
	// reader: false ""
	// reader after Reload: true "12025569000"
}

// PortedNumbers walks the table's ported numbers in ascending order, with
// the pending live updates merged in as Get merges them; breaking out of
// the loop ends the walk.
func ExampleDB_PortedNumbers() {
	path, dir := sampleTable()
	defer os.RemoveAll(dir)

	db, err := format.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	n := 0
	for tn, p := range db.PortedNumbers(&err) {
		fmt.Println(tn, p.LRN, p.Carrier.OCN)
		if n++; n == 3 {
			break
		}
	}
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// 2014811095 12015829999 6731
	// 2014813718 17327370999 0987
	// 2014814567 17327370999 0987
}
