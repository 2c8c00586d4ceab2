package format_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format/build"
)

// BenchmarkBuild builds the sample with every row in memory and with a
// budget small enough that rows go through spill files, to show what
// spilling costs. `lnpdb gen` and `lnpdb build --max-memory-mib` measure
// the same at scale.
func BenchmarkBuild(b *testing.B) {
	for _, c := range []struct {
		name   string
		budget int64
	}{{"memory", -1}, {"spilled", 16 << 10}} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			out := filepath.Join(dir, "t.lnpdb")
			b.ReportAllocs()
			for b.Loop() {
				if _, err := build.Build(context.Background(), lnpdb.Sample(), out, build.Options{MaxMemory: c.budget}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
