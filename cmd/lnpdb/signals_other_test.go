//go:build !unix

package main

import (
	"os"
	"testing"
)

// canPause says whether pause and resume can stop and start a process here:
// no signal stops one on this system.
const canPause = false

func pause(t *testing.T, _ *os.Process) {
	t.Helper()
	t.Fatal("pause: no signal stops a process on this system")
}

func resume(t *testing.T, _ *os.Process) {
	t.Helper()
	t.Fatal("resume: no signal continues a process on this system")
}
