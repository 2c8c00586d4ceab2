package format_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// collectPorted walks db's ported numbers, checking each against Get and
// the order, and returns them.
func collectPorted(t *testing.T, db *format.DB) []uint64 {
	t.Helper()
	var err error
	var tns []uint64
	for tn, p := range db.PortedNumbers(&err) {
		if len(tns) > 0 {
			require.Greater(t, tn, tns[len(tns)-1], "numbers in ascending order")
		}
		tns = append(tns, tn)
		rec, gerr := db.Get(tn, format.FieldPorted)
		require.NoError(t, gerr)
		require.True(t, p.OK, "%d", tn)
		require.Equal(t, rec.Ported, p, "%d", tn)
	}
	require.NoError(t, err)
	return tns
}

func TestPortedNumbersAreTheTables(t *testing.T) {
	db := testdb.Sample(t)
	tns := collectPorted(t, db)
	require.NotEmpty(t, tns)
	assert.Len(t, tns, db.Info().Counts.Ported)
}

func TestPortedNumbersSeeUpdates(t *testing.T) {
	db := testdb.Sample(t)
	before := collectPorted(t, db)
	gone, added := before[1], before[0]+1 // a number between the first two
	if added == gone {
		added = before[len(before)-1] + 1
	}
	changed := before[2]
	require.NoError(t, db.Apply([]format.Update{
		{Action: format.Delete, TN: gone},
		{Action: format.Add, TN: added, LRN: 2025569000, SPID: "0987", ActivatedAt: 1700000000},
		{Action: format.Modify, TN: changed, LRN: 2025569001, SPID: "0987"},
	}))
	after := collectPorted(t, db) // each checked against Get, which merges the updates
	assert.Len(t, after, len(before))
	assert.NotContains(t, after, gone)
	assert.Contains(t, after, added)
	var err error
	for tn, p := range db.PortedNumbers(&err) {
		if tn == changed {
			assert.Equal(t, "12025569001", p.LRN)
		}
	}
	require.NoError(t, err)
}

func TestPortedNumbersStopEarly(t *testing.T) {
	db := testdb.Sample(t)
	require.NoError(t, db.Apply([]format.Update{{Action: format.Add, TN: 2025550199, LRN: 2025569000, SPID: "0987"}}))
	for stop := 1; stop <= 3; stop++ {
		n := 0
		for range db.PortedNumbers(nil) {
			n++
			if n == stop {
				break
			}
		}
		assert.Equal(t, stop, n)
	}
	n := 0
	for range db.Blocks(nil) {
		n++
		break
	}
	assert.Equal(t, 1, n)
}

func TestPortedNumbersAllocatePerIteration(t *testing.T) {
	db := testdb.Sample(t)
	walk := func(limit int) float64 {
		return testing.AllocsPerRun(20, func() {
			n := 0
			for range db.PortedNumbers(nil) {
				if n++; n == limit {
					break
				}
			}
		})
	}
	one, all := walk(1), walk(-1)
	assert.Equal(t, one, all, "allocations of one number and of every number")
	blocks := testing.AllocsPerRun(20, func() {
		for range db.Blocks(nil) {
		}
	})
	assert.Zero(t, blocks, "Blocks")
}

func TestBlocksAreTheTables(t *testing.T) {
	db := testdb.Sample(t)
	var err error
	var prev format.BlockRange
	codes, thousands := 0, 0
	splitZero := map[uint64]bool{} // codes whose thousands block 0 is assigned
	var rows []format.BlockRange
	for r, b := range db.Blocks(&err) {
		if len(rows) > 0 {
			require.True(t, r.First > prev.First || r.First == prev.First && r.Size < prev.Size, "%v after %v", r, prev)
		}
		prev = r
		rows = append(rows, r)
		require.True(t, b.Assigned)
		switch r.Size {
		case 10000:
			codes++
			require.False(t, b.Thousands)
		case 1000:
			thousands++
			require.True(t, b.Thousands)
			if r.First%10000 == 0 {
				splitZero[r.First] = true
			}
			rec, gerr := db.Get(r.First, 0)
			require.NoError(t, gerr)
			require.Equal(t, rec.Block, b, "%d", r.First)
		default:
			t.Fatalf("block %v: size", r)
		}
	}
	require.NoError(t, err)
	require.NotZero(t, codes)
	require.NotZero(t, thousands)
	for _, r := range rows {
		if r.Size == 10000 && !splitZero[r.First] {
			rec, gerr := db.Get(r.First, 0)
			require.NoError(t, gerr)
			require.False(t, rec.Block.Thousands, "%d", r.First)
		}
	}
	c := db.Info().Counts
	assert.Equal(t, c.ThousandsBlocks, thousands)
	assert.Equal(t, c.Codes, codes)
}

func TestIterateDuringReload(t *testing.T) {
	db := testdb.Sample(t)
	want := len(collectPorted(t, db))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 20 {
			if err := db.Reload(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for range 20 {
		var err error
		n := 0
		for range db.PortedNumbers(&err) {
			n++
		}
		require.NoError(t, err)
		require.Equal(t, want, n)
		for range db.Blocks(&err) {
		}
		require.NoError(t, err)
	}
	wg.Wait()
}

func TestIterateClosed(t *testing.T) {
	db := testdb.Sample(t)
	require.NoError(t, db.Close())
	err := error(nil)
	for range db.PortedNumbers(&err) {
		t.Fatal("a closed table yields nothing")
	}
	require.ErrorIs(t, err, format.ErrClosed)
	for range db.Blocks(&err) {
		t.Fatal("a closed table yields nothing")
	}
	require.ErrorIs(t, err, format.ErrClosed)
}
