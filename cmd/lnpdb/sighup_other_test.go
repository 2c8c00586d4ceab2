//go:build !unix

package main

import (
	"runtime"
	"testing"
)

// sighup skips the test: serve reloads on SIGHUP only where there is one.
func sighup(t *testing.T) {
	t.Helper()
	t.Skip("no SIGHUP on " + runtime.GOOS)
}
