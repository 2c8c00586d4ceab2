package updatelog

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testpg"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// BenchmarkPost posts one-update batches from many goroutines to a node
// and waits for the log alone (wait 0), while the node follows the log:
// the cost of a post end to end, on the test server (fsync off).
func BenchmarkPost(b *testing.B) {
	l, err := Open(context.Background(), testpg.New(b))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	f, err := Start(Config{Log: l, DB: testdb.Sample(b), Node: "n1"})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Stop()
	var seed atomic.Uint64
	var last atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		r := rand.New(rand.NewPCG(seed.Add(1), 1))
		for pb.Next() {
			res, err := f.Post(context.Background(), randomBatch(r, 1), "", 0)
			if err != nil {
				b.Error(err)
				return
			}
			if s := res.Seq; s > last.Load() {
				last.Store(s)
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := f.WaitApplied(ctx, last.Load()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "posts/s")
}

// BenchmarkFollowerApply is a node catching up: the log holds b.N
// one-update batches, the follower applies them.
func BenchmarkFollowerApply(b *testing.B) {
	ctx := context.Background()
	l, err := Open(ctx, testpg.New(b))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	r := rand.New(rand.NewPCG(1, 1))
	var last Entry
	for range b.N {
		if last, err = l.Append(ctx, "n0", "", EncodeFeed(randomBatch(r, 1))); err != nil {
			b.Fatal(err)
		}
	}
	db := testdb.Sample(b)
	b.ResetTimer()
	f, err := Start(Config{Log: l, DB: db, Node: "n1", Applied: func() {}})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Stop()
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := f.WaitApplied(wctx, last.Seq); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "batches/s")
}
