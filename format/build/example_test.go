package build_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format/build"
)

// Build writes a table from a source directory (docs/DATA.md): here the
// sample that ships with the module; a deployment passes os.DirFS of its
// licensed data. The report counts each file's rows.
func ExampleBuild() {
	dir, err := os.MkdirTemp("", "lnpdb-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	rep, err := build.Build(context.Background(), lnpdb.Sample(), filepath.Join(dir, "sample.lnpdb"), build.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range rep.Files {
		if f.Name == "ported.csv" {
			fmt.Println(f.Name, f.Kind, f.Read, "rows read,", f.Skipped, "skipped")
		}
	}
	// Output:
	// ported.csv ported 3000 rows read, 0 skipped
}
