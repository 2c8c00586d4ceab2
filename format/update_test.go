package format_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/format/build"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func openMini(t *testing.T) (*format.DB, string) {
	path := testdb.Build(t, mini)
	db, err := format.OpenWriter(path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db, path
}

func ported(t *testing.T, db *format.DB, tn uint64) format.Ported {
	t.Helper()
	r, err := db.Get(tn, format.FieldPorted)
	require.NoError(t, err)
	return r.Ported
}

func TestApplyIsVisibleAtOnce(t *testing.T) {
	db, _ := openMini(t)
	require.False(t, ported(t, db, 2025550199).OK)
	require.NoError(t, db.Apply([]format.Update{
		{Action: format.Add, TN: 2025550199, LRN: 2025569000, SPID: "3003", ActivatedAt: 1700000000},
		{Action: format.Modify, TN: 2025550123, LRN: 3122009999, SPID: "4004"},
		{Action: format.Delete, TN: 3122001234},
	}))
	p := ported(t, db, 2025550199)
	assert.True(t, p.OK)
	assert.Equal(t, "12025569000", p.LRN)
	assert.Equal(t, "3003", p.Carrier.OCN)
	assert.Equal(t, "Beltway Voice", p.Carrier.Name, "the SPID resolves to the table's carrier")
	assert.Equal(t, int64(1700000000), p.ActivatedAt)
	assert.Equal(t, "13122009999", ported(t, db, 2025550123).LRN)
	assert.False(t, ported(t, db, 3122001234).OK, "a deleted port routes by its block again")
	assert.Equal(t, 3, db.PendingUpdates())

	out := make([]format.Record, 3)
	require.NoError(t, db.GetMany([]uint64{2025550199, 2025550123, 3122001234}, format.FieldPorted, out))
	assert.Equal(t, "12025569000", out[0].Ported.LRN, "GetMany sees the overlay too")
	assert.Equal(t, "13122009999", out[1].Ported.LRN)
	assert.False(t, out[2].Ported.OK)
}

func TestApplyRefusesBadBatchWhole(t *testing.T) {
	db, path := openMini(t)
	bad := [][]format.Update{
		{{Action: format.Add, TN: 2025550199, LRN: 2025569000, SPID: "3003"}, {Action: format.Add, TN: 2025550198, LRN: 2025569000, SPID: "ZZZZ"}},
		{{Action: format.Add, TN: 2025570001, LRN: 2025569000, SPID: "3003"}},
		{{Action: format.Add, TN: 1025550123, LRN: 2025569000, SPID: "3003"}},
		{{Action: format.Add, TN: 2025550123, LRN: 55, SPID: "3003"}},
		{{Action: 'X', TN: 2025550123}},
	}
	for _, batch := range bad {
		err := db.Apply(batch)
		require.ErrorIs(t, err, format.ErrInvalidUpdate)
	}
	assert.False(t, ported(t, db, 2025550199).OK, "nothing of a refused batch is applied")
	assert.Zero(t, db.PendingUpdates())
	_, err := os.Stat(format.JournalPath(path))
	assert.ErrorIs(t, err, os.ErrNotExist, "no journal is written for refused batches")
}

