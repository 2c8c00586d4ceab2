// Package testdb builds tables for tests: the embedded sample, or any source
// directory, into the test's temporary directory, or the sample once for a
// package's examples; and copies a source directory into memory for a test
// that changes it.
package testdb

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/format/build"
)

// BuiltAt is the build time recorded in test tables, so that their bytes do
// not depend on the clock.
var BuiltAt = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// Build builds src into a table in t's temporary directory and returns its
// path.
func Build(t testing.TB, src fs.FS) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.lnpdb")
	if _, err := build.Build(context.Background(), src, path, build.Options{BuiltAt: BuiltAt}); err != nil {
		t.Fatalf("building test table: %v", err)
	}
	return path
}

// Open builds src and opens it; the DB is closed when the test ends.
func Open(t testing.TB, src fs.FS) *format.DB {
	t.Helper()
	db, _ := OpenFile(t, src)
	return db
}

// OpenFile is Open for a test that also needs the table's path: to reopen
// the table, or to reach the files beside it.
func OpenFile(t testing.TB, src fs.FS) (*format.DB, string) {
	t.Helper()
	path := Build(t, src)
	db, err := format.OpenWriter(path)
	if err != nil {
		t.Fatalf("opening test table: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

// Sample builds and opens the embedded sample (testdata/sample).
func Sample(t testing.TB) *format.DB {
	t.Helper()
	return Open(t, lnpdb.Sample())
}

// Main builds the embedded sample into a temporary directory, opens it
// into *db, runs m's tests and examples, then closes the table and removes
// the directory; it returns the exit code for os.Exit. It is the TestMain of
// a lookup package whose examples look up in the sample as a deployment
// looks up in a table that lnpdb build wrote.
func Main(m *testing.M, db **format.DB) int {
	dir, err := os.MkdirTemp("", "lnpdb-example-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testdb:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "sample.lnpdb")
	if _, err := build.Build(context.Background(), lnpdb.Sample(), path, build.Options{BuiltAt: BuiltAt}); err != nil {
		fmt.Fprintln(os.Stderr, "testdb: building the sample:", err)
		return 1
	}
	if *db, err = format.OpenWriter(path); err != nil {
		fmt.Fprintln(os.Stderr, "testdb: opening the sample:", err)
		return 1
	}
	defer (*db).Close()
	return m.Run()
}

// Copy returns src's files in memory, so that a test can change some before
// it builds them.
func Copy(t testing.TB, src fs.FS) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(src, p)
		m[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatalf("copying a source directory: %v", err)
	}
	return m
}
