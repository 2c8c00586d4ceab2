//go:build !race

package lrn_test

const raceEnabled = false
