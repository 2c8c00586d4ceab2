//go:build linux && race

package resilience

// raceDetector: this test binary was built with -race. The suite's subject
// is the lnpdb binary it builds, which is built without it either way.
const raceDetector = true
