//go:build race

package httpapi

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// pooled scratch allocates.
const raceEnabled = true
