//go:build linux && amd64

package monitor

// Signals and the in-process engine: a handler must never see a PC in a
// trampoline, and a handler's return must never land inside the bytes a
// jump patch covers.

import (
	"encoding/binary"
	"fmt"

	"github.com/patchprof/patchprof/breakpoint/jump"
	"golang.org/x/arch/x86/x86asm"
	"golang.org/x/sys/unix"
)

// outOfTrampoline runs before a signal is delivered to t: a handler must see
// the program's own PC (Go's sigpanic and tracebacks need a PC inside the
// function; a fault must look as it would without patchprof). A fault in a
// displaced instruction is reported at its original address; an
// asynchronous signal is delivered before the counter update (the thread
// counts again when the handler returns to the site; one inside an update
// that keeps the flags is put back as it was there, rewind) or once the
// thread has stepped out of the trampoline. It returns false when the
// signal is no longer to be delivered from this stop (t was stepped: the
// caller resumes it with the saved siginfo).
//
// Preconditions: on the tracer thread; t is in the signal-delivery-stop st.
func (m *mon) outOfTrampoline(t *thread, st *sigStop) {
	if t.mm.dead || t.mm.ctr == nil {
		return
	}
	pc, err := peekUser(t.tid, offRip)
	if err != nil {
		return
	}
	mp, i, tr := t.mm.trampolineAt(pc)
	if tr == nil {
		return
	}
	orig, p := tr.Where(pc)
	fault := st.fault()
	switch {
	case p == jump.InCount:
		counted, ok := m.rewind(t, tr)
		if ok && counted {
			m.uncount(t, mp, i)
		}
		if ok && !fault {
			m.takeEntryCall(t, mp, i)
		}
		if f := m.faults[t.tgid]; fault && f != nil {
			// The update's own fault (its push past the end of the
			// stack): the program's instruction has not begun, and
			// movedFault records where the thread now is.
			f.Entered = false
		}
		return
	case p == jump.BeforeCount, p == jump.Counted:
		if p == jump.Counted && !fault {
			m.uncount(t, mp, i)
		}
	case p == jump.InDisplaced && (fault || !tr.Covers(orig)):
	default:
		// In the middle of the displaced instructions, whose original
		// bytes are the patch: step to where the program can be.
		var info siginfo
		have := getSiginfo(t.tid, &info) == nil
		if s := m.leaveScratch(t, false); s != 0 {
			m.resend(t, s)
		}
		if have {
			if err := setSiginfo(t.tid, &info); err != nil {
				m.lose(fmt.Errorf("restore the siginfo of signal %d for thread %d: %w", st.sig, t.tid, err))
			}
		}
		return
	}
	if err := pokeUser(t.tid, offRip, orig); err != nil {
		m.lose(fmt.Errorf("move thread %d out of its trampoline: %w", t.tid, err))
		return
	}
	if p == jump.BeforeCount && !fault {
		m.takeEntryCall(t, mp, i)
	}
}

// takeEntryCall counts, for a thread put back at site i of mp before its
// function's entry check ran (to be sent into a signal handler), the
// pending call that entered it, as the check would have: the handler may
// move the thread's goroutine to another thread (Go's asynchronous
// preemption at a function's first instruction), whose slab holds no
// pending call, or run other entry checks on this one, which clear it.
// Site i is the entry, or the start of a Go function's stack check before
// it (the same stack pointer). Once taken, the check finds nothing
// pending when the thread runs it after the handler.
//
// Preconditions: on the tracer thread; t is stopped at the site.
func (m *mon) takeEntryCall(t *thread, mp *mapping, i int) {
	e, ok := mp.tab.EntryAfter(i)
	if !ok || mp.tab.Prologue(e) != jump.PrologueEntryCheck {
		return
	}
	if rsp, err := peekUser(t.tid, offRsp); err == nil {
		m.enteredBy(t, mp, e, rsp)
	}
}

// rewind puts a thread inside tr's counter update that keeps the flags
// (jump.InCount) back at the site as it was before the update. It reports
// whether the update had written the counter, and false when the thread
// was not moved.
//
// Preconditions: on the tracer thread; t is stopped.
func (m *mon) rewind(t *thread, tr *jump.Trampoline) (counted, ok bool) {
	var regs unix.PtraceRegs
	if err := unix.PtraceGetRegs(t.tid, &regs); err != nil {
		m.lose(fmt.Errorf("read the registers of thread %d: %w", t.tid, err))
		return false, false
	}
	if counted, ok = m.rewindRegs(t, tr, &regs); !ok {
		return false, false
	}
	if err := unix.PtraceSetRegs(t.tid, &regs); err != nil {
		m.lose(fmt.Errorf("move thread %d out of its counter update: %w", t.tid, err))
		return false, false
	}
	return counted, true
}

// rewindRegs changes regs, those of thread t inside tr's counter update
// that keeps the flags (or inside a gate), to the site's: the registers
// from where the update saved them, the stack pointer, the PC
// (jump.Trampoline.Rewind). It reports whether the update had written the
// counter, and false when regs.Rip is no such point or the saved registers
// cannot be read (regs unchanged).
//
// Preconditions: on the tracer thread; t is stopped.
func (m *mon) rewindRegs(t *thread, tr *jump.Trampoline, regs *unix.PtraceRegs) (counted, ok bool) {
	rw, ok := tr.Rewind(regs.Rip)
	if !ok {
		return false, false
	}
	if !m.unsave(t, rw, regs) {
		return false, false
	}
	regs.Rip = tr.Addr
	return rw.Counted, true
}

// unsave puts back in regs the registers rw says a trampoline saved on the
// stack, and the stack pointer. It reports false when the stack cannot be
// read (regs unchanged).
//
// Preconditions: on the tracer thread; t is stopped.
func (m *mon) unsave(t *thread, rw jump.Rewind, regs *unix.PtraceRegs) bool {
	if len(rw.Saved) > 0 {
		b := make([]byte, 8*len(rw.Saved))
		if n, err := t.mm.mem.ReadMemory(regs.Rsp, b); n != len(b) {
			m.lose(fmt.Errorf("read the registers thread %d saved in a trampoline at %#x: %w", t.tid, regs.Rsp, err))
			return false
		}
		for k, r := range rw.Saved {
			v := binary.LittleEndian.Uint64(b[8*k:])
			switch r {
			case x86asm.RAX:
				regs.Rax = v
			case x86asm.RDI:
				regs.Rdi = v
			case x86asm.RSI:
				regs.Rsi = v
			case x86asm.RDX:
				regs.Rdx = v
			case x86asm.RCX:
				regs.Rcx = v
			case x86asm.R11:
				regs.R11 = v
			}
		}
	}
	regs.Rsp += rw.SP
	return true
}

// afterSigreturn puts a thread that a signal handler returned into the
// middle of a patched site (a fault reported there, a handler that fixed
// its cause) at the equivalent place of the trampoline.
//
// Preconditions: on the tracer thread; t is at the exit of rt_sigreturn.
func (m *mon) afterSigreturn(t *thread) {
	if t.mm.ctr == nil || t.mm.dead {
		return
	}
	pc, err := peekUser(t.tid, offRip)
	if err != nil {
		return
	}
	if t.mm.landingAt(pc) != nil {
		return // about to jump to a short site's trampoline
	}
	if tr := t.mm.coveredBy(pc); tr != nil {
		if to, ok := tr.Equivalent(pc); ok {
			if err := pokeUser(t.tid, offRip, to); err != nil {
				m.lose(fmt.Errorf("move thread %d into its trampoline: %w", t.tid, err))
			}
		}
	}
}
