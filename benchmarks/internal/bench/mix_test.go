package bench

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/format/build"
	"github.com/lnpdb/lnpdb/internal/core/nanp"
	"github.com/lnpdb/lnpdb/internal/ingest/gen"
	"github.com/lnpdb/lnpdb/internal/ingest/source"
)

// smallTable generates a source directory and builds its table.
func smallTable(t *testing.T, ported int) (src, table string, recs []Rec) {
	t.Helper()
	dir := t.TempDir()
	src = filepath.Join(dir, "src")
	ctx := context.Background()
	_, err := gen.Generate(ctx, src, gen.Config{Seed: 5, Ported: ported,
		Messaging: gen.DefaultMessaging, CNAM: gen.DefaultCNAM, Trust: gen.DefaultTrust})
	require.NoError(t, err)
	table = filepath.Join(dir, "t.lnpdb")
	_, err = build.Build(ctx, os.DirFS(src), table, build.Options{})
	require.NoError(t, err)
	recs, err = ReadPorted(src)
	require.NoError(t, err)
	require.NoError(t, SortRecs(recs))
	return src, table, recs
}

// Every query of each mix is what its kind says, checked against the
// source files rather than MakeQueries' own bookkeeping: the probe mix's
// vacant numbers all sit in vacant codes of NPAs holding ported numbers,
// while the random-vacant mix's partly do not.
func TestQueryMix(t *testing.T) {
	src, _, recs := smallTable(t, 20000)
	ported := map[uint64]bool{}
	populated := map[uint64]bool{}
	for _, r := range recs {
		ported[r.TN] = true
		populated[r.TN/10_000_000] = true
	}
	f, err := os.Open(filepath.Join(src, gen.FileBlocks))
	require.NoError(t, err)
	defer f.Close()
	codes := map[uint64]bool{}  // npa*1000+nxx, every code with a row
	blocks := map[uint64]bool{} // npa*10000+nxx*10+x, and codes as npa*1000+nxx with x -1
	whole := map[uint64]bool{}  // codes assigned whole
	require.NoError(t, source.ReadBlocks(f, gen.FileBlocks, source.Options{}, func(b *source.Block) error {
		code := uint64(b.NPA*1000 + b.NXX)
		codes[code] = true
		if b.X < 0 {
			whole[code] = true
		} else {
			blocks[code*10+uint64(b.X)] = true
		}
		return nil
	}))

	const n = 1 << 12
	for _, mix := range Mixes {
		t.Run(mix, func(t *testing.T) {
			q, err := MakeQueries(src, recs, n, 9, mix)
			require.NoError(t, err)
			require.Equal(t, mix, q.Mix)
			require.Len(t, q.TNs, n)
			var hits, assigned, vacant, vacantPopulated int
			for i, tn := range q.TNs {
				require.Equal(t, "1"+q.Keys[i], q.Canonical[i])
				code := tn / 10000
				switch {
				case ported[tn]:
					hits++
				case whole[code] || blocks[tn/1000]:
					assigned++
				default:
					require.False(t, codes[code], "%d: not ported, outside every block, yet its code %d has a blocks.csv row", tn, code)
					require.True(t, nanp.Number(tn).Valid(), "%d is not a valid NANP number", tn)
					vacant++
					if populated[tn/10_000_000] {
						vacantPopulated++
					}
				}
			}
			assert.Equal(t, []int{n / 2, n / 4, n / 4}, []int{hits, assigned, vacant}, "hits, assigned unported, vacant")
			assert.Equal(t, []int{hits, assigned, vacant, vacantPopulated}, []int{q.Hits, q.MissAssigned, q.MissVacant, q.VacantPopulated}, "the counts MakeQueries reports")
			if mix == MixProbe {
				assert.Equal(t, vacant, vacantPopulated, "every vacant query of the probe mix is in a populated NPA")
			} else {
				assert.Less(t, vacantPopulated, vacant*9/10, "the random-vacant mix draws many vacant numbers outside populated NPAs")
			}
		})
	}
	_, err = MakeQueries(src, recs, n, 9, "everything")
	assert.ErrorContains(t, err, `"everything"`)
}

// The dependent loop visits the chain memfloor.Step makes of the answers: each
// index is the one before, plus 1, plus the low bits of that query's answer
// mixed with bits of the step count; different answers give a different
// walk, lnpdb's answers vary enough to steer it, and the walk sweeps the
// queries rather than circling a few of them.
func TestDependentChains(t *testing.T) {
	bt := flag.Lookup("test.benchtime")
	old := bt.Value.String()
	require.NoError(t, bt.Value.Set("200x"))
	defer bt.Value.Set(old)

	const n = 1 << 10
	walk := func(answer func(i int) uint64) []int {
		var seen []int
		res := testing.Benchmark(func(b *testing.B) {
			seen = seen[:0]
			dependent(b, n, func(i int) uint64 {
				seen = append(seen, i)
				return answer(i)
			})
		})
		require.Equal(t, len(seen), res.N)
		return seen
	}
	r := rand.New(rand.NewPCG(1, 2))
	answers := make([]uint64, n)
	for i := range answers {
		answers[i] = r.Uint64()
	}
	answer := func(i int) uint64 { return answers[i] }
	seen := walk(answer)
	require.Len(t, seen, 200)
	assert.Equal(t, 0, seen[0])
	skips := map[int]bool{}
	for k := 1; k < len(seen); k++ {
		skip := 1 + int((answer(seen[k-1])^uint64(k)*0x9e3779b97f4a7c15>>61)&7)
		require.Equal(t, (seen[k-1]+skip)&(n-1), seen[k], "step %d: the index after %d", k, seen[k-1])
		skips[skip] = true
	}
	assert.Len(t, skips, 8, "every skip 1–8 occurs")
	assert.NotEqual(t, seen, walk(func(i int) uint64 { return answer(i) + 1 }), "other answers, another walk")

	// A sweep of the queries takes about n/4.5 steps and visits as many.
	// Sweeps 16 to 20 together visit twice that: each sweep sees other
	// queries. A walk whose index is a function of the index before (no k)
	// settles on one cycle, and sweeps 16 to 20 are the same fifth of the
	// queries as the first.
	sweep := n * 2 / 9
	require.NoError(t, bt.Value.Set(fmt.Sprint(20*sweep)+"x"))
	seen = walk(answer)
	require.Len(t, seen, 20*sweep)
	distinct := func(idx []int) int {
		m := map[int]bool{}
		for _, i := range idx {
			m[i] = true
		}
		return len(m)
	}
	assert.Greater(t, distinct(seen[15*sweep:]), 2*distinct(seen[:sweep])*3/4, "queries visited in sweeps 16 to 20, against the first")

	src, table, recs := smallTable(t, 20000)
	q, err := MakeQueries(src, recs, n, 2, MixProbe)
	require.NoError(t, err)
	l, err := ReopenLNPDB(table)
	require.NoError(t, err)
	defer l.Close()
	get, lookup, lookupFull := lnpdbBodies(l.DB, q)
	for name, body := range map[string]func(int) uint64{"get": get, "lookup": lookup, "lookup-full": lookupFull} {
		low := map[uint64]int{}
		for i := range n {
			low[body(i)&7]++
		}
		assert.GreaterOrEqual(t, len(low), 4, "%s: the answers steer the walk (low bits seen: %v)", name, low)
		for v, c := range low {
			assert.Less(t, c, n*3/4, "%s: low bits %d in %d of %d answers", name, v, c, n)
		}
	}
}
