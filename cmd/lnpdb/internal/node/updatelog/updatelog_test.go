package updatelog

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testpg"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/core/vfs"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

func TestMain(m *testing.M) { os.Exit(testpg.Main(m)) }

// The sample's code 201-481 is assigned; these SPIDs and LRNs are in it.
var (
	spids = []string{"0987", "083L", "6731"}
	lrns  = []uint64{7327370999, 2015829999}
)

// randomBatch returns n updates of numbers in 201-481-0000…0199.
func randomBatch(r *rand.Rand, n int) []format.Update {
	ups := make([]format.Update, n)
	for i := range ups {
		u := format.Update{TN: 2014810000 + uint64(r.IntN(200))}
		switch r.IntN(3) {
		case 0:
			u.Action = format.Delete
		case 1:
			u.Action = format.Add
		default:
			u.Action = format.Modify
		}
		if u.Action != format.Delete {
			u.LRN, u.SPID = lrns[r.IntN(len(lrns))], spids[r.IntN(len(spids))]
			u.ActivatedAt = 1700000000 + int64(r.IntN(1000000))
			u.SVType = format.SVType(r.IntN(int(format.MaxSVType) + 1))
		}
		ups[i] = u
	}
	return ups
}

// answers is what a table answers for every number updates may touch.
func answers(t *testing.T, db *format.DB) []string {
	t.Helper()
	out := make([]string, 200)
	for i := range out {
		r, err := db.Get(2014810000+uint64(i), format.FieldPorted)
		require.NoError(t, err)
		p := r.Ported
		if p.OK {
			out[i] = fmt.Sprintf("%s %s %d %s", p.LRN, p.Carrier.OCN, p.ActivatedAt, p.SVType)
		}
	}
	return out
}

