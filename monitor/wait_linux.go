//go:build linux

package monitor

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// si_code values (asm-generic/siginfo.h).
const (
	siKernel  = 0x80 // sent by the kernel: int3 reports SIGTRAP with SI_KERNEL
	trapTrace = 2    // TRAP_TRACE: a single-step completed
)

// syscallEvent reports whether a ptrace event stop happens inside a system
// call that the kernel completes after it.
func syscallEvent(cause int) bool {
	switch cause {
	case unix.PTRACE_EVENT_CLONE, unix.PTRACE_EVENT_FORK, unix.PTRACE_EVENT_VFORK,
		unix.PTRACE_EVENT_VFORK_DONE, unix.PTRACE_EVENT_EXEC:
		return true
	}
	return false
}

// trapCause returns the PTRACE_EVENT_* of a ptrace-stop, or 0. (WaitStatus's
// own TrapCause answers -1 unless the stop signal is SIGTRAP, but a group-stop
// reports PTRACE_EVENT_STOP with the stop signal; ptrace(2), "Group-stop".)
func trapCause(ws unix.WaitStatus) int { return int(uint32(ws) >> 16) }

func isStopSignal(s syscall.Signal) bool {
	return s == unix.SIGSTOP || s == unix.SIGTSTP || s == unix.SIGTTIN || s == unix.SIGTTOU
}
