//go:build !unix

package testredis

import "os"

// pauseSignal and resumeSignal are nil where no signal stops a process:
// Pause skips the test.
var pauseSignal, resumeSignal os.Signal
