package build_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/format/build"
	"github.com/lnpdb/lnpdb/internal/ingest/gen"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The checksums of tables written before ingest moved out of package
// format: the file's bytes are part of its contract, so a change of code
// that changes them is a change of format.
const (
	sampleSum    = 0x66e8b6db1cd15143 // testdata/sample at testdb.BuiltAt, 262455 bytes (format version 5)
	generatedSum = 0x6be79608405e0bee // gen seed 11, 30000 ported, default shares, 690057 bytes
	compactedSum = 0x181e01548953c5da // the sample with three updates compacted, build time zeroed
)

func sum(t *testing.T, path string) (uint64, []byte) {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return xxhash.Sum64(b), b
}

func TestTablesAreByteIdentical(t *testing.T) {
	dir := t.TempDir()
	sample := filepath.Join(dir, "sample.lnpdb")
	for _, mem := range []int64{0, 1} {
		_, err := build.Build(context.Background(), lnpdb.Sample(), sample, build.Options{BuiltAt: testdb.BuiltAt, MaxMemory: mem})
		require.NoError(t, err)
		got, b := sum(t, sample)
		assert.Equal(t, uint64(sampleSum), got, "sample, MaxMemory %d: %d bytes", mem, len(b))
	}

	src := filepath.Join(dir, "gen")
	require.NoError(t, os.Mkdir(src, 0o755))
	_, err := gen.Generate(context.Background(), src, gen.Config{Seed: 11, Ported: 30000, Messaging: gen.DefaultMessaging, CNAM: gen.DefaultCNAM, Trust: gen.DefaultTrust})
	require.NoError(t, err)
	generated := filepath.Join(dir, "gen.lnpdb")
	_, err = build.Build(context.Background(), os.DirFS(src), generated, build.Options{BuiltAt: testdb.BuiltAt})
	require.NoError(t, err)
	got, b := sum(t, generated)
	assert.Equal(t, uint64(generatedSum), got, "generated: %d bytes", len(b))

	_, err = build.Build(context.Background(), lnpdb.Sample(), sample, build.Options{BuiltAt: testdb.BuiltAt})
	require.NoError(t, err)
	db, err := format.OpenWriter(sample)
	require.NoError(t, err)
	require.NoError(t, db.Apply([]format.Update{
		{Action: format.Add, TN: 2025550199, LRN: 2025550001, SPID: "6731", ActivatedAt: 1700000000},
		{Action: format.Modify, TN: 2014814567, LRN: 3125550000, SPID: "1748", ActivatedAt: 1700000001, SVType: format.SVTypeVoWiFi},
		{Action: format.Delete, TN: 2025556480},
	}))
	require.NoError(t, db.Compact(context.Background()))
	rec, err := db.Get(2014814567, format.FieldPorted)
	require.NoError(t, err)
	assert.Equal(t, format.SVTypeVoWiFi, rec.Ported.SVType, "compaction keeps an update's SV Type")
	rec, err = db.Get(2014811095, format.FieldPorted)
	require.NoError(t, err)
	assert.Equal(t, format.SVTypeWireless, rec.Ported.SVType, "and the table's")
	require.NoError(t, db.Close())
	_, b = sum(t, sample)
	clear(b[32:40]) // the build time, now
	clear(b[56:64]) // the header's checksum, which covers it
	assert.Equal(t, uint64(compactedSum), xxhash.Sum64(b), "compacted: %d bytes", len(b))
}
