//go:build linux && amd64

package monitor

import (
	"fmt"

	"github.com/patchprof/patchprof/breakpoint"
	"github.com/patchprof/patchprof/breakpoint/relocate"
	"golang.org/x/sys/unix"
)

// The classic cycle, Bishop's: count, put the original byte back, single-step
// with the other threads of the address space held, put the int3 back.

// hit is Bishop's cycle for one trap of thread t at site i (runtime address
// addr): count, put the original byte back, single-step, re-arm, continue.
//
// Preconditions: on the tracer thread; t is stopped just after the int3, in
// the signal-delivery-stop st (loaded).
func (m *mon) hit(t *thread, mp *mapping, i int, addr uint64, st *sigStop) {
	tab := mp.tab
	cur := m.cursorOf(t, mp, i, st.regs.R14)
	undo := tab.Hit(cur, i, st.regs.Rsp)
	m.callTrap(t, mp, i, st.regs.Rsp)
	m.countEntry(t, tab, i, &st.regs, &undo)
	if ob := tab.OriginalByte(i); ob == relocate.Int3 || ob == icebp {
		// The program's own int3 or int1 is at the site: it has just
		// executed, as it would have without us, and the PC is past it.
		// Deliver its SIGTRAP (an int3's siginfo, SI_KERNEL, is the one the
		// kernel made for ours; an int1's says TRAP_BRKPT). Our trap stood
		// for the program's, with the same effect on its signal state.
		t.trapped = false
		if ob == icebp {
			st.info.Code = trapBrkpt
			if err := setSiginfo(t.tid, &st.info); err != nil {
				m.lose(fmt.Errorf("set the siginfo of thread %d's int1: %w", t.tid, err))
			}
		}
		m.signal(t, st)
		return
	}
	mm := t.mm
	if m.stopOthers(mm, t) {
		m.res.Holds++
	}
	// Put back what the trap changed before the step: SIGTRAP unblocked
	// would let one the program keeps pending through.
	m.repair(t)
	regs := st.regs
	regs.Rip = addr
	if err := unix.PtraceSetRegs(t.tid, &regs); err != nil {
		m.lose(fmt.Errorf("rewind thread %d onto %#x: %w", t.tid, addr, err))
		m.resumeOthers(mm, t)
		return
	}
	if err := tab.DisarmIn(mm.mem, i); err != nil {
		m.lose(fmt.Errorf("put back the original byte at %#x: %w", addr, err))
		m.resumeOthers(mm, t)
		return
	}
	mm.dis, mm.disarmed = mp, i
	frames := len(t.frames)
	executed := m.step(t, mp, i, addr)
	if !mm.dead {
		if err := tab.ArmIn(mm.mem, i); err != nil {
			m.lose(fmt.Errorf("re-arm the site at %#x (it counts no more in process %d): %w", addr, mm.tgid, err))
		}
		mm.dis = nil
		if tab.IsNotify(i) && executed {
			// The dynamic linker has changed its list of objects: plant in
			// what it mapped, forget what it unmapped, with the other threads
			// still held.
			if err := m.scanMaps(mm); err != nil {
				m.lose(fmt.Errorf("plant the libraries of process %d: %w", mm.tgid, err))
			}
			m.loaderWindow(t, mp)
		}
	}
	if !executed {
		tab.Unhit(cur, undo)
		m.asideAgain(t, cur, frames)
	}
	if m.traced(t) && t.state == stopped && t.held == 0 {
		m.resume(t, 0)
	}
	m.resumeOthers(mm, t)
}

// step single-steps t over the original instruction of site i. It reports
// whether the instruction ran: it did not when a signal handler was entered first
// or a job-control stop intervened; then the thread will trap at the site again
// and be counted then.
//
// Preconditions: on the tracer thread; the site's original byte is in memory
// (mm.dis), t is stopped on it and the other threads of its space are held.
func (m *mon) step(t *thread, mp *mapping, i int, addr uint64) bool {
	sig := 0
	handler := false
	for {
		if err := singleStep(t.tid, sig); err != nil {
			m.lose(fmt.Errorf("single-step thread %d: %w", t.tid, err))
			return true
		}
		t.state = running
		t.trapped = true // the step's trap is forced like an int3's
		sig = 0
		ev, err := m.waitFor(t)
		if err != nil {
			m.lose(fmt.Errorf("wait for thread %d: %w", t.tid, err))
			return true
		}
		_, ps, out := m.dispatch(ev)
		switch out {
		case outGone:
			return !handler
		case outExec:
			return true
		case outJobStop:
			// Job-control stop before the instruction ran: leave the thread
			// in the stop; it traps at the site again when continued.
			return false
		case outResume:
			if ps.kind == stopEvent {
				t.groupStop = false
			}
			continue
		}
		st := &sigStop{sig: ps.sig}
		if st.sig == unix.SIGTRAP {
			if err := st.loadInfo(t.tid); err != nil {
				m.lose(fmt.Errorf("read the siginfo of thread %d after a step: %w", t.tid, err))
				return true
			}
			if st.info.Code <= 0 && t.mask&trapBit != 0 {
				// Sent, blocked by the program, and let through by the
				// step's trap (see trap): it goes back pending, and the
				// step completed.
				m.requeue(t, &st.info)
				st.info.Code = trapTrace
			}
			if st.info.Code <= 0 { // SI_USER, SI_TKILL, SI_QUEUE: a SIGTRAP somebody sent
				m.noteFault(t, st)
				sig = int(st.sig)
				m.delivering(t, sig, false)
				handler = handler || caught(t.tid, st.sig)
				continue
			}
			if handler {
				return false // stopped on the handler's first instruction
			}
			if mp.tab.IsRep(i) {
				// Still on the instruction: it has iterations left.
				if err := st.loadRegs(t.tid); err != nil {
					m.lose(fmt.Errorf("read the registers of thread %d: %w", t.tid, err))
				} else if st.regs.Rip == addr {
					return m.finishRep(t, mp, i, addr)
				}
			}
			if mp.tab.OriginalByte(i) == opPushf && mp.tab.InsnLen(i) == 1 {
				m.clearPushedTF(t)
			}
			return true
		}
		m.noteFault(t, st)
		sig = int(st.sig)
		m.delivering(t, sig, st.forced())
		// A fault of the instruction itself counts its entry, whatever
		// the handler then does (Go's recover, longjmp, a crash), as
		// gcov does; only a signal that came before it is undone.
		handler = handler || (!st.fault() && caught(t.tid, st.sig))
	}
}

