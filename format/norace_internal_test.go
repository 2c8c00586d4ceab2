//go:build !race

package format

const raceOn = false
