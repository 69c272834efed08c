//go:build linux && amd64

package monitor

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Raw ptrace requests that golang.org/x/sys/unix has no typed wrapper for (it
// has PtraceSeize without options, PtraceCont without SINGLESTEP's signal, no
// LISTEN and no GETSIGINFO).
//
// Preconditions: called on the monitor's locked OS thread, the tracer.

func ptrace(req int, pid int, addr, data uintptr) error {
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, uintptr(req), uintptr(pid), addr, data, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// siginfo is the part of siginfo_t (asm-generic/siginfo.h) patchprof reads.
type siginfo struct {
	Signo int32
	Errno int32
	Code  int32
	_     int32
	Addr  uint64 // si_addr for SIGSEGV/SIGBUS/SIGILL/SIGFPE/SIGTRAP; si_pid/si_uid otherwise
	_     [112]byte
}

// getSiginfo reads the siginfo of the signal t stops for. The conversion of
// si to a uintptr happens in the system call's own argument list (unsafe.Pointer,
// rule 4), so that si may live on the caller's stack.
func getSiginfo(tid int, si *siginfo) error {
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_GETSIGINFO, uintptr(tid), 0, uintptr(unsafe.Pointer(si)), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

func seize(pid int, opts int) error {
	return ptrace(unix.PTRACE_SEIZE, pid, 0, uintptr(opts))
}

func cont(tid, sig int) error       { return ptrace(unix.PTRACE_CONT, tid, 0, uintptr(sig)) }
func singleStep(tid, sig int) error { return ptrace(unix.PTRACE_SINGLESTEP, tid, 0, uintptr(sig)) }
func listen(tid int) error          { return ptrace(unix.PTRACE_LISTEN, tid, 0, 0) }
func interrupt(tid int) error       { return ptrace(unix.PTRACE_INTERRUPT, tid, 0, 0) }
func detach(tid, sig int) error     { return ptrace(unix.PTRACE_DETACH, tid, 0, uintptr(sig)) }

// kcmpVM reports whether two tasks share one address space (kcmp(2), KCMP_VM).
func kcmpVM(pid1, pid2 int) (bool, error) {
	const kcmpVM = 1
	r, _, e := unix.Syscall6(unix.SYS_KCMP, uintptr(pid1), uintptr(pid2), kcmpVM, 0, 0, 0)
	if e != 0 {
		return false, e
	}
	return r == 0, nil
}

// Offsets of registers in the USER area: struct user_regs_struct
// (sys/user.h) is at its start.
const (
	offR14     = 1 * 8
	offRax     = 10 * 8
	offRsi     = 13 * 8
	offRdi     = 14 * 8
	offOrigRax = 15 * 8
	offRip     = 16 * 8
	offRsp     = 19 * 8
)

// peekUser reads one word of the tracee's USER area (its registers).
func peekUser(tid int, off uintptr) (uint64, error) {
	var v uint64
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_PEEKUSR, uintptr(tid), off, uintptr(unsafe.Pointer(&v)), 0, 0)
	if e != 0 {
		return 0, e
	}
	return v, nil
}

// pokeUser writes one word of the tracee's USER area.
func pokeUser(tid int, off uintptr, v uint64) error {
	return ptrace(unix.PTRACE_POKEUSR, tid, off, uintptr(v))
}

// contSyscall restarts tid like cont, stopping it again at its next system
// call's entry and exit (PTRACE_SYSCALL): how the monitor sees the calls that
// change the target's signal state (sigstate_linux_amd64.go).
func contSyscall(tid, sig int) error { return ptrace(unix.PTRACE_SYSCALL, tid, 0, uintptr(sig)) }

// getSigmask returns the blocked mask of a stopped thread (bit n-1 is
// signal n; ptrace(2), PTRACE_GETSIGMASK).
func getSigmask(tid int) (uint64, error) {
	var mask uint64
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_GETSIGMASK, uintptr(tid), 8, uintptr(unsafe.Pointer(&mask)), 0, 0)
	if e != 0 {
		return 0, e
	}
	return mask, nil
}

// setSigmask sets the blocked mask of a stopped thread (PTRACE_SETSIGMASK).
func setSigmask(tid int, mask uint64) error {
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_SETSIGMASK, uintptr(tid), 8, uintptr(unsafe.Pointer(&mask)), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// setSiginfo replaces the siginfo of the signal t stops for (the one
// delivered when it is resumed with that signal).
func setSiginfo(tid int, si *siginfo) error {
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_SETSIGINFO, uintptr(tid), 0, uintptr(unsafe.Pointer(si)), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// A syscallInfo is struct ptrace_syscall_info (linux/ptrace.h): at an entry
// stop (and a PTRACE_EVENT_SECCOMP stop) Val is the call's number and Args
// its arguments; at an exit stop Val is its return value. RetData is the
// data of the filter's SECCOMP_RET_TRACE at a seccomp stop.
type syscallInfo struct {
	Op      uint8
	_       [3]uint8
	Arch    uint32
	IP      uint64
	SP      uint64
	Val     uint64
	Args    [6]uint64
	RetData uint32
	_       uint32
}

// getSyscallInfo reads what tid's syscall-stop is (PTRACE_GET_SYSCALL_INFO,
// Linux 5.3).
func getSyscallInfo(tid int, si *syscallInfo) error {
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_GET_SYSCALL_INFO, uintptr(tid), unsafe.Sizeof(*si), uintptr(unsafe.Pointer(si)), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// tgsigqueueinfo sends sig with siginfo si to thread tid of tgid
// (rt_tgsigqueueinfo(2)).
func tgsigqueueinfo(tgid, tid, sig int, si *siginfo) error {
	_, _, e := unix.Syscall6(unix.SYS_RT_TGSIGQUEUEINFO, uintptr(tgid), uintptr(tid), uintptr(sig), uintptr(unsafe.Pointer(si)), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
