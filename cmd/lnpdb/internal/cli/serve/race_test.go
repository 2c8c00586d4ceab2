//go:build race

package serve

// raceEnabled: the race detector's instrumentation allocates where the
// plain build does not.
const raceEnabled = true
