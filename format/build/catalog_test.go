package build

import (
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/internal/ingest/source"
)

// TestSniffExamples: every example file of testdata/npac is recognised as
// its kind, from its first record alone.
func TestSniffExamples(t *testing.T) {
	for name, want := range map[string]Kind{
		"active.sv.txt": KindSV, "latest.sv.txt": KindSV, "figure-e1.sv.txt": KindSV,
		"active.nbp.txt": KindPoolBlocks, "spid.txt": KindSPID, "lrn.txt": KindLRN,
		"npanxx.txt": KindNPANXX, "npanxxx.txt": KindNPANXXX, "active.sv.golden.json": KindUnknown,
	} {
		k, err := sniff(os.DirFS("../../testdata/npac"), name)
		require.NoError(t, err)
		assert.Equal(t, want, k, name)
	}
	assert.Equal(t, KindUnknown, sniffRecord([]byte("tn,lrn,spid,activated_at")))
	for _, name := range []string{"allutlzd.txt", "AllBlocksAugmentedReport.txt"} {
		k, err := sniff(os.DirFS("../../testdata/numbering"), name)
		require.NoError(t, err)
		assert.Equal(t, KindNumbering, k, name)
	}
}

func FuzzSniffRecord(f *testing.F) {
	for _, name := range []string{"active.sv.txt", "active.nbp.txt", "spid.txt", "lrn.txt", "npanxx.txt", "npanxxx.txt"} {
		b, err := os.ReadFile(filepath.Join("../../testdata/npac", name))
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte("|"))
	f.Add([]byte("1|303-555-1|3035550000|AB1C|"))
	f.Fuzz(func(t *testing.T, rec []byte) {
		k := sniffRecord(rec)
		require.NotEmpty(t, k)
	})
}

// TestSniffDamagedAndBlankFirst: a compressed file that does not
// decompress is an error, not a foreign file; a CR file whose first
// records are blank is recognised by its first record with fields.
func TestSniffDamagedAndBlankFirst(t *testing.T) {
	fsys := fstest.MapFS{
		"sv.dat.gz":  {Data: []byte("not gzip at all")},
		"sv.dat.zst": {Data: []byte("not zstd at all, long enough to be read as a frame")},
		"cr.dat":     {Data: []byte("\r\r  \r1|2025550123|2025550000|AB1C|20240102030405\r")},
	}
	_, err := sniff(fsys, "sv.dat.gz")
	assert.ErrorContains(t, err, "sv.dat.gz")
	_, err = sniff(fsys, "sv.dat.zst")
	assert.Error(t, err)
	k, err := sniff(fsys, "cr.dat")
	require.NoError(t, err)
	assert.Equal(t, KindSV, k)
}

// TestCarrierType: an NPAC service provider type's carrier type.
func TestCarrierType(t *testing.T) {
	for typ, want := range map[source.SPType]string{
		source.SPTypeWireline: "LEC", source.SPTypeWireless: "WIRELESS",
		source.SPTypeClass1InterconnectedVoIP: "VOIP", source.SPTypeNonCarrier: "NONCARRIER",
		source.SPTypeNone: "", 4: "",
	} {
		assert.Equal(t, want, carrierType(typ), "%d", typ)
	}
}
