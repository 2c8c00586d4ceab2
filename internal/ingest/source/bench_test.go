package source

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// portedFiles generates the same n ported numbers as ported.csv and as NPAC
// bulk data: valid NANP numbers in busy codes, a few hundred LRNs, a few
// thousand SPIDs, most with an activation time.
func portedFiles(n int) (csvData, npacData []byte) {
	var c, p bytes.Buffer
	c.WriteString("tn,lrn,spid,activated_at\n")
	x := uint64(88172645463325252) // xorshift, for a fixed data set
	next := func() uint64 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return x
	}
	for i := range n {
		r := next()
		npa := (2+r%8)*100 + (r>>3)%9*10 + 2 + (r>>7)%8 // second digit not 9, third not 1
		nxx := 202 + (r>>8)%700                         // 202..901
		if nxx%100 == 11 {
			nxx++
		}
		tn := fmt.Sprintf("%d%03d%04d", npa, nxx, (r>>20)%10000)
		lrnNXX := 202 + (r>>34)%300
		if lrnNXX%100 == 11 {
			lrnNXX++
		}
		lrn := fmt.Sprintf("1%d%03d0000", npa, lrnNXX)
		spid := fmt.Sprintf("%04d", (r>>44)%3000)
		ts := ""
		if r%10 != 0 {
			ts = fmt.Sprintf("20%02d%02d%02d%02d%02d%02d", 10+(r>>50)%15, 1+(r>>54)%12, 1+(r>>58)%28, r%24, r%60, (r>>3)%60)
		}
		fmt.Fprintf(&c, "%s,%s,%s,%s\n", tn, lrn, spid, ts)
		fmt.Fprintf(&p, "%d|%s|%s|%s|%s\n", i+1, tn, lrn, spid, ts)
	}
	return c.Bytes(), p.Bytes()
}

var benchData = sync.OnceValues(func() ([]byte, []byte) { return portedFiles(1_000_000) })

func benchmarkPorted(b *testing.B, read readFunc[Ported], data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var rows int
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	for b.Loop() {
		rows = 0
		err := read(bytes.NewReader(data), "bench", Options{}, func(*Ported) error {
			rows++
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	runtime.ReadMemStats(&ms1)
	total := float64(rows) * float64(b.N)
	b.ReportMetric(total/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/total, "allocs/row")
}

func BenchmarkReadPorted(b *testing.B) {
	c, _ := benchData()
	benchmarkPorted(b, ReadPorted, c)
}

func BenchmarkReadPortedNPAC(b *testing.B) {
	_, p := benchData()
	benchmarkPorted(b, ReadPortedNPAC, p)
}

// TestPortedAllocs guards the allocation budget: one allocation a CSV row
// (encoding/csv's string for the record), none an NPAC record.
func TestPortedAllocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("instrumented build")
	}
	c, p := portedFiles(2000)
	count := func(read readFunc[Ported], data []byte) float64 {
		var err error
		allocs := testing.AllocsPerRun(5, func() {
			err = read(bytes.NewReader(data), "f", Options{}, func(*Ported) error { return nil })
		})
		require.NoError(t, err)
		return allocs
	}
	// Per-file costs (buffers, SPID table) are bounded by the 3000 SPIDs.
	assert.Less(t, count(ReadPorted, c), 2000.0+2*3000+100)
	assert.Less(t, count(ReadPortedNPAC, p), 2*3000.0+100)

	// With the SPIDs already seen, the per-row costs stand alone.
	one := func(data []byte, header string, lines int) []byte {
		var b strings.Builder
		b.WriteString(header)
		row := strings.SplitN(string(data), "\n", 3)[strings.Count(header, "\n")]
		for range lines {
			b.WriteString(row + "\n")
		}
		return []byte(b.String())
	}
	assert.Less(t, count(ReadPorted, one(c, "tn,lrn,spid,activated_at\n", 5000)), 5000.0+50)
	assert.Less(t, count(ReadPortedNPAC, one(p, "", 5000)), 50.0)
}
