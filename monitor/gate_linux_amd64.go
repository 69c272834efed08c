//go:build linux && amd64

package monitor

import (
	"fmt"
	"slices"

	"github.com/patchprof/patchprof/breakpoint"
	"github.com/patchprof/patchprof/breakpoint/jump"
	"golang.org/x/sys/unix"
)

// Gates: the dynamic linker's notification point, and Go's asyncPreempt
// return (goquiet_linux_amd64.go), without an int3.
//
// In a process that runs without system-call stops (eager_linux_amd64.go)
// the notification site (_dl_debug_state) takes a gate (breakpoint/jump,
// gate.go): a trampoline that sends its thread SIGSTOP with tgkill, which
// the monitor sees as a signal-delivery-stop at the gate's GateStop. There
// it does what an int3 at the site does (re-reads the maps, plants what
// was mapped), puts the thread past the gate with the registers the gate
// saved, and suppresses the signal. A SIGSTOP the thread sent itself is
// ours only there: a program's own raise(SIGSTOP) is passed on.
//
// Another signal may be dequeued first (SIGSTOP is 19; lower numbers go
// first): the thread is then taken back to the site (outOfTrampoline) and
// runs the gate again after its handler, and the SIGSTOP it sent is still
// pending: thread.gateOwed counts those, and the monitor suppresses each
// when it is reported, wherever the thread is, and before a detach
// (dequeueGates), so that none stops the program after it.

// siTkill is si_code SI_TKILL: sent by tkill or tgkill (asm-generic/siginfo.h).
const siTkill = -6

// gateSite gives notification site i of mp a gate. It returns why not, or "".
//
// Preconditions: as for jumpSite.
func (m *mon) gateSite(t *thread, mp *mapping, i int) string {
	why, room := breakpoint.JumpNotify, mp.Image.NotifyRoom
	if mp.tab.IsResume(i) {
		why, room = breakpoint.JumpResume, 0
		if g := goFor(mp); g != nil {
			room = g.ResumeRoom
		}
	}
	if mp.tab.Kind(i) != 0 {
		return why // it counts too: the int3 does both
	}
	if reason := m.jumpRoom(t, mp); reason != "" {
		return reason
	}
	addr := mp.tab.RuntimeAddr(i)
	var code [jump.MaxHostLen + 40]byte
	n := mp.originalCode(t.mm, addr, code[:])
	js, ok := jump.PlanGate(code[:n], addr, room)
	if !ok {
		return why
	}
	tr, err := jump.BuildTrampoline(code[:n], addr, mp.jmp.place(i), js, 0)
	if err != nil {
		return breakpoint.JumpRelocation
	}
	if !mp.jmp.fits(i, tr) {
		return breakpoint.JumpNoRoom
	}
	if reason := m.writeJump(t, mp, i, tr); reason != "" {
		return reason
	}
	t.mm.gated = true
	return ""
}

// gateStop serves a SIGSTOP stop of t if a gate of ours sent it, and
// reports whether it did.
//
// Preconditions: on the tracer thread; t is in a signal-delivery-stop for
// SIGSTOP.
func (m *mon) gateStop(t *thread) bool {
	var si siginfo
	if getSiginfo(t.tid, &si) != nil || si.Code != siTkill || int(uint32(si.Addr)) != t.tgid {
		return false
	}
	var regs unix.PtraceRegs
	if err := unix.PtraceGetRegs(t.tid, &regs); err != nil {
		return false
	}
	mp, i, tr := t.mm.trampolineAt(regs.Rip)
	if tr == nil || !tr.IsGate() || regs.Rip != tr.GateStop() {
		if t.gateOwed == 0 {
			return false // the program's own
		}
		t.gateOwed--
		m.resume(t, 0)
		return true
	}
	m.res.Traps++
	if mp.tab.IsResume(i) {
		m.resumeGate(t, tr, &regs) // goquiet_linux_amd64.go
		m.resume(t, 0)
		return true
	}
	if !m.passGate(t, tr, &regs) {
		m.resume(t, 0)
		return true
	}
	m.stopOthers(t.mm, t)
	before := slices.Clone(t.mm.maps)
	if err := m.scanMaps(t.mm); err != nil {
		m.lose(fmt.Errorf("plant the libraries of process %d: %w", t.mm.tgid, err))
	}
	for _, mp := range before {
		if !slices.Contains(t.mm.maps, mp) {
			// Unloaded (dlclose): its munmap was not seen, its regions go now.
			m.freeGone(t.mm, t, mp)
		}
	}
	m.loaderWindow(t, mp)
	if t.mm.eager {
		m.jumpAll(t)
		t.mm.quiet = t.mm.quiet && t.mm.noTraps()
	}
	m.resume(t, 0)
	m.resumeOthers(t.mm, t)
	return true
}

// passGate puts t, stopped at tr's GateStop (regs), past the gate: the
// registers it saved back, the PC at the first displaced instruction. It
// reports false when it could not.
//
// Preconditions: on the tracer thread; t is stopped.
func (m *mon) passGate(t *thread, tr *jump.Trampoline, regs *unix.PtraceRegs) bool {
	rw, resume, ok := tr.GateFinish(regs.Rip)
	if !ok || !m.unsave(t, rw, regs) {
		return false
	}
	regs.Rip = resume
	if err := unix.PtraceSetRegs(t.tid, regs); err != nil {
		m.lose(fmt.Errorf("move thread %d past its gate: %w", t.tid, err))
		return false
	}
	return true
}

// oweGate notes that t, stopped for another signal at a gate's GateStop,
// has its gate's SIGSTOP still pending (see the comment at the top).
//
// Preconditions: on the tracer thread; t is in a signal-delivery-stop.
func (m *mon) oweGate(t *thread, pc uint64) {
	if _, _, tr := t.mm.trampolineAt(pc); tr != nil && tr.IsGate() && pc == tr.GateStop() {
		t.gateOwed++
	}
}

// settleGate handles, on the way to a detach, a SIGSTOP stop of t that a
// gate sent: the thread is put past the gate (when it is at one) and the
// signal is not handed back. It reports whether the stop was such.
//
// Preconditions: on the tracer thread; t is in a signal-delivery-stop for
// SIGSTOP, read into st.
func (m *mon) settleGate(t *thread, st *sigStop) bool {
	if st.info.Code != siTkill || int(uint32(st.info.Addr)) != t.tgid {
		return false
	}
	if _, _, tr := t.mm.trampolineAt(st.regs.Rip); tr != nil && tr.IsGate() && st.regs.Rip == tr.GateStop() {
		regs := st.regs
		m.passGate(t, tr, &regs)
		return true
	}
	if t.gateOwed > 0 {
		t.gateOwed--
		return true
	}
	return false
}

// dequeueGates makes each thread that owes a gate's SIGSTOP report it,
// so that settle takes it, before the detach: after it the kernel would
// stop the process with it.
//
// Preconditions: on the tracer thread; every thread is stopped.
func (m *mon) dequeueGates(sig map[int]int) {
	m.dequeue(sig, func(t *thread) bool {
		return t.gateOwed > 0 && pendingFor(t, unix.SIGSTOP)
	})
}
