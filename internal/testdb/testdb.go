// Package testdb builds tables for tests: the embedded sample, or any source
// directory, into the test's temporary directory; and copies a source
// directory into memory for a test that changes it.
package testdb

import (
	"context"
	"io/fs"
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
	db, err := format.Open(Build(t, src))
	if err != nil {
		t.Fatalf("opening test table: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Sample builds and opens the embedded sample (testdata/sample).
func Sample(t testing.TB) *format.DB {
	t.Helper()
	return Open(t, lnpdb.Sample())
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
