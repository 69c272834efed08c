//go:build linux && amd64

package monitor

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// To patch a site, stopOthers stops every other thread of the process with
// PTRACE_INTERRUPT (and the ptrace fallback of --time stops threads to
// sample them). A thread asleep in a system call wakes for it as for a
// signal: a call the kernel restarts (read, poll, select, futex, nanosleep:
// the ERESTART codes) restarts unseen, but some return EINTR after any stop
// (epoll_wait, epoll_pwait, semop, sigtimedwait, io_getevents, a socket
// with a timeout: signal(7), "Interruption of system calls and library
// functions by stop signals"), as a debugger's attach makes them do. The
// program never sees a stop of ours: when such a call of a thread we
// interrupted ends in EINTR and no signal of the program's own is waiting
// to be delivered to it, the EINTR was ours, and the call is restarted as
// the kernel restarts an ERESTARTNOINTR one (its number back in rax, the
// PC back on its syscall instruction). A call with a relative timeout then
// waits its whole timeout again, as after a restart by SA_RESTART. The
// interrupt stays pending until its stop (PTRACE_EVENT_STOP), which may
// come only after a system call the thread enters meanwhile, which it ends
// at once: the thread is "kicked" from the interrupt to that stop.

// unkick restarts the system call nr of t, which ended with rval, when
// that result is an EINTR of ours.
//
// Preconditions: on the tracer thread; t is in the call's syscall-exit-stop.
func (m *mon) unkick(t *thread, nr, rval uint64) {
	// rt_sigreturn "returns" the rax of the context it restores, an
	// interrupted call's EINTR among them; a restarted call
	// (restart_syscall) that returns EINTR had its restart taken away.
	if int64(rval) != -int64(unix.EINTR) || nr == sysRtSigreturn || nr == sysRestartSyscall || signalWaiting(t) {
		return
	}
	var regs unix.PtraceRegs
	if err := unix.PtraceGetRegs(t.tid, &regs); err != nil {
		m.lose(fmt.Errorf("read the registers of thread %d: %w", t.tid, err))
		return
	}
	// Only a call made by a syscall instruction just before the PC is
	// run again (not int 0x80, not one whose bytes are not there).
	var insn [2]byte
	if n, _ := t.mm.mem.ReadMemory(regs.Rip-2, insn[:]); n != 2 || insn != [2]byte{0x0f, 0x05} {
		return
	}
	regs.Rax = nr
	regs.Rip -= 2 // syscall is two bytes
	if err := unix.PtraceSetRegs(t.tid, &regs); err != nil {
		m.lose(fmt.Errorf("restart the system call of thread %d: %w", t.tid, err))
	}
}

// signalWaiting reports whether a signal the thread does not block is
// pending for it or its process (proc(5): SigPnd, ShdPnd, SigBlk): then
// its EINTR may be the program's own, and stays.
func signalWaiting(t *thread) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(t.tgid) + "/task/" + strconv.Itoa(t.tid) + "/status")
	if err != nil {
		return true // cannot tell: leave the result alone
	}
	return pendingUnblocked(string(b))
}

// pendingUnblocked reads a status file's SigPnd, ShdPnd and SigBlk and
// reports whether a pending signal is not blocked; true when a field is
// missing or unreadable (cannot tell).
func pendingUnblocked(status string) bool {
	var m [3]uint64
	for k, key := range []string{"SigPnd:", "ShdPnd:", "SigBlk:"} {
		i := strings.Index(status, "\n"+key)
		if i < 0 {
			return true
		}
		v, _, _ := strings.Cut(status[i+1+len(key):], "\n")
		x, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		if err != nil {
			return true
		}
		m[k] = x
	}
	return (m[0]|m[1])&^m[2] != 0
}
