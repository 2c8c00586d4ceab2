package live

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var mini = os.DirFS("../../../../../format/testdata/mini")

// replace renames a copy of b over path, as an operator replaces a table.
func replace(t *testing.T, path string, b []byte) {
	tmp := filepath.Join(filepath.Dir(path), ".incoming")
	require.NoError(t, os.WriteFile(tmp, b, 0o644))
	require.NoError(t, os.Rename(tmp, path))
}

// openMini builds mini into the test's directory and opens it verified, as
// serve does; the table is closed when the test ends.
func openMini(t *testing.T) (string, *format.DB) {
	t.Helper()
	path := testdb.Build(t, mini)
	db, err := format.OpenWriter(path, format.Verify())
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return path, db
}

func TestWatchReloadsAndRefusesDamage(t *testing.T) {
	path, db := openMini(t)
	good, err := os.ReadFile(path)
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	r, err := Start(Config{DB: db, Watch: 5 * time.Millisecond, Registerer: reg})
	require.NoError(t, err)
	defer r.Stop()

	replace(t, path, good)
	require.Eventually(t, func() bool { return r.Status().Reloads == 1 }, 10*time.Second, 5*time.Millisecond)

	bad := append([]byte(nil), good...)
	bad[len(bad)/2] ^= 0x40
	replace(t, path, bad)
	require.Eventually(t, func() bool { return r.Status().ReloadFailures == 1 }, 10*time.Second, 5*time.Millisecond)
	st := r.Status()
	assert.NotEmpty(t, st.LastReloadError)
	assert.Equal(t, 1, st.Reloads)
	assert.Equal(t, 1.0, testutil.ToFloat64(r.metrics.reloads.WithLabelValues("failed")))
	_, err = db.Get(2025550123, format.FieldPorted)
	require.NoError(t, err, "the previous table keeps serving")
	time.Sleep(30 * time.Millisecond)
	assert.Equal(t, 1, r.Status().ReloadFailures, "a bad file is tried once, not at every tick")
}

// Past the threshold, an applied batch starts a compaction; Stop waits for
// it, and the compacted file is the one served.
func TestThresholdCompactionAndStop(t *testing.T) {
	db := testdb.Open(t, mini)
	r, err := Start(Config{DB: db, CompactAt: 2})
	require.NoError(t, err)
	require.NoError(t, db.Apply([]format.Update{{Action: format.Add, TN: 2025550199, LRN: 2025569000, SPID: "2002"}}))
	r.Applied()
	assert.Equal(t, 1, r.Status().PendingUpdates, "below the threshold")
	require.NoError(t, db.Apply([]format.Update{{Action: format.Add, TN: 2025550198, LRN: 2025569000, SPID: "2002"}}))
	r.Applied()
	require.Eventually(t, func() bool { return r.Status().PendingUpdates == 0 }, 20*time.Second, 5*time.Millisecond)
	r.Stop()
	assert.False(t, r.StartCompaction("after stop"), "a stopped Runner starts nothing")
	rec, err := db.Get(2025550198, format.FieldPorted)
	require.NoError(t, err)
	assert.Equal(t, "12025569000", rec.Ported.LRN)
}

// TestHugePageGauge: the registry's lnpdb_table_huge_page_bytes reads the
// table's huge-page bytes at each scrape, -1 once it is closed.
func TestHugePageGauge(t *testing.T) {
	_, db := openMini(t)
	reg := prometheus.NewRegistry()
	r, err := Start(Config{DB: db, Registerer: reg})
	require.NoError(t, err)
	defer r.Stop()
	gauge := func() float64 {
		mfs, err := reg.Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			if mf.GetName() == "lnpdb_table_huge_page_bytes" {
				return mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		t.Fatal("no lnpdb_table_huge_page_bytes")
		return 0
	}
	assert.Equal(t, float64(db.HugePageBytes()), gauge())
	if runtime.GOOS == "linux" {
		assert.GreaterOrEqual(t, gauge(), 0.0, "a mapped table on Linux")
	}
	require.NoError(t, db.Close())
	assert.Equal(t, -1.0, gauge(), "closed")
}

// TestMetricsFromTheStart: the table's build time is a gauge, and every
// reload and compaction result is exported at 0 before the first one, so
// that an alert on increase(...{result="failed"}) sees the first failure.
func TestMetricsFromTheStart(t *testing.T) {
	_, db := openMini(t)
	reg := prometheus.NewRegistry()
	r, err := Start(Config{DB: db, Registerer: reg})
	require.NoError(t, err)
	defer r.Stop()
	for _, name := range []string{"lnpdb_table_reloads_total", "lnpdb_compactions_total"} {
		for _, result := range []string{"ok", "failed"} {
			n, err := testutil.GatherAndCount(reg, name)
			require.NoError(t, err)
			assert.Equal(t, 2, n, "%s has a series per result", name)
			assert.Zero(t, testutil.ToFloat64(r.metrics.reloads.WithLabelValues(result)))
		}
	}
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var built float64
	for _, mf := range mfs {
		if mf.GetName() == "lnpdb_table_built_timestamp_seconds" {
			built = mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	assert.Equal(t, float64(db.Info().BuiltAt.Unix()), built)
	assert.Positive(t, built)
}
