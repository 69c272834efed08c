//go:build linux && amd64

package monitor

// System calls made in the target on patchprof's behalf (mmap, munmap,
// memfd_create, arch_prctl): the thread's registers are saved, a syscall
// instruction at a known address runs with the arguments, and the
// registers are put back.

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// syscallIn runs system call nr with args in the stopped thread t, executing
// a syscall instruction written over the two bytes at at (put back after), and
// returns its result (a negative errno on failure). The thread's registers are
// restored, including orig_rax, so a system call it was stopped in restarts as
// it would have. A signal that arrives meanwhile is sent again after.
//
// Preconditions: on the tracer thread; t is stopped and no other thread runs
// code at at.
func (m *mon) syscallIn(t *thread, at uint64, nr uint64, args ...uint64) (uint64, error) {
	if !m.mayInject(t.mm) {
		return 0, errSandboxed
	}
	if st := t.mm.mem.st; st != nil {
		// What the call needs written must be in memory before it runs,
		// and its own writes go through at once.
		if err := t.mm.mem.flush(); err != nil {
			return 0, err
		}
		t.mm.mem.st = nil
		defer func() { t.mm.mem.st = st }()
	}
	var saved, regs unix.PtraceRegs
	if err := unix.PtraceGetRegs(t.tid, &saved); err != nil {
		return 0, fmt.Errorf("get registers: %w", err)
	}
	var orig [2]byte
	if _, err := t.mm.mem.ReadMemory(at, orig[:]); err != nil {
		return 0, fmt.Errorf("read %#x: %w", at, err)
	}
	if _, err := t.mm.mem.WriteMemory(at, []byte{0x0f, 0x05}); err != nil { // syscall
		return 0, fmt.Errorf("write %#x: %w", at, err)
	}
	regs = saved
	regs.Rip = at
	regs.Rax = nr
	regs.Orig_rax = ^uint64(0) // not in a system call: nothing to restart
	a := make([]uint64, 6)
	copy(a, args)
	regs.Rdi, regs.Rsi, regs.Rdx, regs.R10, regs.R8, regs.R9 = a[0], a[1], a[2], a[3], a[4], a[5]
	var (
		result uint64
		err    error
		resend []int
	)
	if err = unix.PtraceSetRegs(t.tid, &regs); err == nil {
		result, resend, err = m.stepSyscall(t, at)
		if errors.Is(err, errThreadEnded) {
			return 0, err // nothing left to restore
		}
	}
	// The code and the registers must be restored whatever happened: a
	// failure here leaves the thread or its process broken, so it is joined
	// with the error of the call.
	if _, werr := t.mm.mem.WriteMemory(at, orig[:]); werr != nil {
		err = errors.Join(err, fmt.Errorf("restore the code at %#x: %w", at, werr))
	}
	if int64(saved.Orig_rax) >= 0 && restarts(saved.Rax) {
		// Stopped in an interrupted system call, which the kernel would
		// have restarted on the way out of this stop; the way out now is
		// the injected call's, which restarts nothing: restart it here
		// (arch/x86/kernel/signal.c, no handler to run).
		if int64(saved.Rax) == -516 {
			saved.Rax = sysRestartSyscall
		} else {
			saved.Rax = saved.Orig_rax
		}
		saved.Rip -= 2
	}
	if serr := unix.PtraceSetRegs(t.tid, &saved); serr != nil {
		err = errors.Join(err, fmt.Errorf("restore the registers of thread %d: %w", t.tid, serr))
	}
	for _, s := range resend {
		m.resend(t, s)
	}
	return result, err
}

// stepSyscall runs t, whose registers are set for a system call at at,
// until the call has run, and returns its result and the signals that
// arrived meanwhile. It runs the thread to the call's syscall-exit-stop
// (PTRACE_SYSCALL), not by single-steps: a step's trap is a forced SIGTRAP,
// which would change the program's signal state (sigstate_linux_amd64.go).
// The stops are the monitor's own: they are decoded here, not dispatched.
//
// Preconditions: on the tracer thread; t is stopped at at.
func (m *mon) stepSyscall(t *thread, at uint64) (result uint64, resend []int, err error) {
	var regs unix.PtraceRegs
	for tries := 0; tries < 16; tries++ {
		if err := contSyscall(t.tid, 0); err != nil {
			return 0, resend, fmt.Errorf("run thread %d: %w", t.tid, err)
		}
		ev, err := m.waitFor(t)
		if err != nil {
			return 0, resend, fmt.Errorf("wait for thread %d: %w", t.tid, err)
		}
		switch st := decodeStatus(ev.ws); st.kind {
		case stopGone:
			m.reap(ev.tid, st)
			return 0, resend, errThreadEnded
		case stopSignal:
			resend = append(resend, int(st.sig))
			continue
		case stopSyscall:
		default:
			continue // an event stop before the instruction: run on
		}
		var si syscallInfo
		if err := getSyscallInfo(t.tid, &si); err != nil {
			return 0, resend, fmt.Errorf("read the system call of thread %d: %w", t.tid, err)
		}
		if si.Op != unix.PTRACE_SYSCALL_INFO_EXIT {
			continue
		}
		if err := unix.PtraceGetRegs(t.tid, &regs); err != nil {
			return 0, resend, fmt.Errorf("read the registers of thread %d: %w", t.tid, err)
		}
		if regs.Rip == at+2 {
			return regs.Rax, resend, nil
		}
	}
	return 0, resend, errors.New("the system call did not complete")
}