func TestJournalReplayAndTornTail(t *testing.T) {
	db, path := openMini(t)
	for i := range 3 {
		require.NoError(t, db.Apply([]format.Update{{Action: format.Add, TN: 2025550190 + uint64(i), LRN: 2025569000, SPID: "2002"}}))
	}
	require.NoError(t, db.Close())

	// A crash in the middle of appending a fourth record.
	jp := format.JournalPath(path)
	f, err := os.OpenFile(jp, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte("torn record bytes"))
	require.NoError(t, err)
	require.NoError(t, f.Close())

	db, err = format.OpenWriter(path)
	require.NoError(t, err)
	for i := range 3 {
		assert.True(t, ported(t, db, 2025550190+uint64(i)).OK, "acknowledged update %d replayed", i)
	}
	require.NoError(t, db.Apply([]format.Update{{Action: format.Add, TN: 2025550195, LRN: 2025569000, SPID: "2002"}}))
	require.NoError(t, db.Close())
	st, err := os.Stat(jp)
	require.NoError(t, err)
	assert.Equal(t, int64(16+4*(56+104)), st.Size(), "the torn tail was cut before the next append")

	db, err = format.OpenWriter(path)
	require.NoError(t, err)
	assert.True(t, ported(t, db, 2025550195).OK)
	assert.Equal(t, 4, db.PendingUpdates())
	require.NoError(t, db.Close())

	// A flipped byte inside an earlier, committed batch is damage, not a
	// torn tail: Open refuses the journal, naming it and the offset,
	// instead of dropping the acknowledged batches after it.
	b, err := os.ReadFile(jp)
	require.NoError(t, err)
	b[16+160+20] ^= 1
	require.NoError(t, os.WriteFile(jp, b, 0o644))
	_, err = format.OpenWriter(path)
	require.ErrorIs(t, err, format.ErrJournalCorrupt)
	assert.Contains(t, err.Error(), jp)
	assert.Contains(t, err.Error(), "offset 176")
	rep, err := format.CheckJournal(path)
	require.NoError(t, err)
	require.Error(t, rep.Damage)
	assert.Equal(t, 3, rep.Batches, "three batches still verify")
	assert.Equal(t, 1, rep.LostUpdates)

	// Recovery sets the damaged journal aside and keeps what verifies.
	rep, err = format.RecoverJournal(path)
	require.NoError(t, err)
	assert.FileExists(t, rep.SetAsideAs)
	aside, err := os.ReadFile(rep.SetAsideAs)
	require.NoError(t, err)
	assert.Equal(t, b, aside, "set aside unchanged")
	db2, err := format.OpenWriter(path)
	require.NoError(t, err)
	defer db2.Close()
	for tn, want := range map[uint64]bool{2025550190: true, 2025550191: false, 2025550192: true, 2025550195: true} {
		assert.Equal(t, want, ported(t, db2, tn).OK, "%d", tn)
	}
}

func TestCompact(t *testing.T) {
	db, path := openMini(t)
	require.NoError(t, db.Apply([]format.Update{
		{Action: format.Add, TN: 2025550199, LRN: 6029998888, SPID: "3003", ActivatedAt: 1700000000},
		{Action: format.Delete, TN: 3122001234},
		{Action: format.Modify, TN: 2025550123, LRN: 2025569000, SPID: "4004"},
	}))
	before := db.Info()
	require.NoError(t, db.Compact(context.Background()))
	assert.Zero(t, db.PendingUpdates(), "compaction folds every pending update into the file")
	after := db.Info()
	assert.Equal(t, before.Counts.Ported, after.Counts.Ported, "one added, one deleted")
	assert.Equal(t, before.Counts.LRNs+1, after.Counts.LRNs, "the new LRN joins the dictionary")
	assert.Equal(t, "16029998888", ported(t, db, 2025550199).LRN)
	assert.False(t, ported(t, db, 3122001234).OK)
	assert.Equal(t, "4004", ported(t, db, 2025550123).Carrier.OCN)
	r, err := db.Get(2025553001, format.FieldAll)
	require.NoError(t, err)
	assert.Equal(t, "12025559999", r.Block.LRN, "block LRNs survive the LRN dictionary's renumbering")
	r, err = db.Get(2025550123, format.FieldAll)
	require.NoError(t, err)
	assert.Equal(t, "SMITH JOHN", r.CNAM.Name, "other sections are carried over")
	assert.Equal(t, "ref-001", r.Messaging.ReferenceID)
	require.NoError(t, db.Verify())

	st, err := os.Stat(format.JournalPath(path))
	require.NoError(t, err)
	assert.Equal(t, int64(16), st.Size(), "the journal is trimmed")
	require.NoError(t, db.Close())

	db, err = format.OpenWriter(path, format.Verify())
	require.NoError(t, err)
	defer db.Close()
	assert.Zero(t, db.PendingUpdates())
	assert.Equal(t, "16029998888", ported(t, db, 2025550199).LRN, "the compacted file holds the update")
}

func TestReloadKeepsPendingUpdates(t *testing.T) {
	db, path := openMini(t)
	require.NoError(t, db.Apply([]format.Update{{Action: format.Add, TN: 2025550199, LRN: 2025569000, SPID: "3003"}}))
	b, err := os.ReadFile(filepath.Join("testdata/mini", "ported.csv"))
	require.NoError(t, err)
	src := withFile(t, "ported.csv", strings.Replace(string(b), "3122001234,3122009999,1001,", "3122001234,3122008888,1001,", 1))
	_, err = build.Build(context.Background(), src, path, build.Options{})
	require.NoError(t, err)
	assert.Equal(t, "13122009999", ported(t, db, 3122001234).LRN, "the old mapping serves until Reload")
	require.NoError(t, db.Reload())
	assert.Equal(t, "13122008888", ported(t, db, 3122001234).LRN)
	assert.True(t, ported(t, db, 2025550199).OK, "pending updates stay on top of the new file")
}

