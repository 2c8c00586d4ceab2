package gen

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func stringsReader(s string) io.Reader { return strings.NewReader(s) }

var allFiles = []string{FileCarriers, FileRateCenters, FileBlocks, FilePorted, FileMessaging, FileCNAM, FileTrust}

// small is a configuration that exercises every path in well under a second.
var small = Config{Seed: 42, Ported: 20_000, Codes: 300, Carriers: 80, Messaging: 0.3, CNAM: 0.3, Trust: 0.1}

func generate(t *testing.T, cfg Config) (string, Stats) {
	t.Helper()
	dir := t.TempDir()
	st, err := Generate(context.Background(), dir, cfg)
	require.NoError(t, err)
	return dir, st
}

func TestGenerateConsistent(t *testing.T) {
	dir, st := generate(t, small)
	d := readDir(t, dir)

	assert.EqualValues(t, small.Carriers, st.Carriers)
	assert.Len(t, d.carriers, int(st.Carriers))
	assert.Len(t, d.rateCenters, int(st.RateCenters))
	assert.EqualValues(t, small.Codes, st.Codes)
	assert.Len(t, d.codes, int(st.Codes))
	assert.Len(t, d.blocks, int(st.Blocks-st.Codes))
	assert.EqualValues(t, small.Ported, st.Ported)
	assert.Len(t, d.ported, small.Ported)
	assert.Len(t, d.messaging, int(st.Messaging))
	assert.Len(t, d.cnam, int(st.CNAM))
	assert.Len(t, d.trust, int(st.Trust))
	var size int64
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, len(allFiles), "no temporary file is left behind")
	for _, e := range entries {
		fi, err := e.Info()
		require.NoError(t, err)
		size += fi.Size()
	}
	assert.Equal(t, size, st.Bytes)

	// Shape: the shares asked for, about half the codes split, pooled
	// blocks mostly held by other carriers, ports mostly to a new carrier,
	// both time formats, and clustering in busy codes.
	listed := float64(small.Ported) * (1 + 1.0/unportedListed)
	assert.InEpsilon(t, small.Messaging*listed, float64(st.Messaging), 0.1)
	assert.InEpsilon(t, small.Trust*listed, float64(st.Trust), 0.15)
	split := map[int]bool{}
	pooled, foreign := 0, 0
	for k, b := range d.blocks {
		split[k/10] = true
		if b.lrn != "" {
			pooled++
			if b.ocn != d.codes[k/10].ocn {
				foreign++
			}
		}
	}
	assert.InDelta(t, 0.5, float64(len(split))/float64(len(d.codes)), 0.1, "share of split codes")
	assert.Greater(t, pooled, 100)
	assert.Greater(t, float64(foreign)/float64(pooled), 0.6)
	moved, npac := 0, 0
	perCode := map[int]int{}
	lrns := map[string]bool{}
	for tn, p := range d.ported {
		if p.spid != d.owner(tn).ocn {
			moved++
		}
		if p.npac {
			npac++
		}
		perCode[codeOf(tn)]++
		lrns[p.lrn] = true
	}
	assert.Greater(t, float64(moved)/float64(len(d.ported)), 0.75, "ports go to another carrier")
	assert.InDelta(t, 0.55, float64(npac)/float64(len(d.ported)), 0.05, "share of NPAC timestamps")
	busiest := 0
	for _, n := range perCode {
		busiest = max(busiest, n)
	}
	assert.Greater(t, busiest, 10*small.Ported/small.Codes, "ports cluster in busy codes")
	assert.Greater(t, len(lrns), 100)
	refIDs := map[string]bool{}
	for _, m := range d.messaging {
		refIDs[m.refID] = true
	}
	assert.Less(t, len(refIDs), len(d.messaging)/5, "reference ids are shared")
}

// readFile returns the content of dir/name.
func readFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	return b
}

func TestGenerateDeterministic(t *testing.T) {
	cfg := small
	cfg.Ported = 5000
	a, _ := generate(t, cfg)
	b, _ := generate(t, cfg)
	cfg.Seed++
	c, _ := generate(t, cfg)
	for _, f := range allFiles {
		x, y, z := readFile(t, a, f), readFile(t, b, f), readFile(t, c, f)
		assert.True(t, bytes.Equal(x, y), "%s differs between two runs with the same seed", f)
		if f != FileRateCenters { // the reference table does not depend on the seed
			assert.False(t, bytes.Equal(x, z), "%s is the same for another seed", f)
		}
	}
}

