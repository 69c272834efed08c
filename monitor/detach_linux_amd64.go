//go:build linux && amd64

package monitor

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/patchprof/patchprof/breakpoint/relocate"
	"golang.org/x/sys/unix"
)

// detachAll ends profiling of a running target: it stops every thread, puts
// back every original byte in every address space, rewinds threads that had
// trapped on a site so they execute the real instruction, and detaches each
// thread, handing back any signal it was about to receive.
//
// Preconditions: on the tracer thread, with no step in progress.
func (m *mon) detachAll() {
	sig := map[int]int{} // signal to hand back at the detach, by thread
	m.stopAll(sig)
	// A thread in a slot of the out-of-line engine goes back to the
	// equivalent original address (or steps out), before the regions go.
	for _, t := range m.threads {
		if t.state == stopped && !t.mm.dead && t.mm.gated {
			// Stopped at a gate's GateStop before its SIGSTOP was
			// dequeued: it is still pending (dequeueGates).
			if pc, err := peekUser(t.tid, offRip); err == nil {
				m.oweGate(t, pc)
			}
		}
	}
	for _, t := range m.threads {
		if t.state == stopped && !t.mm.dead {
			if s := m.leaveScratch(t, true); s != 0 {
				if sig[t.tid] == 0 {
					sig[t.tid] = s
				} else {
					m.resend(t, s)
				}
			}
		}
	}
	done := map[*space]bool{}
	for _, t := range m.threads {
		if !t.mm.dead && !done[t.mm] {
			done[t.mm] = true
			m.fold(t.mm)
			// Every thread is stopped: the writes are held and made page
			// by page (stage_linux.go).
			t.mm.mem.beginStage()
			m.unjump(t.mm)
			for _, mp := range t.mm.maps {
				if err := mp.tab.RestoreIn(mp.memIn(t.mm)); err != nil {
					m.leaveChanged(fmt.Errorf("restore the code of %s in process %d: %w", mp.Image.Path, t.mm.tgid, err))
				}
			}
			if err := t.mm.mem.endStage(); err != nil {
				m.leaveChanged(fmt.Errorf("restore the code of process %d: %w", t.mm.tgid, err))
			}
		}
	}
	groupStopped := map[int]bool{}
	for _, t := range m.threads {
		if t.groupStop {
			groupStopped[t.tgid] = true
		}
	}
	m.dequeueTraps(sig)
	m.dequeueGates(sig)
	// A thread at a system call's entry is made able to run our munmaps,
	// in a space we may inject into: in a sandbox it is let go as it is.
	for _, t := range m.threads {
		if t.state == stopped && t.atEntry && !t.mm.dead && m.mayInject(t.mm) {
			m.leaveEntry(t)
		}
	}
	// A thread stopped at its clone or fork event is inside the call: run
	// on to the call's exit, it can run the munmaps (the leader of a
	// program that creates threads often is there, with its new thread not
	// yet at its first stop).
	for _, t := range m.threads {
		if t.state == stopped && t.inCreate && !t.mm.dead {
			if err := m.leaveCreate(t); err != nil && !errors.Is(err, errThreadEnded) {
				m.lose(err)
			}
		}
	}
	m.freeAllScratch()
	for _, img := range m.imgs {
		img.Table.Unplant()
	}
	tgids := map[int]bool{}
	for _, t := range m.threads {
		tgids[t.tgid] = true
		if t.state == listening {
			// A PTRACE_LISTEN tracee is not in a ptrace-stop: stop it so it
			// can be detached; it stays in its group-stop after.
			if err := interrupt(t.tid); err != nil {
				m.lose(fmt.Errorf("interrupt thread %d: %w", t.tid, err))
			}
			var ws unix.WaitStatus
			if err := waitPid(t.tid, &ws, unix.WALL); err != nil {
				m.lose(fmt.Errorf("wait for thread %d: %w", t.tid, err))
			}
		}
		m.detach(t, sig[t.tid])
	}
	// A process that was running must not be left stopped by the detach
	// (ptrace(2), "PTRACE_DETACH": a stop can be left pending); one in a
	// job-control stop stays stopped, as without patchprof.
	for tgid := range tgids {
		if !groupStopped[tgid] && processState(tgid) == 'T' {
			if err := unix.Kill(tgid, unix.SIGCONT); err != nil && !gone(err) {
				m.lose(fmt.Errorf("continue process %d: %w", tgid, err))
			}
		}
	}
}

