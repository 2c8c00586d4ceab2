//go:build unix

package testpg

import "syscall"

// stopProcess and continueProcess send SIGSTOP and SIGCONT to pid.
func stopProcess(pid int) error     { return syscall.Kill(pid, syscall.SIGSTOP) }
func continueProcess(pid int) error { return syscall.Kill(pid, syscall.SIGCONT) }

// canFreeze says whether Freeze can stop a process here.
const canFreeze = true
