package format_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/benchdata"
)

// overlayBenchPorted is the table the overlay benchmark reads: its ported
// numbers are also the numbers it updates.
const overlayBenchPorted = 1000000

// BenchmarkGetOverlay measures the LRN read (FieldPorted) on random keys,
// half hits and half misses, with no pending update, with 100k pending and
// with an update pending for every ported number of the table, side by
// side in one run.
func BenchmarkGetOverlay(b *testing.B) {
	t := benchdata.Get(b, overlayBenchPorted)
	updates := portedUpdates(b, filepath.Join(t.Src, "ported.csv"))
	for _, c := range []struct {
		name    string
		updates []format.Update
	}{
		{"empty", nil},
		{"100k-pending", updates[:100000]}, // lnpdb serve's default --compact-at
		{sizeName(len(updates)) + "-pending", updates},
	} {
		b.Run(c.name, func(b *testing.B) {
			db := openCopy(b, t.Path)
			const batch = 10000
			for i := 0; i < len(c.updates); i += batch {
				if err := db.Apply(c.updates[i:min(i+batch, len(c.updates))]); err != nil {
					b.Fatal(err)
				}
			}
			if got := db.PendingUpdates(); got != len(c.updates) {
				b.Fatalf("%d pending updates, want %d", got, len(c.updates))
			}
			benchGet(b, db, t, format.FieldPorted)
		})
	}
}

// openCopy opens a copy of the table at path in the benchmark's temporary
// directory, so that updates journal there.
func openCopy(b *testing.B, path string) *format.DB {
	b.Helper()
	src, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	cp := filepath.Join(b.TempDir(), "table.lnpdb")
	dst, err := os.Create(cp)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		b.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		b.Fatal(err)
	}
	db, err := format.OpenWriter(cp)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// portedUpdates turns every row of a generated ported.csv into a Modify
// that gives the number the LRN of the row before it.
func portedUpdates(b *testing.B, path string) []format.Update {
	b.Helper()
	var out []format.Update
	prevLRN := uint64(0)
	err := benchdata.EachRow(path, func(_, rec []string) error { // tn,lrn,spid,activated_at
		tn, err1 := strconv.ParseUint(rec[0], 10, 64)
		lrn, err2 := strconv.ParseUint(rec[1], 10, 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("%s: bad row %q", path, rec)
		}
		if prevLRN == 0 {
			prevLRN = lrn
		}
		out = append(out, format.Update{Action: format.Modify, TN: tn, LRN: prevLRN, SPID: rec[2], ActivatedAt: 1790000000})
		prevLRN = lrn
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return out
}