func TestGenerateDefaults(t *testing.T) {
	dir, st := generate(t, Config{Seed: 1})
	assert.EqualValues(t, 500, st.Codes, "codes default to 500 at small sizes")
	assert.EqualValues(t, 50, st.Carriers, "carriers default to codes/10 at small sizes")
	assert.Zero(t, st.Ported+st.Messaging+st.CNAM+st.Trust)
	b, err := os.ReadFile(filepath.Join(dir, FilePorted))
	require.NoError(t, err)
	assert.Equal(t, "tn,lrn,spid,activated_at,sv_type\n", string(b))
	d := readDir(t, dir)
	assert.Contains(t, d.codes, sampleNPA*1000+sampleNXX, "202-555 is always assigned")
}

func TestGenerateErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		msg  string
	}{
		{"negative ported", Config{Ported: -1}, "negative"},
		{"negative codes", Config{Codes: -1}, "negative"},
		{"negative carriers", Config{Carriers: -1}, "negative"},
		{"share above 1", Config{Messaging: 1.5}, "between 0 and 1"},
		{"NaN share", Config{CNAM: nanValue()}, "between 0 and 1"},
		{"too many codes", Config{Codes: 1_000_000}, "hold at most"},
		{"too many ported", Config{Codes: 10, Ported: 100_001}, "raise --codes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := Generate(context.Background(), dir, tc.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
			entries, _ := os.ReadDir(dir)
			assert.Empty(t, entries)
		})
	}
}

func nanValue() float64 { var z float64; return z / z }

func TestGenerateCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	_, err := Generate(ctx, dir, Config{Ported: 1000})
	require.ErrorIs(t, err, context.Canceled)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "a canceled run leaves no file behind")
}

func TestProgressSilentOffTerminal(t *testing.T) {
	var buf bytes.Buffer
	_, err := Generate(context.Background(), t.TempDir(), Config{Ported: 1000, Progress: &buf})
	require.NoError(t, err)
	assert.Empty(t, buf.String())
}

func TestTimeFormats(t *testing.T) {
	r := newRNG(1, 1)
	for range 10_000 {
		sec := int64(r.intn(int(nowUnix)))
		want := time.Unix(sec, 0).UTC()
		assert.Equal(t, want.Format("20060102150405"), string(appendNPAC(nil, sec)))
		assert.Equal(t, want.Format(time.RFC3339), string(appendRFC3339(nil, sec, 0, true)))
		off := rfcOffsets[r.intn(len(rfcOffsets))]
		got, err := time.Parse(time.RFC3339, string(appendRFC3339(nil, sec, off, false)))
		require.NoError(t, err)
		assert.Equal(t, sec, got.Unix())
		_, o := got.Zone()
		assert.Equal(t, off*60, o)
	}
}

func TestAllocate(t *testing.T) {
	w := []float64{10, 5, 1, 1, 0.1}
	caps := []int{8, 100, 100, 3, 100}
	for _, total := range []int{0, 1, 7, 50, 211, 311} {
		got, err := allocate(total, w, caps)
		require.NoError(t, err)
		sum := 0
		for i, n := range got {
			assert.LessOrEqual(t, n, caps[i])
			sum += n
		}
		assert.Equal(t, total, sum)
	}
	got, err := allocate(50, w, caps)
	require.NoError(t, err)
	assert.Equal(t, 8, got[0], "the heaviest is capped")
	assert.Greater(t, got[1], got[2])
	_, err = allocate(312, w, caps)
	assert.ErrorIs(t, err, errNoRoom)
}

func TestCNAMNames(t *testing.T) {
	r := newRNG(3, 3)
	long := 0
	for range 5000 {
		name := string(appendCNAM(nil, &r))
		require.LessOrEqual(t, len(name), maxCNAM)
		require.Regexp(t, cnamRE, name)
		if len(name) == maxCNAM {
			long++
		}
	}
	assert.Positive(t, long, "some names are cut at 15 characters")
}

// BenchmarkGenerate writes about a million ported numbers (and the
// messaging, CNAM and trust rows that go with them) and reports rows/s.
func BenchmarkGenerate(b *testing.B) {
	cfg := Config{Seed: 1, Ported: 1_000_000, Messaging: DefaultMessaging, CNAM: DefaultCNAM, Trust: DefaultTrust}
	dir := b.TempDir()
	var rows, size int64
	b.ResetTimer()
	for range b.N {
		st, err := Generate(context.Background(), dir, cfg)
		if err != nil {
			b.Fatal(err)
		}
		rows += st.Ported + st.Messaging + st.CNAM + st.Trust + st.Blocks
		size += st.Bytes
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(size)/b.Elapsed().Seconds()/1e6, "MB/s")
}
