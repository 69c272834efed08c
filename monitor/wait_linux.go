//go:build linux

package monitor

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// Wait statuses. Every wait status the monitor receives is decoded here, once,
// into a stop; what to do with it is decided in one place, dispatch (delve's
// native backend has the same shape: trapWaitInternal is its only decoder of
// wait statuses).

// si_code values (asm-generic/siginfo.h).
const (
	siKernel  = 0x80 // sent by the kernel: int3 reports SIGTRAP with SI_KERNEL
	trapBrkpt = 1    // TRAP_BRKPT: an int1 (icebp)
	trapTrace = 2    // TRAP_TRACE: a single-step completed
	icebp     = 0xF1 // int1's opcode (Intel SDM vol. 2, INT1)
)

// A stopKind says what a wait status reports about a traced task (ptrace(2),
// "Stopped states" and "Death under ptrace").
type stopKind uint8

const (
	stopOther     stopKind = iota // nothing the monitor acts on: an event it did not ask for
	stopGone                      // the task exited or was killed
	stopNewTask                   // PTRACE_EVENT_CLONE, _FORK or _VFORK: it created a task
	stopVforkDone                 // PTRACE_EVENT_VFORK_DONE: its vfork child exec'd or exited
	stopExec                      // PTRACE_EVENT_EXEC: it replaced its program
	stopEvent                     // PTRACE_EVENT_STOP: first stop, group-stop, interrupt, end of a listen
	stopSignal                    // signal-delivery-stop; int3 and single-steps report SIGTRAP here
	stopSyscall                   // syscall-entry- or syscall-exit-stop (PTRACE_SYSCALL, PTRACE_O_TRACESYSGOOD)
	stopSeccomp                   // PTRACE_EVENT_SECCOMP: a seccomp filter asked for the tracer before a call runs
	stopExit                      // PTRACE_EVENT_EXIT: the task is about to end, its registers still its own
)

// A stop is one wait status of a traced task, decoded.
type stop struct {
	kind  stopKind
	event int            // the PTRACE_EVENT_* of an event stop (stopNewTask tells which), else 0
	sig   syscall.Signal // the stop signal; for stopGone, the signal that killed the task, or 0
	code  int            // for stopGone, the exit code when sig is 0
}

// decodeStatus decodes a wait4 status of a traced task. The PTRACE_EVENT_* is
// in bits 16-23 of a stopped status (WaitStatus's own TrapCause answers -1
// unless the stop signal is SIGTRAP, but a group-stop reports
// PTRACE_EVENT_STOP with the stop signal; ptrace(2), "Group-stop").
func decodeStatus(ws unix.WaitStatus) stop {
	switch {
	case ws.Exited():
		return stop{kind: stopGone, code: ws.ExitStatus()}
	case ws.Signaled():
		return stop{kind: stopGone, sig: ws.Signal()}
	case !ws.Stopped():
		return stop{kind: stopOther}
	}
	st := stop{event: int(uint32(ws) >> 16), sig: ws.StopSignal()}
	switch st.event {
	case 0:
		st.kind = stopSignal
		if st.sig == unix.SIGTRAP|0x80 {
			st.kind, st.sig = stopSyscall, unix.SIGTRAP
		}
	case unix.PTRACE_EVENT_CLONE, unix.PTRACE_EVENT_FORK, unix.PTRACE_EVENT_VFORK:
		st.kind = stopNewTask
	case unix.PTRACE_EVENT_VFORK_DONE:
		st.kind = stopVforkDone
	case unix.PTRACE_EVENT_EXEC:
		st.kind = stopExec
	case unix.PTRACE_EVENT_STOP:
		st.kind = stopEvent
	case unix.PTRACE_EVENT_EXIT:
		st.kind = stopExit
	case unix.PTRACE_EVENT_SECCOMP:
		st.kind = stopSeccomp
	default:
		st.kind = stopOther
	}
	return st
}

// inSyscall reports whether the stop happens inside a system call that the
// kernel completes after it (clone, fork, vfork, exec): resumed, the thread
// finishes that call and writes its result into rax. A task at its exit
// event is in the kernel's exit path: resumed, it ends, so nothing can be
// run in it either.
func (s stop) inSyscall() bool {
	switch s.kind {
	case stopNewTask, stopVforkDone, stopExec, stopSyscall, stopSeccomp, stopExit:
		return true // a syscall-exit-stop is refined by syscallStop
	}
	return false
}

// jobControl reports whether the stop is a job-control stop: a
// PTRACE_EVENT_STOP with a stop signal (SIGTRAP marks our interrupts and a
// task's first stop).
func (s stop) jobControl() bool { return s.kind == stopEvent && isStopSignal(s.sig) }

// isStopSignal reports whether s stops a process by default (signal(7)).
func isStopSignal(s syscall.Signal) bool {
	return s == unix.SIGSTOP || s == unix.SIGTSTP || s == unix.SIGTTIN || s == unix.SIGTTOU
}

// gone reports whether a ptrace request failed because the thread is no
// longer there to serve it (ptrace(2), ESRCH: it was killed, or left its
// ptrace-stop, meanwhile). That is not an error of the monitor: wait4 reports
// the thread's death next.
func gone(err error) bool { return errors.Is(err, unix.ESRCH) }