// freeAllScratch unmaps every space's scratch regions (the xol engine's
// slots, the jump engine's trampolines and counters) through one of its
// threads, the longest-lived first, the leader: a worker may end while it
// runs the munmap, and then the next one tries. A space none of whose
// threads could run it is reported as changed (leftScratch).
//
// Preconditions: on the tracer thread; every thread is stopped and the
// code restored.
func (m *mon) freeAllScratch() {
	freed := map[*space]bool{}
	for _, leaders := range []bool{true, false} {
		for _, t := range m.threads {
			if (t.tid == t.tgid) == leaders && m.traced(t) && t.canInject() && !t.mm.dead && !freed[t.mm] {
				if freed[t.mm] = m.freeXOL(t.mm, t); freed[t.mm] {
					freed[t.mm] = m.freeJump(t.mm, t)
				}
			}
		}
	}
	for _, t := range m.threads {
		if !t.mm.dead && !freed[t.mm] {
			freed[t.mm] = true
			m.leftScratch(t.mm)
		}
	}
}

// stopAll handles what is queued (registering new tasks, noting signals and
// traps in sig) and stops every thread, until none runs.
//
// Preconditions: on the tracer thread, with no step in progress.
func (m *mon) stopAll(sig map[int]int) {
	for {
		for len(m.queue) > 0 {
			ev := m.queue[0]
			m.queue = m.queue[1:]
			if t := m.threads[ev.tid]; t != nil && t.held > 0 {
				t.held--
			}
			m.settle(ev, sig)
		}
		for tid, ev := range m.orphans {
			if m.threads[tid] != nil {
				delete(m.orphans, tid)
				m.settle(ev, sig)
			}
		}
		busy := 0
		for _, t := range m.threads {
			if t.runsCode() {
				if err := interrupt(t.tid); err != nil {
					m.lose(fmt.Errorf("interrupt thread %d: %w", t.tid, err))
				}
				busy++
			}
		}
		if busy == 0 {
			return
		}
		for busy > 0 {
			ev, err := m.wait()
			if err != nil {
				m.lose(fmt.Errorf("wait for the target to stop: %w", err))
				break
			}
			if t := m.threads[ev.tid]; t != nil && t.state == running {
				busy--
			}
			m.settle(ev, sig)
		}
	}
}

// settle handles one event on the way to the detach: what dispatch does,
// and for a signal-delivery-stop, a trap at one of our sites is rewound onto
// the site (whose instruction the thread then executes, after the detach),
// and any other signal is recorded in sig, to be handed back at the detach.
//
// Preconditions: on the tracer thread.
func (m *mon) settle(ev event, sig map[int]int) {
	t, ps, out := m.dispatch(ev)
	if out != outSignal {
		return
	}
	st := &sigStop{sig: ps.sig}
	if st.sig == unix.SIGTRAP && st.load(t.tid) == nil && st.info.Code == siKernel {
		if mp, i, ok := t.mm.lookup(st.regs.Rip - 1); ok && mp.tab.Armed(i) && mp.tab.OriginalByte(i) != relocate.Int3 && mp.tab.OriginalByte(i) != icebp {
			t.trapped = true
			regs := st.regs
			regs.Rip--
			if err := unix.PtraceSetRegs(t.tid, &regs); err != nil {
				m.lose(fmt.Errorf("rewind thread %d onto %#x: %w", t.tid, regs.Rip, err))
			}
			return
		}
	}
	if st.sig == unix.SIGSTOP && st.load(t.tid) == nil && m.settleGate(t, st) {
		return
	}
	if !(st.sig == unix.SIGCONT && t.swallowCont) {
		sig[t.tid] = int(st.sig)
	}
}

