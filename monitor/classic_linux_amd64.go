//go:build linux && amd64

package monitor

import (
	"github.com/patchprof/patchprof/breakpoint"
	"golang.org/x/sys/unix"
)

// hit is Bishop's cycle for one trap of thread t at site i (runtime address
// addr): count, put the original byte back, single-step, re-arm, continue.
//
// Preconditions: on the tracer thread; t is stopped just after the int3.
func (m *mon) hit(t *thread, mp *mapping, i int, addr uint64) {
	tab := mp.tab
	cur := m.cursorOf(t, mp, i, m.regs.R14)
	undo := tab.Hit(cur, i, m.regs.Rsp)
	if tab.OriginalByte(i) == breakpoint.Int3 {
		// The program's own int3 is at the site: it has just executed, as
		// it would have without us. Deliver its SIGTRAP (the stop's siginfo,
		// SI_KERNEL, is the one the kernel made for it).
		m.signal(t, unix.SIGTRAP)
		return
	}
	sp := t.sp
	if m.stopOthers(sp, t) {
		m.res.Holds++
	}
	m.regs.Rip = addr
	if err := unix.PtraceSetRegs(t.tid, &m.regs); err != nil {
		m.resumeOthers(sp, t)
		return
	}
	if err := tab.DisarmIn(sp.mem, i); err != nil {
		m.resumeOthers(sp, t)
		return
	}
	sp.dis, sp.disarmed = mp, i
	executed := m.step(t, mp, i, addr)
	if !sp.dead {
		tab.ArmIn(sp.mem, i)
		sp.dis = nil
		if tab.IsNotify(i) && executed {
			// The dynamic linker has changed its list of objects: plant in
			// what it mapped, forget what it unmapped, with the other threads
			// still held.
			m.scanMaps(sp)
		}
	}
	if !executed {
		tab.Unhit(cur, undo)
	}
	if m.threads[t.tid] == t && t.state == stopped && t.held == 0 {
		m.resume(t, 0)
	}
	m.resumeOthers(sp, t)
}

// step single-steps t over the original instruction of site i. It reports
// whether the instruction ran: it did not when a signal handler was entered first
// or a job-control stop intervened; then the thread will trap at the site again
// and be counted then.
func (m *mon) step(t *thread, mp *mapping, i int, addr uint64) bool {
	sig := 0
	handler := false
	for {
		if singleStep(t.tid, sig) != nil {
			return true
		}
		t.state = running
		sig = 0
		ev, err := m.waitFor(t)
		if err != nil {
			return true
		}
		if ev.ws.Exited() || ev.ws.Signaled() {
			m.reap(ev)
			return !handler
		}
		t.state = stopped
		s := ev.ws.StopSignal()
		switch cause := trapCause(ev.ws); cause {
		case unix.PTRACE_EVENT_STOP:
			if isStopSignal(s) {
				// Job-control stop before the instruction ran: leave the thread
				// in the stop; it traps at the site again when continued.
				t.groupStop = true
				return false
			}
			t.groupStop = false
		case unix.PTRACE_EVENT_CLONE, unix.PTRACE_EVENT_FORK, unix.PTRACE_EVENT_VFORK:
			m.newTask(t, cause, mp, i)
		case unix.PTRACE_EVENT_VFORK_DONE:
			t.vforkWait = false
		case unix.PTRACE_EVENT_EXEC:
			m.exec(t)
			return true
		case 0:
			if s == unix.SIGTRAP {
				if getSiginfo(t.tid, &m.si) != nil {
					return true
				}
				if m.si.Code <= 0 { // SI_USER, SI_TKILL, SI_QUEUE: a SIGTRAP somebody sent
					m.noteFault(t, s)
					sig = int(s)
					handler = handler || caught(t.tid, s)
					continue
				}
				if handler {
					return false // stopped on the handler's first instruction
				}
				if mp.tab.IsRep(i) {
					if unix.PtraceGetRegs(t.tid, &m.regs) == nil && m.regs.Rip == addr {
						m.finishRep(t, mp, i, addr)
					}
				}
				return true
			}
			m.noteFault(t, s)
			sig = int(s)
			// A fault of the instruction itself counts its entry, whatever
			// the handler then does (Go's recover, longjmp, a crash), as
			// gcov does; only a signal that came before it is undone.
			handler = handler || (!syncFault(s, m.si.Code) && caught(t.tid, s))
		}
	}
}

