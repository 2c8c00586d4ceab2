//go:build race

package format

// raceOn is raceEnabled for the package's internal tests: the race
// detector's own allocations change what testing.AllocsPerRun counts.
const raceOn = true
