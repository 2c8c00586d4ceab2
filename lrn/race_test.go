//go:build race

package lrn_test

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// pooled scratch allocates.
const raceEnabled = true