// TestUpdatesUnderLoad hammers lookups while a writer flips numbers between
// two ported states and compactions swap snapshots: every answer must be one
// of the two states, whole, and never an error.
func TestUpdatesUnderLoad(t *testing.T) {
	db, _ := openMini(t)
	tns := []uint64{2025550123, 2025550124, 2025550150, 2025550151, 3122001234}
	states := [2]struct {
		lrn, spid string
		u         func(tn uint64) format.Update
	}{
		{"12025569000", "2002", func(tn uint64) format.Update {
			return format.Update{Action: format.Modify, TN: tn, LRN: 2025569000, SPID: "2002"}
		}},
		{"13122009999", "4004", func(tn uint64) format.Update {
			return format.Update{Action: format.Modify, TN: tn, LRN: 3122009999, SPID: "4004"}
		}},
	}
	var batch []format.Update
	for _, tn := range tns {
		batch = append(batch, states[0].u(tn))
	}
	require.NoError(t, db.Apply(batch))

	var stop atomic.Bool
	var lookups atomic.Int64
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := make([]format.Record, len(tns))
			for i := 0; !stop.Load(); i++ {
				tn := tns[(i+g)%len(tns)]
				r, err := db.Get(tn, format.FieldPorted)
				if err != nil {
					t.Errorf("Get(%d): %v", tn, err)
					return
				}
				p := r.Ported
				if !p.OK || !((p.LRN == states[0].lrn && p.Carrier.OCN == states[0].spid) || (p.LRN == states[1].lrn && p.Carrier.OCN == states[1].spid)) {
					t.Errorf("Get(%d) = %+v: not one of the two states", tn, p)
					return
				}
				if i%64 == 0 {
					if err := db.GetMany(tns, format.FieldPorted, out); err != nil {
						t.Errorf("GetMany: %v", err)
						return
					}
				}
				lookups.Add(1)
			}
		}()
	}
	r := rand.New(rand.NewPCG(1, 1))
	deadline := time.Now().Add(1500 * time.Millisecond)
	compactions := 0
	for i := 0; time.Now().Before(deadline); i++ {
		tn := tns[r.IntN(len(tns))]
		require.NoError(t, db.Apply([]format.Update{states[i%2].u(tn)}))
		if i%40 == 39 {
			require.NoError(t, db.Compact(context.Background()))
			compactions++
		}
	}
	stop.Store(true)
	wg.Wait()
	assert.Greater(t, lookups.Load(), int64(1000))
	assert.Greater(t, compactions, 0)
	require.NoError(t, db.Verify())
}

