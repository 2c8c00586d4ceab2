package kindorder

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSort: the order is a permutation of the indexes, grouped by kind in
// ascending kind, each kind's indexes ascending (a stable sort by kind).
func TestSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 7, 64, 256} {
		kinds := make([]uint8, n)
		for i := range kinds {
			kinds[i] = uint8(r.IntN(Kinds))
		}
		order := make([]int, n)
		Sort(kinds, order)
		want := make([]int, n)
		for i := range want {
			want[i] = i
		}
		slices.SortStableFunc(want, func(a, b int) int { return int(kinds[a]) - int(kinds[b]) })
		require.Equal(t, want, order, "%d kinds %v", n, kinds)
	}
	order := []int{-1, -1, -1, -1}
	Sort([]uint8{3, 3, 0}, order)
	assert.Equal(t, []int{2, 0, 1, -1}, order, "only len(kinds) indexes are written")
}

func TestBit(t *testing.T) {
	assert.Equal(t, uint8(1), Bit(true))
	assert.Equal(t, uint8(0), Bit(false))
}