// leaveCreate runs t, stopped at the clone or fork event of the call it is
// in, on to that call's syscall-exit-stop, where a system call may be
// injected. The new task's first stop, if it comes meanwhile, is queued.
//
// Preconditions: on the tracer thread; t is stopped at that event.
func (m *mon) leaveCreate(t *thread) error {
	for tries := 0; tries < 4; tries++ {
		if err := contSyscall(t.tid, 0); err != nil {
			return fmt.Errorf("run thread %d out of its system call: %w", t.tid, err)
		}
		ev, err := m.waitFor(t)
		if err != nil {
			return fmt.Errorf("wait for thread %d: %w", t.tid, err)
		}
		switch st := decodeStatus(ev.ws); st.kind {
		case stopGone:
			m.reap(ev.tid, st)
			return errThreadEnded
		case stopSyscall:
			t.inSyscall, t.inCreate = false, false
			return nil
		case stopEvent:
			continue // a group-stop's report: run on to the exit
		default:
			return fmt.Errorf("thread %d stopped with status %#x on its way out of a system call", t.tid, uint32(ev.ws))
		}
	}
	return fmt.Errorf("thread %d did not leave its system call", t.tid)
}

// dequeueTraps handles the threads that executed an int3 and were stopped by
// our interrupt before their SIGTRAP was dequeued: the signal is still
// pending and would kill the process after the detach. The kernel dequeues
// it when the thread is continued (a synchronous signal is dequeued before
// any other, and before any user instruction runs), and settle rewinds the
// thread onto the restored instruction.
//
// Preconditions: on the tracer thread; every thread is stopped and the code
// restored.
func (m *mon) dequeueTraps(sig map[int]int) {
	m.dequeue(sig, func(t *thread) bool {
		return sig[t.tid] == 0 && pendingFor(t, unix.SIGTRAP)
	})
}

// dequeue continues each stopped thread for which pending reports a
// signal still to be taken, until it reports none: the kernel dequeues
// the signal before the thread runs any instruction of its own, and
// settle takes the stop (a trap rewound onto its site, a gate's SIGSTOP
// suppressed, any other signal kept to hand back at the detach).
//
// Preconditions: on the tracer thread; every thread is stopped.
func (m *mon) dequeue(sig map[int]int, pending func(*thread) bool) {
	for _, t := range m.threads {
		for t.state == stopped && !t.mm.dead && pending(t) {
			if err := cont(t.tid, 0); err != nil {
				m.lose(fmt.Errorf("continue thread %d: %w", t.tid, err))
				break
			}
			var ws unix.WaitStatus
			if err := waitPid(t.tid, &ws, unix.WALL); err != nil {
				m.lose(fmt.Errorf("wait for thread %d: %w", t.tid, err))
				break
			}
			if decodeStatus(ws).kind != stopSignal {
				break
			}
			m.settle(event{tid: t.tid, ws: ws}, sig)
		}
	}
}

// pendingFor reports whether sig is pending for thread t itself
// (/proc/PID/task/TID/status, SigPnd).
func pendingFor(t *thread, sig unix.Signal) bool {
	return signalInMask(fmt.Sprintf("/proc/%d/task/%d/status", t.tgid, t.tid), "SigPnd", int(sig))
}

// processState returns the state letter of /proc/PID/stat ('R', 'S', 'T', ...).
func processState(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return 0
	}
	return s[i+2]
}

// leftScratch reports an error for every scratch region of mm still mapped,
// the in-process engine's trampolines and counters included: no thread of
// mm could run the munmap.
func (m *mon) leftScratch(mm *space) {
	for _, mp := range mm.maps {
		if mp.xol != nil {
			m.leaveChanged(fmt.Errorf("the scratch region at %#x of %s stays in process %d: no thread of it could unmap it", mp.xol.base, mp.Image.Path, mm.tgid))
			mp.xol = nil
		}
		if mp.jmp != nil && mp.jmp.base != 0 {
			m.leaveChanged(fmt.Errorf("the trampolines at %#x of %s stay in process %d: no thread of it could unmap them", mp.jmp.base, mp.Image.Path, mm.tgid))
			mp.jmp = nil
		}
	}
	if c := mm.ctr; c != nil {
		m.leaveChanged(fmt.Errorf("the counter memory at %#x stays in process %d: no thread of it could unmap it", c.base, mm.tgid))
	}
}
