//go:build race

package format_test

const raceEnabled = true
