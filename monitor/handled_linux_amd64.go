package monitor

import (
	"github.com/patchprof/patchprof/breakpoint/jump"
	"golang.org/x/sys/unix"
)

// noteHandled records in the result a fault delivered to a handler of the
// program, with the original address noteFault found (outside any slot
// or trampoline), when it lies in a profiled image.
//
// Preconditions: on the tracer thread; t is in the signal-delivery-stop
// st, and noteFault has run for it.
func (m *mon) noteHandled(t *thread, st *sigStop) {
	t.noted = 0
	f := m.faults[t.tgid]
	if f == nil || !st.fault() || !caught(t.tid, st.sig) {
		return
	}
	for _, mp := range t.mm.maps {
		if f.PC >= mp.Lo && f.PC < mp.Hi && mp.Image != nil {
			m.res.Handled = append(m.res.Handled, HandledFault{Image: mp.Image, Addr: f.PC - mp.Bias})
			t.noted = len(m.res.Handled)
			return
		}
	}
}

// A frame is a handler of the program that a thread was sent into and
// has not returned from (rt_sigreturn).
type frame struct {
	// fault is 1 + the index in Result.Handled of the fault that sent the
	// thread there, 0 for a signal that was not a fault.
	fault int
	// at is where a signal that was not a fault interrupted the thread,
	// when that is in a profiled image (in).
	at ThreadEnd
	in bool
	// pend is the indirect call the signal found pending, taken out of
	// the thread's way while the handler runs (its own calls would
	// overwrite it) and put back at rt_sigreturn (calls_linux_amd64.go).
	pend savedPend
}

// enterHandler records that t is sent into a handler of the program by
// the signal of its current signal-delivery-stop: the fault noteHandled
// noted at this stop, or where the signal interrupted it.
//
// Preconditions: on the tracer thread; t is in a signal-delivery-stop,
// about to be resumed with a signal its process handles, and out of any
// trampoline or slot whose instruction it had not begun.
func (m *mon) enterHandler(t *thread) {
	f := frame{fault: t.noted, pend: m.stashPend(t)}
	t.noted = 0
	if f.fault == 0 {
		if rip, err := peekUser(t.tid, offRip); err == nil {
			if pc, entered, ok := m.original(t.mm, rip); ok {
				f.at, f.in = endAt(t.mm, pc, entered)
			}
		}
	}
	t.frames = append(t.frames, f)
}

// leaveHandler records that t returned from its innermost handler
// (rt_sigreturn).
func (t *thread) leaveHandler() {
	if n := len(t.frames); n > 0 {
		t.restorePend(t.frames[n-1].pend)
		t.frames = t.frames[:n-1]
	}
}

// abandonHandlers records, when t ends or replaces its program, that the
// handlers it never returned from never resumed what their signals
// interrupted: a fault (HandledFault.Left), or an activation stopped
// where an asynchronous signal found it (a ThreadEnd: pthread_cancel of
// a thread in PTHREAD_CANCEL_ASYNCHRONOUS, whose handler unwinds it, or a
// siglongjmp out of a timer's handler).
//
// Preconditions: on the tracer thread.
func (m *mon) abandonHandlers(t *thread) {
	for _, f := range t.frames {
		switch {
		case f.fault > 0 && f.fault <= len(m.res.Handled):
			m.res.Handled[f.fault-1].Left = true
		case f.fault == 0 && f.in:
			m.res.ThreadEnds = append(m.res.ThreadEnds, f.at)
		}
	}
	t.frames, t.noted = nil, 0
}

// threadExit records where t was in profiled code when it ended
// (Result.ThreadEnds): its registers at PTRACE_EVENT_EXIT are those of
// the user context it left, at the instruction it was interrupted before
// (another thread's exit_group or execve, a fatal signal) or just after
// the system call that ended it. A PC in a trampoline or an out-of-line
// slot is reported at the original instruction (original); one just past
// an armed int3 whose trap was never served is reported at the site, not
// entered.
// The thread that took the process's fatal fault is not recorded again:
// its end is the crash's (Result.Exit.Fault).
//
// Preconditions: on the tracer thread; t is in its PTRACE_EVENT_EXIT stop.
func (m *mon) threadExit(t *thread) {
	var regs unix.PtraceRegs
	if err := unix.PtraceGetRegs(t.tid, &regs); err != nil {
		return // gone already: there is nothing to read
	}
	mm := t.mm
	pc, entered, ok := m.original(mm, regs.Rip)
	if !ok {
		return // half way through an emulated call: no original point
	}
	if pc == regs.Rip {
		if mp, i, ok := mm.lookup(pc - 1); ok && mp.tab.Armed(i) && !mm.dead {
			pc = pc - 1 // executed the int3, its trap still to be served
		}
	}
	if f := m.faults[t.tgid]; f != nil && f.PC == pc && f.SP == regs.Rsp {
		return
	}
	if e, ok := endAt(mm, pc, entered); ok {
		m.res.ThreadEnds = append(m.res.ThreadEnds, e)
	}
}

// endAt is the ThreadEnd of an activation stopped at original address pc
// of mm, if pc is in a profiled image.
func endAt(mm *space, pc uint64, entered bool) (ThreadEnd, bool) {
	for _, mp := range mm.maps {
		if pc >= mp.Lo && pc < mp.Hi && mp.Image != nil {
			return ThreadEnd{Image: mp.Image, Addr: pc - mp.Bias, Entered: entered}, true
		}
	}
	return ThreadEnd{}, false
}

// original maps a thread's PC to the original instruction it stands for:
// in a trampoline, the instruction it is equivalent to; in an out-of-line
// slot, the slot's site; anywhere else, pc itself. entered says the thread
// was counted at that site and is past the count (a trampoline's point
// after its counter update and before its next displaced instruction, or
// a slot, entered through the site's trap); a thread at a block's first
// instruction has otherwise not begun that block. ok is false for a point
// with no original equivalent (an emulated call half done), where pc is
// returned unchanged.
func (m *mon) original(mm *space, pc uint64) (orig uint64, entered, ok bool) {
	if _, _, tr := mm.trampolineAt(pc); tr != nil {
		to, p := tr.Where(pc)
		switch p {
		case jump.Inside:
			return pc, false, false
		case jump.InCount:
			rw, _ := tr.Rewind(pc)
			return to, rw.Counted, true
		}
		return to, p == jump.Counted, true
	}
	if site, ok := m.slotSite(mm, pc); ok {
		return site, true, true
	}
	return pc, false, true
}

// slotSite returns the runtime address of the site whose out-of-line slot
// holds pc.
func (m *mon) slotSite(mm *space, pc uint64) (uint64, bool) {
	for _, mp := range mm.maps {
		if mp.xol != nil && mp.xol.contains(pc) {
			if i := int((pc - mp.xol.base) / slotStride); i < mp.tab.Len() {
				return mp.tab.RuntimeAddr(i), true
			}
		}
	}
	return 0, false
}
