// Package kindorder owns the order in which a batch lookup (format's
// stages after the bucket search, lrn.LookupMany's resolving) goes through
// its numbers: grouped by kind, so that the branches on a number's kind go
// the same way as for the number before and the CPU predicts them, where
// in a mixed batch's order it mispredicts about half of them, and each
// kind's numbers in batch order. A batch lists its numbers by kind in one
// pass: every number is written at the end of every kind's list, and
// only its own kind's end moves on, by its kind's Bit. The kinds are
// worked out without a branch, and the ends stay in registers; a
// counting sort, which loads and stores a count for every number, cost a
// batch more than the listing and the work it orders together.
package kindorder

// Bit is 1 for true and 0 for false, without a branch.
func Bit(v bool) uint8 {
	if v {
		return 1
	}
	return 0
}
