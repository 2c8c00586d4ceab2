//go:build linux && !race

package resilience

const raceDetector = false