// opPushf is pushfq (Intel SDM vol. 2, PUSHF: 9C).
const opPushf = 0x9c

// clearPushedTF clears the trap flag in the flags a single-stepped pushf
// has just pushed: the step ran it with TF set, and a popf of that word
// would set TF again, making the program trap after the popf (Go's
// asyncPreempt saves and restores the flags so: its SIGTRAP "trace trap"
// is fatal).
//
// Preconditions: on the tracer thread; t has just executed a pushf.
func (m *mon) clearPushedTF(t *thread) {
	const tf = 1 << 8 // EFLAGS.TF
	rsp, err := peekUser(t.tid, offRsp)
	if err != nil {
		m.lose(fmt.Errorf("read the stack pointer of thread %d: %w", t.tid, err))
		return
	}
	var b [8]byte
	if _, err := t.mm.mem.ReadMemory(rsp, b[:]); err != nil {
		m.leaveChanged(fmt.Errorf("read the flags pushed by thread %d: %w", t.tid, err))
		return
	}
	if b[1]&(tf>>8) == 0 {
		return
	}
	b[1] &^= tf >> 8
	if _, err := t.mm.mem.WriteMemory(rsp, b[:]); err != nil {
		m.leaveChanged(fmt.Errorf("clear the trap flag pushed by thread %d: %w", t.tid, err))
	}
}

// finishRep lets a rep-prefixed string instruction run its remaining iterations
// without a stop per iteration: with the site's byte still out and the other
// threads still held, it plants a temporary int3 after the instruction and
// continues t to it. One execution, one count. It reports false when a
// signal handler that hit a site of its own interrupted the instruction: the
// thread traps at the site again when the handler returns, to finish the
// instruction, and is counted then.
//
// Preconditions: as for step; t has just executed one iteration.
func (m *mon) finishRep(t *thread, mp *mapping, i int, addr uint64) bool {
	n := mp.tab.InsnLen(i)
	if n == 0 {
		return true
	}
	next := addr + uint64(n)
	mm := t.mm
	nmp, j, isSite := mm.lookup(next)
	if !(isSite && nmp.tab.Armed(j)) {
		if err := mm.plantTemp(next); err != nil {
			m.lose(fmt.Errorf("plant a breakpoint after the rep instruction at %#x: %w", addr, err))
			return true
		}
		defer func() {
			if err := mm.removeTemp(); err != nil {
				m.lose(fmt.Errorf("remove the breakpoint after the rep instruction at %#x: %w", addr, err))
			}
		}()
	}
	sig := 0
	for {
		if sig != 0 {
			m.repair(t)
		}
		if err := contSyscall(t.tid, sig); err != nil {
			m.lose(fmt.Errorf("continue thread %d: %w", t.tid, err))
			return true
		}
		t.state = running
		sig = 0
		ev, err := m.waitFor(t)
		if err != nil {
			m.lose(fmt.Errorf("wait for thread %d: %w", t.tid, err))
			return true
		}
		_, ps, out := m.dispatch(ev)
		switch out {
		case outGone, outExec, outJobStop:
			// Ended, a new program (whose address space has none of our
			// bytes), or stopped by job control before the end.
			return true
		case outResume:
			continue // a new task: a fork child got the code without the temporary int3
		}
		st := &sigStop{sig: ps.sig}
		if st.sig == unix.SIGTRAP {
			if err := st.load(t.tid); err != nil {
				m.lose(fmt.Errorf("read the state of thread %d: %w", t.tid, err))
				return true
			}
			if st.info.Code == siKernel && st.regs.Rip-1 == next {
				if mm.temp != 0 {
					regs := st.regs
					regs.Rip = next
					if err := unix.PtraceSetRegs(t.tid, &regs); err != nil {
						m.lose(fmt.Errorf("rewind thread %d onto %#x: %w", t.tid, next, err))
					}
				} else {
					// A real site follows: count it from the queue, after the
					// int3 at i is back.
					t.held++
					m.queue = append([]event{ev}, m.queue...)
				}
				return true
			}
			if smp, j, ok := mm.lookup(st.regs.Rip - 1); st.info.Code == siKernel && ok && smp.tab.Armed(j) &&
				!(smp == mp && j == i) && smp.tab.OriginalByte(j) != relocate.Int3 && smp.tab.OriginalByte(j) != icebp {
				t.trapped = true
				if smp.tab.IsRep(j) {
					// A handler entered during the instruction hit another
					// rep: counted from the queue once the int3 at i is
					// back; the handler returns to the unfinished
					// instruction, which traps at i again.
					t.held++
					m.queue = append([]event{ev}, m.queue...)
					return false
				}
				// A handler entered during the instruction hit a site:
				// serve it here, with the others still held, so the
				// instruction goes on (giving it up would let a fast timer
				// starve it).
				m.hitInRep(t, smp, j, st)
				continue
			}
		}
		m.noteFault(t, st)
		sig = int(st.sig)
		m.delivering(t, sig, st.forced())
	}
}