// finishRep lets a rep-prefixed string instruction run its remaining iterations
// without a stop per iteration: with the site's byte still out and the other
// threads still held, it plants a temporary int3 after the instruction and
// continues t to it. One execution, one count.
func (m *mon) finishRep(t *thread, mp *mapping, i int, addr uint64) {
	n := mp.tab.InsnLen(i)
	if n == 0 {
		return
	}
	next := addr + uint64(n)
	sp := t.sp
	nmp, j, isSite := sp.lookup(next)
	temp := !(isSite && nmp.tab.Armed(j))
	var orig [1]byte
	if temp {
		if _, err := sp.mem.ReadMemory(next, orig[:]); err != nil {
			return
		}
		if _, err := sp.mem.WriteMemory(next, []byte{breakpoint.Int3}); err != nil {
			return
		}
	}
	restore := func() {
		if temp && !sp.dead {
			sp.mem.WriteMemory(next, orig[:])
		}
	}
	sig := 0
	for {
		if cont(t.tid, sig) != nil {
			restore()
			return
		}
		t.state = running
		sig = 0
		ev, err := m.waitFor(t)
		if err != nil {
			restore()
			return
		}
		if ev.ws.Exited() || ev.ws.Signaled() {
			m.reap(ev)
			restore()
			return
		}
		t.state = stopped
		s := ev.ws.StopSignal()
		switch cause := trapCause(ev.ws); cause {
		case unix.PTRACE_EVENT_STOP:
			if isStopSignal(s) {
				t.groupStop = true
				restore()
				return
			}
		case unix.PTRACE_EVENT_CLONE, unix.PTRACE_EVENT_FORK, unix.PTRACE_EVENT_VFORK:
			if c := m.newTask(t, cause, mp, i); c != nil && temp && c != sp {
				c.mem.WriteMemory(next, orig[:])
			}
		case unix.PTRACE_EVENT_EXEC:
			m.exec(t)
			return
		case 0:
			if s == unix.SIGTRAP && getSiginfo(t.tid, &m.si) == nil && m.si.Code == siKernel &&
				unix.PtraceGetRegs(t.tid, &m.regs) == nil && m.regs.Rip-1 == next {
				if temp {
					restore()
					m.regs.Rip = next
					unix.PtraceSetRegs(t.tid, &m.regs)
				} else {
					// A real site follows: count it from the queue, after the
					// int3 at i is back.
					t.held++
					m.queue = append([]event{ev}, m.queue...)
				}
				return
			}
			m.noteFault(t, s)
			sig = int(s)
		}
	}
}

// stopOthers stops every running thread of sp except t (PTRACE_INTERRUPT) and
// waits until they have all stopped, so none runs past a disarmed site. It
// reports whether any had to be stopped.
//
// Preconditions: on the tracer thread.
func (m *mon) stopOthers(sp *space, t *thread) (held bool) {
	m.cur = sp
	waiting := 0
	for _, u := range sp.threads {
		if u != t && u.state == running && !u.vforkWait {
			// A dead thread answers ESRCH; its exit report ends the wait.
			interrupt(u.tid)
			waiting++
		}
	}
	held = waiting > 0
	for waiting > 0 {
		ev, err := m.wait()
		if err != nil {
			return held
		}
		m.deferEvent(ev)
		waiting = 0
		for _, u := range sp.threads {
			if u != t && u.state == running && !u.vforkWait {
				waiting++
			}
		}
	}
	return held
}

// resumeOthers restarts the threads stopOthers stopped, except those with
// events still queued (the main loop handles those).
func (m *mon) resumeOthers(sp *space, t *thread) {
	m.cur = nil
	for _, u := range sp.threads {
		if u != t && u.state == stopped && u.held == 0 && !u.fresh {
			m.resume(u, 0)
		}
	}
}