func openLog(t *testing.T, dsn string) *Log {
	t.Helper()
	l, err := Open(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(l.Close)
	return l
}

func follow(t *testing.T, l *Log, db *format.DB, node string) *Follower {
	t.Helper()
	f, err := Start(Config{Log: l, DB: db, Node: node, Poll: 50 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(f.Stop)
	return f
}

func TestEncodeFeedRoundTrips(t *testing.T) {
	ups := randomBatch(rand.New(rand.NewPCG(1, 2)), 500)
	e := Entry{Feed: EncodeFeed(ups)}
	got, err := e.Updates()
	require.NoError(t, err)
	require.Equal(t, ups, got)
}

func TestAppendOrderAndIdempotencyKey(t *testing.T) {
	ctx := context.Background()
	l := openLog(t, testpg.New(t))
	again := openLog(t, testpg.New(t))
	assert.NotEqual(t, l.ID(), again.ID(), "each log has its own id")

	a := EncodeFeed([]format.Update{{Action: format.Delete, TN: 2014810001}})
	b := EncodeFeed([]format.Update{{Action: format.Delete, TN: 2014810002}})
	e1, err := l.Append(ctx, "n1", "k1", a)
	require.NoError(t, err)
	assert.False(t, e1.Replayed)
	assert.Equal(t, 1, e1.Deleted)
	e2, err := l.Append(ctx, "n2", "", b)
	require.NoError(t, err)
	assert.Greater(t, e2.Seq, e1.Seq)

	// The same key from another node: the first answer, nothing logged.
	r, err := l.Append(ctx, "n3", "k1", a)
	require.NoError(t, err)
	assert.True(t, r.Replayed)
	assert.Equal(t, e1.Seq, r.Seq)
	assert.Equal(t, "n1", r.Node)
	_, err = l.Append(ctx, "n3", "k1", b)
	require.ErrorIs(t, err, ErrKeyReused)

	got, head, err := l.Read(ctx, 0, 10)
	require.NoError(t, err)
	assert.Equal(t, e2.Seq, head)
	require.Len(t, got, 2)
	assert.Equal(t, []int64{e1.Seq, e2.Seq}, []int64{got[0].Seq, got[1].Seq})
	assert.Equal(t, a, got[0].Feed)
	got, _, err = l.Read(ctx, e1.Seq, 10)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, e2.Seq, got[0].Seq)
}

// Batches posted concurrently to two nodes end up applied in one order on
// both: every number answers the same, and as the log's order says.
func TestNodesApplyTheSameOrder(t *testing.T) {
	l := openLog(t, testpg.New(t))
	db1, db2 := testdb.Sample(t), testdb.Sample(t)
	f1, f2 := follow(t, l, db1, "n1"), follow(t, l, db2, "n2")

	var wg sync.WaitGroup
	for w, f := range []*Follower{f1, f2, f1, f2} {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for range 25 {
				_, err := f.Post(context.Background(), randomBatch(r, 1+r.IntN(20)), "", 1)
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	_, head, err := l.Read(context.Background(), 0, 1)
	require.NoError(t, err)
	require.EqualValues(t, 100, head)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, f1.WaitApplied(ctx, head))
	require.NoError(t, f2.WaitApplied(ctx, head))

	// The model: the log's batches applied in order to a fresh table.
	model := testdb.Sample(t)
	entries, _, err := l.Read(context.Background(), 0, 1000)
	require.NoError(t, err)
	for _, e := range entries {
		ups, err := e.Updates()
		require.NoError(t, err)
		require.NoError(t, model.Apply(ups))
	}
	want := answers(t, model)
	assert.Equal(t, want, answers(t, db1))
	assert.Equal(t, want, answers(t, db2))
	assert.Equal(t, Status{Node: "n2", AppliedSeq: head, HeadSeq: head, Postgres: "ok", Listening: true}, f2.Status())
}

// A crash after the journal's fsync and before the position is recorded
// applies batches again at the next start: the answers do not change.
func TestReapplyingChangesNothing(t *testing.T) {
	ctx := context.Background()
	l := openLog(t, testpg.New(t))
	db, path := testdb.OpenFile(t, lnpdb.Sample())
	f := follow(t, l, db, "n1")
	r := rand.New(rand.NewPCG(3, 4))
	var (
		last Result
		err  error
	)
	for range 30 {
		last, err = f.Post(ctx, randomBatch(r, 10), "", 1)
		require.NoError(t, err)
	}
	want := answers(t, db)
	f.Stop()
	require.NoError(t, db.Close())

	for _, from := range []int64{0, last.Seq / 2, last.Seq - 1} {
		require.NoError(t, writeState(vfs.Default, StatePath(path), state{Log: l.ID(), Seq: from}))
		db, err := format.OpenWriter(path)
		require.NoError(t, err)
		assert.Equal(t, want, answers(t, db), "after replaying the journal")
		f, err := Start(Config{Log: l, DB: db, Node: "n1", Poll: 50 * time.Millisecond})
		require.NoError(t, err)
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		require.NoError(t, f.WaitApplied(wctx, last.Seq))
		cancel()
		assert.Equal(t, want, answers(t, db), "after applying %d..%d again", from+1, last.Seq)
		f.Stop()
		require.NoError(t, db.Close())
	}
	st, err := readState(vfs.Default, StatePath(path))
	require.NoError(t, err)
	assert.Equal(t, state{Log: l.ID(), Seq: last.Seq}, st)
}

func TestBadBatchIsNotLogged(t *testing.T) {
	l := openLog(t, testpg.New(t))
	f := follow(t, l, testdb.Sample(t), "n1")
	for _, ups := range [][]format.Update{
		{{Action: format.Add, TN: 2014810001, LRN: 7327370999, SPID: "ZZZZ"}}, // no such SPID
		{{Action: format.Add, TN: 9995550100, LRN: 7327370999, SPID: "0987"}}, // not a number
	} {
		_, err := f.Post(context.Background(), ups, "k", 1)
		require.ErrorIs(t, err, format.ErrInvalidUpdate)
	}
	_, head, err := l.Read(context.Background(), 0, 1)
	require.NoError(t, err)
	assert.Zero(t, head)
}

// A table that lacks what the posting node's had skips that batch (counted)
// and goes on with the next.
func TestRefusedBatchIsSkipped(t *testing.T) {
	ctx := context.Background()
	l := openLog(t, testpg.New(t))
	bad := EncodeFeed([]format.Update{{Action: format.Add, TN: 2014810001, LRN: 7327370999, SPID: "ZZZZ"}})
	_, err := l.Append(ctx, "elsewhere", "", bad)
	require.NoError(t, err)
	db := testdb.Sample(t)
	f := follow(t, l, db, "n1")
	r, err := f.Post(ctx, []format.Update{{Action: format.Add, TN: 2014810002, LRN: 7327370999, SPID: "0987"}}, "", 1)
	require.NoError(t, err)
	assert.True(t, r.Complete)
	assert.EqualValues(t, 2, f.Applied())
	assert.EqualValues(t, 1, f.Status().RefusedBatches)
	assert.Equal(t, []int64{1}, f.Skipped(), "passed, not applied")
	assert.Equal(t, 1, f.Status().SkippedBatches)
	rec, err := db.Get(2014810002, format.FieldPorted)
	require.NoError(t, err)
	assert.Equal(t, "17327370999", rec.Ported.LRN)
}

// PostgreSQL stopped: posts are refused with ErrUnavailable and leave no
// trace; lookups go on; once it is back, the follower catches up with what
// other nodes appended, and posts flow again.
func TestPostgresDown(t *testing.T) {
	ctx := context.Background()
	srv := testpg.NewServer(t)
	l := openLog(t, srv.DSN())
	db := testdb.Sample(t)
	f := follow(t, l, db, "n1")
	up := func(i int) []format.Update {
		return []format.Update{{Action: format.Add, TN: 2014810000 + uint64(i), LRN: 7327370999, SPID: "0987"}}
	}
	_, err := f.Post(ctx, up(1), "", 1)
	require.NoError(t, err)

	srv.Stop(t)
	_, err = f.Post(ctx, up(2), "k2", 1)
	require.ErrorIs(t, err, ErrUnavailable)
	require.Eventually(t, func() bool { return f.Status().Postgres == "unavailable" }, 10*time.Second, 10*time.Millisecond)
	rec, err := db.Get(2014810001, format.FieldPorted)
	require.NoError(t, err)
	assert.True(t, rec.Ported.OK, "lookups go on")

	srv.Start(t)
	other := openLog(t, srv.DSN())
	e, err := other.Append(ctx, "n2", "", EncodeFeed(up(3)))
	require.NoError(t, err)
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	require.NoError(t, f.WaitApplied(wctx, e.Seq), "caught up by itself")
	r, err := f.Post(ctx, up(4), "k2", 1)
	require.NoError(t, err)
	assert.False(t, r.Replayed, "the refused post left no trace")
	for i, ok := range map[int]bool{1: true, 2: false, 3: true, 4: true} {
		rec, err := db.Get(2014810000+uint64(i), format.FieldPorted)
		require.NoError(t, err)
		assert.Equal(t, ok, rec.Ported.OK, "number %d", i)
	}
	require.Eventually(t, func() bool { return f.Status().Listening }, 15*time.Second, 10*time.Millisecond)
	assert.Equal(t, "ok", f.Status().Postgres)
}

func TestPostWaitsForNodes(t *testing.T) {
	l := openLog(t, testpg.New(t))
	f1 := follow(t, l, testdb.Sample(t), "n1")
	follow(t, l, testdb.Sample(t), "n2")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := f1.Post(ctx, []format.Update{{Action: format.Delete, TN: 2014810001}}, "", 2)
	require.NoError(t, err)
	assert.True(t, r.Complete)
	assert.Equal(t, 2, r.Nodes)

	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	r, err = f1.Post(short, []format.Update{{Action: format.Delete, TN: 2014810002}}, "", 3)
	require.NoError(t, err, "durable in the log even when fewer nodes apply it in time")
	assert.False(t, r.Complete)
	assert.Equal(t, 2, r.Nodes)
}

func FuzzParseState(f *testing.F) {
	f.Add([]byte(`{"log":"abc","seq":12}`))
	f.Add([]byte(`{"log":"","seq":0}`))
	f.Add([]byte(`{"seq":-1}`))
	f.Add([]byte(`{`))
	f.Add([]byte(`{"log":"abc","seq":12,"skipped":[3,7]}`))
	f.Add([]byte(`{"log":"abc","seq":12,"skipped":[7,3]}`))
	f.Add([]byte(`{"log":"abc","seq":2,"skipped":[3]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseState(b, "state")
		if err != nil {
			return
		}
		if s.Seq < 0 || (s.Seq > 0 && s.Log == "") {
			t.Fatalf("accepted %+v from %q", s, b)
		}
		for i, q := range s.Skipped {
			if q <= 0 || q > s.Seq || (i > 0 && q <= s.Skipped[i-1]) {
				t.Fatalf("accepted skipped %v from %q", s.Skipped, b)
			}
		}
	})
}

// Appends made at once share a transaction; one key is still logged once.
func TestConcurrentAppendsOneKey(t *testing.T) {
	l := openLog(t, testpg.New(t))
	a := EncodeFeed([]format.Update{{Action: format.Delete, TN: 2014810001}})
	var wg sync.WaitGroup
	var mu sync.Mutex
	seqs := map[int64]int{}
	fresh := 0
	for i := range 40 {
		wg.Go(func() {
			key := "same"
			if i%2 == 1 {
				key = fmt.Sprint("other-", i)
			}
			e, err := l.Append(context.Background(), "n1", key, a)
			assert.NoError(t, err)
			mu.Lock()
			defer mu.Unlock()
			if key == "same" {
				seqs[e.Seq]++
				if !e.Replayed {
					fresh++
				}
			}
		})
	}
	wg.Wait()
	assert.Len(t, seqs, 1, "every append under one key answers the same sequence")
	assert.Equal(t, 1, fresh, "and only one of them appended")
	_, head, err := l.Read(context.Background(), 0, 1)
	require.NoError(t, err)
	assert.EqualValues(t, 21, head)
}

// A follower given a DSN starts while PostgreSQL is down: posts are refused,
// and once the server is up it follows the log from its recorded position.
func TestStartWhilePostgresDown(t *testing.T) {
	ctx := context.Background()
	srv := testpg.NewServer(t)
	l := openLog(t, srv.DSN())
	e, err := l.Append(ctx, "n2", "", EncodeFeed([]format.Update{{Action: format.Add, TN: 2014810001, LRN: 7327370999, SPID: "0987"}}))
	require.NoError(t, err)
	srv.Stop(t)

	db := testdb.Sample(t)
	f, err := Start(Config{DSN: srv.DSN(), DB: db, Node: "n1", Poll: 50 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(f.Stop)
	assert.Equal(t, "unavailable", f.Status().Postgres)
	assert.Empty(t, f.LogID())
	_, err = f.Post(ctx, []format.Update{{Action: format.Delete, TN: 2014810002}}, "", 1)
	require.ErrorIs(t, err, ErrUnavailable)

	srv.Start(t)
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	require.NoError(t, f.WaitApplied(wctx, e.Seq))
	assert.Equal(t, l.ID(), f.LogID())
	rec, err := db.Get(2014810001, format.FieldPorted)
	require.NoError(t, err)
	assert.True(t, rec.Ported.OK)

	_, err = Start(Config{DSN: "postgres://nobody@127.0.0.1:1/x?sslmode=bogus", DB: testdb.Sample(t), Node: "n3"})
	require.Error(t, err, "a DSN that cannot be right fails at once")
}

// A LISTEN connection lost while PostgreSQL stays up: the follower listens
// again, and a batch appended around the loss (its notification possibly
// sent to nobody) is applied all the same, by the poll or by the read that
// follows the new LISTEN.
func TestListenConnectionLost(t *testing.T) {
	ctx := context.Background()
	dsn := testpg.New(t)
	l := openLog(t, dsn)
	f, err := Start(Config{Log: l, DB: testdb.Sample(t), Node: "n1", Poll: 200 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(f.Stop)
	require.Eventually(t, func() bool { return f.Status().Listening }, 10*time.Second, 5*time.Millisecond)

	c, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer c.Close(ctx)
	var killed int
	require.NoError(t, c.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query LIKE 'LISTEN%'`).Scan(&killed))
	require.Equal(t, 1, killed)
	e, err := l.Append(ctx, "n2", "", EncodeFeed([]format.Update{{Action: format.Delete, TN: 2014810001}}))
	require.NoError(t, err)
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	require.NoError(t, f.WaitApplied(wctx, e.Seq), "applied across the lost connection")
	require.Eventually(t, func() bool { return f.Status().Listening }, 10*time.Second, 5*time.Millisecond, "listening again")
}

// TestStateWriteFails: a position that cannot be recorded (the disk refuses
// the state file's write) holds nothing back: the batch is in the journal
// and answered; the file keeps its older position, from which a restart
// applies again harmlessly (TestReapplyingChangesNothing); the status says
// why until the position is written again, which happens as soon as the
// disk takes it.
func TestStateWriteFails(t *testing.T) {
	ctx := context.Background()
	l := openLog(t, testpg.New(t))
	db, path := testdb.OpenFile(t, lnpdb.Sample())
	full := func(op vfs.Op, _ string) error {
		if op == vfs.OpWrite {
			return syscall.ENOSPC
		}
		return nil
	}
	fs := vfs.NewFaulty(vfs.Default, full)
	f, err := Start(Config{Log: l, DB: db, Node: "n1", Poll: 50 * time.Millisecond, fs: fs})
	require.NoError(t, err)
	t.Cleanup(f.Stop)
	r := rand.New(rand.NewPCG(5, 6))
	first, err := f.Post(ctx, randomBatch(r, 10), "", 1)
	require.NoError(t, err, "the batch is logged and applied though its position is not recorded")
	st, err := readState(vfs.Default, StatePath(path))
	require.NoError(t, err)
	assert.Less(t, st.Seq, first.Seq, "the file cannot hold the new position")
	require.Eventually(t, func() bool { return strings.Contains(f.Status().LastError, "no space left on device") },
		5*time.Second, 5*time.Millisecond, "the status says why")
	applied := answers(t, db)
	// The follower retries the write while the disk refuses it, so a
	// listing may catch one attempt's temporary file before its removal;
	// a file left behind by a failed attempt stays in every listing.
	require.Eventually(t, func() bool {
		entries, err := os.ReadDir(filepath.Dir(path))
		require.NoError(t, err)
		for _, e := range entries {
			if strings.Contains(e.Name(), ".tmp") {
				return false
			}
		}
		return true
	}, 5*time.Second, 7*time.Millisecond, "a temporary file is left")

	fs.SetInject(nil)
	require.Eventually(t, func() bool {
		st, err := readState(vfs.Default, StatePath(path))
		return err == nil && st.Seq == first.Seq
	}, 5*time.Second, 10*time.Millisecond, "the position is recorded once the disk takes it")
	// The status is cleared after the write that succeeded, not with it: a
	// reader may see the new position a moment before the error goes.
	require.Eventually(t, func() bool { return f.Status().LastError == "" },
		5*time.Second, 5*time.Millisecond, "the status no longer names the error")
	second, err := f.Post(ctx, randomBatch(r, 10), "", 1)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, err := readState(vfs.Default, StatePath(path))
		return err == nil && st.Seq == second.Seq
	}, 5*time.Second, 10*time.Millisecond)
	assert.NotEqual(t, applied, answers(t, db), "the second batch changed answers")
}

// withCarrier is the sample with one more carrier, ZZZZ: a table that takes
// batches the sample's refuses.
func withCarrier(t *testing.T) string {
	src := testdb.Copy(t, lnpdb.Sample())
	c := src["carriers.csv"]
	c.Data = append(append([]byte{}, c.Data...), "ZZZZ,Newport Wireless,WIRELESS,,false\n"...)
	return testdb.Build(t, src)
}

// A batch one node's table refuses is not counted as applied by it: the
// post waiting for two nodes answers one applied and names the refusing
// node, and that node's status lists the batch. Once its table gains the
// SPID (a new table installed and reloaded), the node applies the batch —
// and the later ones again, so that a number a later batch set is not
// undone — and reports it applied.
func TestSkippedBatchIsNotApplied(t *testing.T) {
	ctx := context.Background()
	l := openLog(t, testpg.New(t))
	full := withCarrier(t)
	db1, err := format.OpenWriter(full)
	require.NoError(t, err)
	t.Cleanup(func() { db1.Close() })
	db2, path2 := testdb.OpenFile(t, lnpdb.Sample())
	f1, f2 := follow(t, l, db1, "n1"), follow(t, l, db2, "n2")

	newSPID := []format.Update{
		{Action: format.Add, TN: 2014810001, LRN: 7327370999, SPID: "ZZZZ", ActivatedAt: 1700000001},
		{Action: format.Add, TN: 2014810002, LRN: 7327370999, SPID: "ZZZZ", ActivatedAt: 1700000001},
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r, err := f1.Post(wctx, newSPID, "", 2)
	require.NoError(t, err)
	assert.False(t, r.Complete, "one of the two nodes did not apply it")
	assert.Equal(t, 1, r.Nodes)
	assert.Equal(t, []string{"n2"}, r.Refused)
	require.Equal(t, []int64{r.Seq}, f2.Skipped())
	st := f2.Status()
	assert.Equal(t, 1, st.SkippedBatches)
	assert.Equal(t, []int64{r.Seq}, st.SkippedSeqs)
	skippedSeq := r.Seq

	// A later batch sets one of the same numbers with a carrier both know.
	later := []format.Update{{Action: format.Modify, TN: 2014810002, LRN: 2015829999, SPID: "0987", ActivatedAt: 1700000002}}
	r, err = f1.Post(wctx, later, "", 2)
	require.NoError(t, err)
	assert.True(t, r.Complete)
	assert.Equal(t, 2, r.Nodes)
	assert.Empty(t, r.Refused)
	// The posting node reports its own state after Post has returned (Post
	// knows its outcome first): the log shows it once that report is in.
	want := Appliers{Applied: []string{"n1"}, Refused: []string{"n2"}}
	require.Eventually(t, func() bool {
		a, err := l.AppliedBy(ctx, skippedSeq)
		return err == nil && reflect.DeepEqual(a, want)
	}, 10*time.Second, 10*time.Millisecond, "applied by n1, refused by n2")

	// n2's table gains the SPID.
	in, err := os.Open(full)
	require.NoError(t, err)
	_, err = format.InstallFrom(path2, in, format.InstallOptions{})
	in.Close()
	require.NoError(t, err)
	require.NoError(t, db2.Reload())
	require.Eventually(t, func() bool { return len(f2.Skipped()) == 0 }, 10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		a, err := l.AppliedBy(ctx, skippedSeq)
		return err == nil && len(a.Applied) == 2
	}, 10*time.Second, 10*time.Millisecond, "reported applied by both")
	assert.Equal(t, answers(t, db1), answers(t, db2), "the nodes answer alike")
	rec, err := db2.Get(2014810002, format.FieldPorted)
	require.NoError(t, err)
	assert.Equal(t, "12015829999", rec.Ported.LRN, "the later batch is not undone")
	st2, err := readState(vfs.Default, StatePath(path2))
	require.NoError(t, err)
	assert.Empty(t, st2.Skipped)
}