// TestCrashLosesNoAcknowledgedUpdate runs a child process that applies
// updates one at a time and reports each acknowledgement, kills it with
// SIGKILL at a random moment, and checks that every acknowledged update is
// there after reopening. Repeated, with compactions in the child.
func TestCrashLosesNoAcknowledgedUpdate(t *testing.T) {
	if os.Getenv("LNPDB_CRASH_CHILD") != "" {
		t.Skip("in the child")
	}
	path := testdb.Build(t, mini)
	r := rand.New(rand.NewPCG(5, 6))
	rounds := 6
	if testing.Short() {
		rounds = 2
	}
	acked := map[uint64]uint64{} // tn → LRN of its last acknowledged update
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v")
		cmd.Env = append(os.Environ(), "LNPDB_CRASH_CHILD="+path, "LNPDB_CRASH_ROUND="+strconv.Itoa(round))
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		// Killed after a random number of the child's lines (past its
		// first acknowledgement, however slowly the child starts), so the
		// kill lands while it applies, compacts or writes.
		killAfter := 3 + r.IntN(120)
		// The update in flight when the kill lands (tried, not acknowledged)
		// may or may not have survived; every acknowledged one must have.
		var inflight, inflightLRN uint64
		sc := bufio.NewScanner(stdout)
		for lines := 1; sc.Scan(); lines++ {
			if lines == killAfter {
				cmd.Process.Signal(syscall.SIGKILL)
			}
			var tn, lrn uint64
			if n, _ := fmt.Sscanf(sc.Text(), "try %d %d", &tn, &lrn); n == 2 {
				inflight, inflightLRN = tn, lrn
			}
			if n, _ := fmt.Sscanf(sc.Text(), "ack %d %d", &tn, &lrn); n == 2 {
				acked[tn] = lrn
				inflight = 0
			}
		}
		io.Copy(io.Discard, stdout)
		cmd.Wait()

		db, err := format.OpenWriter(path)
		require.NoError(t, err, "round %d", round)
		if inflight != 0 {
			// Whichever way it went, that is now the number's durable state.
			if p := ported(t, db, inflight); p.OK && p.LRN == "1"+strconv.FormatUint(inflightLRN, 10) {
				acked[inflight] = inflightLRN
			}
		}
		for tn, lrn := range acked {
			p := ported(t, db, tn)
			require.True(t, p.OK, "round %d: acknowledged add of %d lost", round, tn)
			require.Equal(t, "1"+strconv.FormatUint(lrn, 10), p.LRN, "round %d: %d", round, tn)
		}
		require.NoError(t, db.Close())
	}
	require.NotEmpty(t, acked, "the child acknowledged updates before it was killed")
}

