//go:build unix

package sockets

import "syscall"

// DescriptorLimit returns the process's open-file limit (RLIMIT_NOFILE,
// soft; Go raises it to the hard limit as it starts); 0 when unknown.
func DescriptorLimit() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return 0
	}
	return int(rl.Cur)
}
