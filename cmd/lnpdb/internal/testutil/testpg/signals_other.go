//go:build !unix

package testpg

import "errors"

var errNoSignals = errors.New("testpg: no signal stops a process on this system")

// stopProcess and continueProcess fail where no signal stops a process:
// Freeze skips the test.
func stopProcess(int) error     { return errNoSignals }
func continueProcess(int) error { return errNoSignals }

const canFreeze = false
