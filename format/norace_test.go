//go:build !race

package format_test

const raceEnabled = false
