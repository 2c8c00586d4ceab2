//go:build unix

package main

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// canPause says whether pause and resume can stop and start a process here.
const canPause = true

// pause stops p (SIGSTOP) until resume.
func pause(t *testing.T, p *os.Process) {
	t.Helper()
	require.NoError(t, p.Signal(syscall.SIGSTOP))
}

// resume continues p (SIGCONT) after pause.
func resume(t *testing.T, p *os.Process) {
	t.Helper()
	require.NoError(t, p.Signal(syscall.SIGCONT))
}