// hitInRep is Bishop's cycle for a trap of t at site j of smp while t
// finishes a rep instruction (finishRep): count, put the byte back, step,
// re-arm.
//
// Preconditions: as for finishRep; t is stopped just after the int3 at j,
// in the signal-delivery-stop st (loaded).
func (m *mon) hitInRep(t *thread, smp *mapping, j int, st *sigStop) {
	addr := st.regs.Rip - 1
	cur := m.cursorOf(t, smp, j, st.regs.R14)
	undo := smp.tab.Hit(cur, j, st.regs.Rsp)
	m.callTrap(t, smp, j, st.regs.Rsp)
	m.countEntry(t, smp.tab, j, &st.regs, &undo)
	regs := st.regs
	regs.Rip = addr
	if err := unix.PtraceSetRegs(t.tid, &regs); err != nil {
		m.lose(fmt.Errorf("rewind thread %d onto %#x: %w", t.tid, addr, err))
		return
	}
	if err := smp.tab.DisarmIn(t.mm.mem, j); err != nil {
		m.lose(fmt.Errorf("put back the original byte at %#x: %w", addr, err))
		return
	}
	frames := len(t.frames)
	executed := m.step(t, smp, j, addr)
	if !t.mm.dead {
		if err := smp.tab.ArmIn(t.mm.mem, j); err != nil {
			m.lose(fmt.Errorf("re-arm the site at %#x (it counts no more in process %d): %w", addr, t.mm.tgid, err))
		}
	}
	if !executed {
		smp.tab.Unhit(cur, undo)
		m.asideAgain(t, cur, frames)
	}
}

// asideAgain sets cur's pending indirect call aside once more when the step
// of a trap that did not execute sent t into a signal handler (t had frames
// handlers before the step): enterHandler set the cursor aside while the
// trap's Hit had taken the call, and the Unhit that gave it back left it in
// the handler's way. The call goes with the innermost handler's frame, to
// be put back at its rt_sigreturn, before the thread traps at the site
// again.
func (m *mon) asideAgain(t *thread, cur *breakpoint.Cursor, frames int) {
	n := len(t.frames)
	if n <= frames {
		return
	}
	f := &t.frames[n-1]
	for k := range t.cursors {
		if &t.cursors[k] != cur {
			continue
		}
		for len(f.pend.cursors) <= k {
			f.pend.cursors = append(f.pend.cursors, breakpoint.SetAside{})
		}
		f.pend.cursors[k] = cur.SetAside()
		return
	}
}

// stopOthers stops every running thread of mm except t (PTRACE_INTERRUPT) and
// waits until they have all stopped, so none runs past a disarmed site. It
// reports whether any had to be stopped.
//
// Preconditions: on the tracer thread.
func (m *mon) stopOthers(mm *space, t *thread) (held bool) {
	m.cur = mm
	waiting := 0
	for _, u := range mm.threads {
		if u != t && u.runsCode() {
			u.kicked = true
			// A dead thread answers ESRCH; its exit report ends the wait.
			if err := interrupt(u.tid); err != nil {
				m.lose(fmt.Errorf("interrupt thread %d: %w", u.tid, err))
			}
			waiting++
		}
	}
	held = waiting > 0
	for waiting > 0 {
		ev, err := m.wait()
		if err != nil {
			m.lose(fmt.Errorf("wait for the threads of process %d to stop: %w", mm.tgid, err))
			return held
		}
		m.deferEvent(ev)
		waiting = 0
		for _, u := range mm.threads {
			if u != t && u.runsCode() {
				waiting++
			}
		}
	}
	return held
}

// resumeOthers restarts the threads stopOthers stopped, except those with
// events still queued (the main loop handles those).
func (m *mon) resumeOthers(mm *space, t *thread) {
	m.cur = nil
	for _, u := range mm.threads {
		if u != t && u.idle() {
			m.resume(u, 0)
		}
	}
}
