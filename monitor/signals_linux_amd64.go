//go:build linux && amd64

package monitor

import (
	"fmt"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// eventStop interprets a PTRACE_EVENT_STOP of t, which was in state was.
// It is the initial stop of a new task, the end of a PTRACE_LISTEN (SIGCONT
// arrived), a job-control stop (the stop signal), or one of our
// PTRACE_INTERRUPTs (SIGTRAP). An interrupt can be satisfied by any other stop
// the thread reports meanwhile, or arrive after it, so interrupt stops are not
// matched to requests: an extra one is simply resumed. It reports whether t
// entered a job-control stop.
func (m *mon) eventStop(t *thread, was tstate, sig syscall.Signal) (jobStop bool) {
	if t.kicked && t.untraced && !t.fresh && sig == unix.SIGTRAP {
		m.unkickAtStop(t)
	}
	t.kicked = false // an interrupt of ours, if pending, ends here
	switch {
	case t.fresh:
		t.fresh = false
	case was == listening:
		t.groupStop = false
	case isStopSignal(sig):
		t.groupStop = true
		return true
	}
	return false
}

// A sigStop is a signal-delivery-stop of a thread as the monitor reads it:
// the signal and, once read, its siginfo and the thread's registers. It is
// passed down explicitly, so that what a function reads does not depend on
// another having read it first; each part is read at most once.
type sigStop struct {
	sig      syscall.Signal
	info     siginfo
	regs     unix.PtraceRegs
	haveInfo bool // info holds the stop's siginfo
	haveRegs bool // regs holds the thread's registers
}

// loadInfo reads the stop's siginfo, once.
//
// Preconditions: on the tracer thread; tid is in the signal-delivery-stop.
func (s *sigStop) loadInfo(tid int) error {
	if s.haveInfo {
		return nil
	}
	if err := getSiginfo(tid, &s.info); err != nil {
		return err
	}
	s.haveInfo = true
	return nil
}

// loadRegs reads the thread's registers, once.
//
// Preconditions: on the tracer thread; tid is in the signal-delivery-stop.
func (s *sigStop) loadRegs(tid int) error {
	if s.haveRegs {
		return nil
	}
	if err := unix.PtraceGetRegs(tid, &s.regs); err != nil {
		return err
	}
	s.haveRegs = true
	return nil
}

// load reads both.
func (s *sigStop) load(tid int) error {
	if err := s.loadRegs(tid); err != nil {
		return err
	}
	return s.loadInfo(tid)
}

// fault reports whether the stop is a fault of the instruction the thread
// was executing (see syncFault); false when the siginfo was not read.
func (s *sigStop) fault() bool { return s.haveInfo && syncFault(s.sig, s.info.Code) }

// signal passes a signal through to the target, remembering where it was
// delivered in case it kills the process.
//
// Preconditions: on the tracer thread; t is in the signal-delivery-stop st.
func (m *mon) signal(t *thread, st *sigStop) {
	if st.sig == unix.SIGCONT && t.swallowCont {
		t.swallowCont = false
		if t.tid == m.root && m.o.Attach == 0 && wantFilter(&m.o) {
			m.installFilter(t)
		}
		m.resume(t, 0)
		return
	}
	m.noteFault(t, st)
	m.noteHandled(t, st)
	if t.mm.gated && st.sig != unix.SIGSTOP && st.loadRegs(t.tid) == nil {
		m.oweGate(t, st.regs.Rip)
	}
	if m.jumpOn {
		m.outOfTrampoline(t, st)
	}
	if m.xolOn {
		m.outOfSlot(t, st.fault())
	}
	m.finishCall(t, st)
	m.movedFault(t, st)
	m.repair(t)
	m.delivering(t, int(st.sig), st.forced())
	m.resume(t, int(st.sig))
}

// forced reports whether the stop's signal was forced on the thread by the
// kernel (a fault, a trap: force_sig), rather than sent; false when the
// siginfo was not read.
func (s *sigStop) forced() bool {
	switch s.sig {
	case unix.SIGSEGV, unix.SIGBUS, unix.SIGFPE, unix.SIGILL, unix.SIGTRAP:
		return s.haveInfo && s.info.Code > 0
	}
	return false
}

// noteFault records where signal st is delivered to t (Mon.faults), for the
// crash report if it kills the process. Signals never fatal by default are
// not recorded, and their siginfo is not read.
//
// Preconditions: on the tracer thread; t is in the signal-delivery-stop st.
func (m *mon) noteFault(t *thread, st *sigStop) {
	switch st.sig {
	case unix.SIGCHLD, unix.SIGURG, unix.SIGWINCH, unix.SIGCONT:
		return // never fatal by default; Go's preemption sends SIGURG often
	}
	f := &Fault{Signal: int(st.sig)}
	m.faults[t.tgid] = f
	if err := st.load(t.tid); err != nil {
		m.lose(fmt.Errorf("read the state of thread %d at signal %d: %w", t.tid, st.sig, err))
		return
	}
	f.Code = st.info.Code
	switch st.sig {
	case unix.SIGSEGV, unix.SIGBUS, unix.SIGILL, unix.SIGFPE:
		f.Addr = st.info.Addr
	}
	f.PC, f.SP = st.regs.Rip, st.regs.Rsp
	f.Maps = t.mm.snapshot()
	// In a trampoline or a slot: report the original instruction. Only
	// a fault of the instruction there has begun it: a thread a signal
	// finds counted at a site, its displaced instruction not yet run, is
	// taken back to the site and its count with it (outOfTrampoline,
	// outOfSlot).
	if orig, _, ok := m.original(t.mm, f.PC); ok {
		f.PC = orig
	}
	f.Entered = syncFault(st.sig, st.info.Code)
	if !t.mm.dead {
		buf := make([]byte, 16<<10)
		n, _ := t.mm.mem.ReadMemory(f.SP, buf) // a short stack is still worth reporting
		f.Stack = buf[:max(n, 0)]
	}
}

// movedFault moves the record noteFault made of a signal that is not a
// fault to where the thread is now: leaving a trampoline or a slot may
// have stepped it on to a point where the program can be, and that is
// where the signal finds it, kills it, or interrupts it for a handler.
//
// Preconditions: on the tracer thread; t is in the signal-delivery-stop
// st, and noteFault has run for it.
func (m *mon) movedFault(t *thread, st *sigStop) {
	f := m.faults[t.tgid]
	if f == nil || f.Entered || !st.haveRegs || f.Signal != int(st.sig) || f.SP != st.regs.Rsp || t.mm.dead || !(m.jumpOn || m.xolOn) {
		return
	}
	var regs unix.PtraceRegs
	if err := unix.PtraceGetRegs(t.tid, &regs); err != nil || regs.Rip == st.regs.Rip {
		return
	}
	f.PC, f.SP = regs.Rip, regs.Rsp
	if orig, _, ok := m.original(t.mm, f.PC); ok {
		f.PC = orig
	}
}

// syncFault reports whether a signal is a fault of the instruction the thread
// was executing, raised by the CPU (si_code > 0: not sent by a process).
func syncFault(sig syscall.Signal, code int32) bool {
	switch sig {
	case unix.SIGSEGV, unix.SIGBUS, unix.SIGFPE, unix.SIGILL:
		return code > 0
	}
	return false
}

// caught reports whether the thread's process has a handler for sig, from
// /proc/TID/status SigCgt. Only read on the rare path of a signal arriving
// during a step.
func caught(tid int, sig syscall.Signal) bool {
	return signalInMask("/proc/"+strconv.Itoa(tid)+"/status", "SigCgt", int(sig))
}
