//go:build linux && amd64

package monitor

import (
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// eventStop interprets a PTRACE_EVENT_STOP of t, which was in state was.
// It is the initial stop of a new task, the end of a PTRACE_LISTEN (SIGCONT
// arrived), a job-control stop (the stop signal), or one of our
// PTRACE_INTERRUPTs (SIGTRAP). An interrupt can be satisfied by any other stop
// the thread reports meanwhile, or arrive after it, so interrupt stops are not
// matched to requests: an extra one is simply resumed.
func (m *mon) eventStop(t *thread, was tstate, sig syscall.Signal) {
	switch {
	case t.fresh:
		t.fresh = false
	case was == listening:
		t.groupStop = false
	case isStopSignal(sig):
		t.groupStop = true
	}
}

// signal passes a signal through to the target, remembering where it was
// delivered in case it kills the process.
func (m *mon) signal(t *thread, sig syscall.Signal) {
	if sig == unix.SIGCONT && t.swallowCont {
		t.swallowCont = false
		m.resume(t, 0)
		return
	}
	m.noteFault(t, sig)
	if m.xolOn {
		m.outOfSlot(t, syncFault(sig, m.si.Code))
	}
	m.resume(t, int(sig))
}

func (m *mon) noteFault(t *thread, sig syscall.Signal) {
	switch sig {
	case unix.SIGCHLD, unix.SIGURG, unix.SIGWINCH, unix.SIGCONT:
		return // never fatal by default; Go's preemption sends SIGURG often
	}
	f := &Fault{Signal: int(sig)}
	if getSiginfo(t.tid, &m.si) == nil {
		f.Code = m.si.Code
		switch sig {
		case unix.SIGSEGV, unix.SIGBUS, unix.SIGILL, unix.SIGFPE:
			f.Addr = m.si.Addr
		}
	}
	if unix.PtraceGetRegs(t.tid, &m.regs) == nil {
		f.PC, f.SP = m.regs.Rip, m.regs.Rsp
		f.Maps = t.sp.snapshot()
		for _, mp := range t.sp.maps {
			if mp.xol != nil && mp.xol.contains(f.PC) {
				// In a slot: report the site whose instruction it is.
				if i := int((f.PC - mp.xol.base) / slotStride); i < mp.tab.Len() {
					f.PC = mp.tab.RuntimeAddr(i)
				}
			}
		}
		if !t.sp.dead {
			buf := make([]byte, 16<<10)
			n, _ := t.sp.mem.ReadMemory(f.SP, buf)
			if n < 0 {
				n = 0
			}
			f.Stack = buf[:n]
		}
	}
	m.faults[t.tgid] = f
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
