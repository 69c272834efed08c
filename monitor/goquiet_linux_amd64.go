//go:build linux && amd64

package monitor

import (
	"encoding/binary"
	"fmt"

	"github.com/patchprof/patchprof/breakpoint/jump"
	"golang.org/x/sys/unix"
)

// A Go program attached without system-call stops.
//
// Two things kept a Go program with the stops (eager_linux_amd64.go):
//
//   - its Resume site, the ret of runtime.asyncPreempt, where a goroutine
//     preempted before the attach may come back into the middle of bytes a
//     patch now covers (hitResume). It takes a gate, as the dynamic
//     linker's notification point does (gate_linux_amd64.go): at its
//     SIGSTOP the monitor does what hitResume does, the ret included;
//   - the test of a thread inside a signal handler entered before the
//     attach. The restorer scan (inHandler) finds stale frames in Go's
//     stacks, reused from goroutine to goroutine, and kept every busy Go
//     program lazy. A Go program's test is exact instead (goInHandler):
//     when every handler is SA_ONSTACK (the runtime's are, and under cgo
//     it sets the flag on glibc's SIGCANCEL and SIGSETXID handlers), a
//     thread is inside a handler if and only if its stack pointer is
//     inside its signal stack, and the runtime records each thread's
//     signal stack (m.gsignal.stack, set in minit; a thread's signals
//     stay blocked from its clone until then, and again from mexit's
//     sigblock before unminit takes the stack away), the m found by its
//     procid, the thread's ID. Under cgo an extra M names no thread
//     (goSignalStacks). Not seen: C code that gives a Go thread another
//     signal stack during a cgo call (docs/design.md).

// maxMs bounds the runtime's list of Ms the monitor walks.
const maxMs = 1 << 16

// goFor returns the Go runtime description of mp when its Resume site may
// take a gate, else nil.
func goFor(mp *mapping) *GoRuntime {
	if g := mp.Image.Go; g != nil && g.ResumeRoom >= jump.JmpLen {
		return g
	}
	return nil
}

// saOnStack is sigaction's SA_ONSTACK.
const saOnStack = 0x08000000

// goInHandler is inHandler's exact test for a Go program (mp, the
// executable, described by g): it reports whether a thread's stack pointer
// is inside its own signal stack, and ok false when it cannot tell (a
// handler without SA_ONSTACK, a thread no M names, the runtime's data
// unreadable), for the restorer scan to decide.
//
// Preconditions: on the tracer thread; every thread of mm is stopped.
func (m *mon) goInHandler(mm *space, mp *mapping, g *GoRuntime) (in, ok bool) {
	if !g.Offsets || g.AllM == 0 || g.IsCgo == 0 {
		return false, false
	}
	var b [1]byte
	if n, _ := mm.mem.ReadMemory(g.IsCgo+mp.Bias, b[:]); n != 1 {
		return false, false
	}
	cgo := b[0] != 0
	if cgo && !g.IsExtraKnown {
		return false, false
	}
	for _, t := range mm.threads {
		if t.sigs == nil {
			return false, false
		}
		for _, a := range t.sigs.act {
			if a.handled() && a.Flags&saOnStack == 0 {
				return false, false
			}
		}
		break // one table per process
	}
	stacks, ok := goSignalStacks(mm, mp, g, cgo)
	if !ok {
		return false, false
	}
	for _, t := range mm.threads {
		st, found := stacks[t.tid]
		if !found {
			return false, false
		}
		sp, err := peekUser(t.tid, offRsp)
		if err != nil {
			return false, false
		}
		if sp >= st[0] && sp < st[1] {
			return true, true
		}
	}
	return false, true
}

// goSignalStacks reads the runtime's Ms: for each thread ID, the bounds of
// its signal stack [lo, hi). In a program linked with cgo an extra M (lent
// to a thread C made while it calls Go) is left out: its thread may give
// back the signal stack the M set (dropm), and is then named by none.
func goSignalStacks(mm *space, mp *mapping, g *GoRuntime, cgo bool) (map[int][2]uint64, bool) {
	word := func(at uint64) (uint64, bool) {
		var w [8]byte
		n, _ := mm.mem.ReadMemory(at, w[:])
		return binary.LittleEndian.Uint64(w[:]), n == 8
	}
	stacks := map[int][2]uint64{}
	cur, ok := word(g.AllM + mp.Bias)
	for n := 0; ok && cur != 0; n++ {
		if n == maxMs {
			return nil, false
		}
		procid, ok1 := word(cur + g.MProcID)
		gs, ok2 := word(cur + g.MGSignal)
		if !ok1 || !ok2 {
			return nil, false
		}
		extra := false
		if cgo {
			var b [1]byte
			if n, _ := mm.mem.ReadMemory(cur+g.MIsExtra, b[:]); n != 1 {
				return nil, false
			}
			extra = b[0] != 0
		}
		if gs != 0 && procid != 0 && !extra {
			lo, ok3 := word(gs + g.GStack + g.StackLo)
			hi, ok4 := word(gs + g.GStack + g.StackHi)
			if !ok3 || !ok4 {
				return nil, false
			}
			stacks[int(procid)] = [2]uint64{lo, hi}
		}
		cur, ok = word(cur + g.MAllLink)
	}
	return stacks, ok
}

// resumeGate does, for t stopped at the gate of a Resume site (regs, its
// registers at the stop), what hitResume does for the int3: the gate's
// saved registers put back, it returns for the thread (pops the
// interrupted PC), to the trampoline's equivalent when that PC is inside a
// patched site's bytes.
//
// Preconditions: on the tracer thread; t is stopped at tr's GateStop.
func (m *mon) resumeGate(t *thread, tr *jump.Trampoline, regs *unix.PtraceRegs) {
	rw, _, ok := tr.GateFinish(regs.Rip)
	if !ok || !m.unsave(t, rw, regs) {
		m.lose(fmt.Errorf("read the registers thread %d saved at the gate of runtime.asyncPreempt", t.tid))
		return
	}
	var w [8]byte
	if n, err := t.mm.mem.ReadMemory(regs.Rsp, w[:]); n != 8 {
		m.lose(fmt.Errorf("read the return address of thread %d at %#x: %w", t.tid, regs.Rsp, err))
		return
	}
	to := binary.LittleEndian.Uint64(w[:])
	if eq, ok := m.equivalent(t, to); ok {
		to = eq
	}
	regs.Rsp += 8
	regs.Rip = to
	if err := unix.PtraceSetRegs(t.tid, regs); err != nil {
		m.lose(fmt.Errorf("return thread %d to %#x: %w", t.tid, to, err))
	}
}