// TestCrashChild is the child of TestCrashLosesNoAcknowledgedUpdate.
func TestCrashChild(t *testing.T) {
	path := os.Getenv("LNPDB_CRASH_CHILD")
	if path == "" {
		t.Skip("only run as the crash test's child")
	}
	round, _ := strconv.Atoi(os.Getenv("LNPDB_CRASH_ROUND"))
	db, err := format.OpenWriter(path)
	require.NoError(t, err)
	for i := 0; ; i++ {
		tn := 2025550000 + uint64((round*997+i)%10000)
		if tn/1000%10 == 3 || tn/1000%10 == 4 {
			continue // thousands-blocks of other carriers; any assigned number would do
		}
		lrn := 2025569000 + uint64(round)
		fmt.Printf("try %d %d\n", tn, lrn)
		if err := db.Apply([]format.Update{{Action: format.Add, TN: tn, LRN: lrn, SPID: "2002"}}); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("ack %d %d\n", tn, lrn)
		if i%25 == 24 {
			if err := db.Compact(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestHugePagesLiveUpdates: a table opened with HugePages takes updates,
// compacts and reloads as any other, and every file it swaps in is held
// the same way.
func TestHugePagesLiveUpdates(t *testing.T) {
	path := testdb.Build(t, mini)
	db, err := format.OpenWriter(path, format.HugePages())
	if err != nil && strings.Contains(err.Error(), "madvise") {
		t.Skipf("this kernel has no transparent huge pages: %v", err)
	}
	require.NoError(t, err)
	defer db.Close()
	want := db.Info().Placement
	require.Contains(t, []string{"anonymous huge-page copy", "huge-page tmpfs mapping"}, want)
	require.NoError(t, db.Apply([]format.Update{{Action: format.Add, TN: 2025550199, LRN: 6029998888, SPID: "3003"}}))
	assert.Equal(t, "16029998888", ported(t, db, 2025550199).LRN)
	require.NoError(t, db.Compact(context.Background()))
	assert.Equal(t, want, db.Info().Placement, "the compacted file is held as the first was")
	assert.Equal(t, "16029998888", ported(t, db, 2025550199).LRN)
	require.NoError(t, db.Apply([]format.Update{{Action: format.Delete, TN: 2025550199}}))
	require.NoError(t, db.Reload())
	assert.Equal(t, want, db.Info().Placement, "the reloaded file too")
	assert.False(t, ported(t, db, 2025550199).OK, "a pending delete stays on top of the reloaded file")
	require.NoError(t, db.Verify())
}

// TestHugePageBytes: a mapped table reports how much of it huge pages map,
// between none and all of it, and a closed one that it cannot tell.
func TestHugePageBytes(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux says which pages are huge")
	}
	path := testdb.Build(t, mini)
	for _, opts := range [][]format.Option{nil, {format.HugePages()}} {
		db, err := format.OpenWriter(path, opts...)
		require.NoError(t, err)
		n := db.HugePageBytes()
		t.Logf("%s: %d of %d bytes on huge pages", db.Info().Placement, n, db.Info().Size)
		assert.GreaterOrEqual(t, n, int64(0))
		assert.LessOrEqual(t, n, db.Info().Size)
		require.NoError(t, db.Close())
		assert.Equal(t, int64(-1), db.HugePageBytes(), "closed")
	}
}

// TestGetManyAfterDeletedPort: a number ported in the file, in a split
// code, whose port a pending update deleted, reads its thousands-block row
// in a batch as alone, also when the block is asked for only of numbers
// that are not ported (the batch's staging passed over its block).
func TestGetManyAfterDeletedPort(t *testing.T) {
	src, err := fs.ReadFile(mini, "ported.csv")
	require.NoError(t, err)
	db := testdb.Open(t, withFile(t, "ported.csv", string(src)+"2025553001,2025569000,3003,\n"))
	require.True(t, ported(t, db, 2025553001).OK)
	require.NoError(t, db.Apply([]format.Update{{Action: format.Delete, TN: 2025553001}}))
	tns := []uint64{2025553001, 2025550123, 2025553002}
	out := make([]format.Record, len(tns))
	for _, f := range []format.Fields{format.FieldPorted | format.BlockUnlessPorted, format.FieldPorted} {
		require.NoError(t, db.GetMany(tns, f, out))
		for i, tn := range tns {
			want, err := db.Get(tn, f)
			require.NoError(t, err)
			assert.Equal(t, want, out[i], "%d fields %05b", tn, f)
		}
		assert.True(t, out[0].Block.Thousands, "the pooled block's row")
		assert.Equal(t, "12025559999", out[0].Block.LRN)
	}
}

// TestSVTypeLiveUpdates: an update's SV Type is the number's at once,
// after a restart (the journal carries it) and after compaction; one past
// the NPAC's range is refused.
func TestSVTypeLiveUpdates(t *testing.T) {
	db, path := openMini(t)
	require.NoError(t, db.Apply([]format.Update{
		{Action: format.Add, TN: 2025550199, LRN: 2025569000, SPID: "3003", SVType: format.SVTypeVoWiFi},
		{Action: format.Modify, TN: 2025550123, LRN: 3122009999, SPID: "4004", SVType: format.SVTypePrepaidWireless},
		{Action: format.Add, TN: 2025550198, LRN: 2025569000, SPID: "3003"},
	}))
	check := func(when string) {
		assert.Equal(t, format.SVTypeVoWiFi, ported(t, db, 2025550199).SVType, when)
		assert.Equal(t, format.SVTypePrepaidWireless, ported(t, db, 2025550123).SVType, when)
		assert.Equal(t, format.SVTypeNone, ported(t, db, 2025550198).SVType, when)
	}
	check("applied")
	require.NoError(t, db.Close())
	db, err := format.OpenWriter(path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	check("replayed")
	require.NoError(t, db.Compact(context.Background()))
	check("compacted")
	require.NoError(t, db.Verify())

	err = db.Apply([]format.Update{{Action: format.Add, TN: 2025550197, LRN: 2025569000, SPID: "3003", SVType: format.MaxSVType + 1}})
	require.ErrorIs(t, err, format.ErrInvalidUpdate)
	assert.Contains(t, err.Error(), "SV Type 11 out of range")
}

// TestCompactIsDeterministic: the same pending updates compact into the
// same bytes, whatever order a map holds them in. Each update here brings
// an LRN and a route of its own, which take the next dictionary indexes.
func TestCompactIsDeterministic(t *testing.T) {
	var ups []format.Update
	for i := range 24 {
		ups = append(ups, format.Update{Action: format.Add, TN: 2025550150 + uint64(i), LRN: 6029998800 + uint64(i), SPID: "3003",
			SVType: format.SVType(i % 4)})
	}
	var files [][]byte
	for range 2 {
		db, path := openMini(t)
		require.NoError(t, db.Apply(ups))
		require.NoError(t, db.Compact(context.Background()))
		require.NoError(t, db.Close())
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		clear(b[32:40]) // the build time, now
		clear(b[56:64]) // the header's checksum, which covers it
		files = append(files, b)
	}
	assert.True(t, bytes.Equal(files[0], files[1]), "two compactions of the same updates differ")
}
