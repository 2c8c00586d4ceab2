// Package kindorder owns the order in which a batch lookup (format's
// stages after the bucket search, lrn.LookupMany's resolving) goes through
// its numbers: grouped by kind, so that the branches on a number's kind go
// the same way as for the number before and the CPU predicts them, where
// in a mixed batch's order it mispredicts about half of them. The order is
// a counting sort, and the kinds are worked out without a branch (Bit).
package kindorder

// Kinds is how many kinds Sort orders: kinds are 0 to Kinds-1.
const Kinds = 4

// Sort sets order[:len(kinds)] to the indexes of kinds, kind 0's first,
// then kind 1's, and so on, each kind's in index order. Every kind must be
// below Kinds; order must be at least as long as kinds.
func Sort(kinds []uint8, order []int) {
	var at [Kinds + 1]int
	for _, k := range kinds {
		at[k+1]++
	}
	for k := 1; k < Kinds; k++ {
		at[k] += at[k-1]
	}
	for i, k := range kinds {
		order[at[k]] = i
		at[k]++
	}
}

// Bit is 1 for true and 0 for false, without a branch.
func Bit(v bool) uint8 {
	if v {
		return 1
	}
	return 0
}
