//go:build linux && amd64

package monitor

import (
	"encoding/binary"
	"fmt"
)

// Eager patching at attach.
//
// A launched target takes its jump patches lazily, a function at its first
// hit (tryJump): that first hit is an int3, and while any int3 of ours can
// fire the monitor must follow the system calls that change the target's
// signal state (sigstate_linux_amd64.go), which a launched target does
// through its seccomp filter (sysfilter_linux_amd64.go). An attached
// process cannot take that filter (it would outlive the detach), so it
// would pay two stops at every system call for as long as one int3 is
// planted. So at an attach under the in-process engine, when the process
// could do without the stops at all (mayQuiet), every site the plan marked
// for a jump is patched at once, while the threads are stopped for the
// attach: when none of its sites is left as an int3 (noTraps), it runs
// without system-call stops.

// pcOf returns u's PC: during jumpAll from the PCs read once (mm.pcs).
//
// Preconditions: on the tracer thread; u is stopped.
func (mm *space) pcOf(u *thread) (uint64, error) {
	if pc, ok := mm.pcs[u.tid]; ok {
		return pc, nil
	}
	pc, err := peekUser(u.tid, offRip)
	if err == nil && mm.pcs != nil {
		mm.pcs[u.tid] = pc
	}
	return pc, err
}

// quietNote says that an attached process ran without system-call stops.
const quietNote = "in-process engine: attached without system-call stops: every site was patched at the attach, and no int3 of ours was left in the process"

// jumpAll patches every site of mm that the plan marked for a jump,
// function by function as tryJump does at a first hit, through t. A site
// whose patch cannot be made stays an int3, for the out-of-line engine.
//
// Preconditions: on the tracer thread; every thread of mm is stopped and t
// can inject.
func (m *mon) jumpAll(t *thread) {
	mm := t.mm
	// Tens of thousands of small writes, held and written page by page
	// (stage_linux.go), and the threads' PCs read once.
	mm.mem.beginStage()
	mm.pcs = map[int]uint64{}
	defer func() {
		mm.pcs = nil
		for _, mp := range mm.maps {
			mp.pre = nil
		}
		if err := mm.mem.endStage(); err != nil {
			m.lose(fmt.Errorf("patch process %d: %w", mm.tgid, err))
		}
	}()
	for _, mp := range mm.maps {
		if mm.noJump {
			return
		}
		if !mp.jumpable() || mp.tab == nil {
			continue
		}
		tab := mp.tab
		if m.anyWanted(mp) && m.jumpRoom(t, mp) == "" {
			// The module's code is read whole, the trampolines built on
			// every CPU and laid out (prebuild_linux_amd64.go), and the
			// region staged as far as they go.
			mm.mem.prefetch(mp.Lo, mp.Hi)
			m.prebuild(mm, mp)
			mp.jmp.stage(mm.mem)
		}
		for i := 0; i < tab.Len() && !mm.noJump; {
			lo, hi := i, i+1
			if tab.Func(i) >= 0 {
				lo, hi = tab.FuncSites(i)
			}
			m.jumpRange(t, mp, lo, hi)
			i = hi
		}
	}
}

// anyWanted reports whether a site of mp is planned for a jump patch and
// has not been tried.
func (m *mon) anyWanted(mp *mapping) bool {
	for k := 0; k < mp.tab.Len(); k++ {
		if m.jumpWanted(mp, k) {
			return true
		}
	}
	return false
}

// jumpRange patches sites [lo, hi) of mp, one function's (or one site
// outside any function), and settles its trampolines' exits.
func (m *mon) jumpRange(t *thread, mp *mapping, lo, hi int) {
	tab, mm := mp.tab, t.mm
	m.disarmDerived(mm, mp, lo)
	for k := lo; k < hi && !mm.noJump; k++ {
		if (tab.IsNotify(k) || tab.IsResume(k)) && (mp.jmp == nil || mp.jmp.state[k] == jumpUntried) {
			if reason := m.gateSite(t, mp, k); reason != "" {
				m.refuseJump(mp, k, reason)
			}
			continue
		}
		if !m.jumpWanted(mp, k) {
			continue
		}
		tr, reason := m.jumpSite(t, mp, k)
		if tr == nil {
			m.refuseJump(mp, k, reason)
			continue
		}
		m.res.JumpSites++
		if tab.Func(k) >= 0 {
			m.jumpFunction(t, mp, k)
		}
		break
	}
	if !m.settleExits(mm, mp, lo) {
		// Not reached while the process lives: the region is ours.
		m.unjump(mm)
		mm.noJump = true
	}
}

// jumpWanted reports whether site k of mp is planned for a jump patch and
// has not been tried.
func (m *mon) jumpWanted(mp *mapping, k int) bool {
	tab := mp.tab
	if tab.JumpLen(k) == 0 || tab.Derived(k) || tab.IsNotify(k) {
		return false
	}
	return mp.jmp == nil || mp.jmp.state[k] == jumpUntried
}

// noTraps reports whether no int3 of ours is left planted in mm: every
// armed site took its jump patch, and no entry check stops at an int3
// for a caller past the entry's slots (breakpoint.Table.SetCallTraps:
// an attach's have none). Then no trap of ours can fire in its threads,
// and nothing the system calls change matters to the monitor's signal
// bookkeeping.
func (mm *space) noTraps() bool {
	if mm.noJump {
		return false
	}
	for _, mp := range mm.maps {
		if mp.tab == nil {
			continue
		}
		if mp.tab.CallTraps() && len(mp.tab.CallEntries()) > 0 {
			return false
		}
		for i := 0; i < mp.tab.Len(); i++ {
			if !mp.tab.Armed(i) {
				continue
			}
			if mp.jmp == nil || mp.jmp.state[i] != jumpDone {
				return false
			}
		}
	}
	return true
}

// mayQuiet reports whether mm could run without system-call stops once
// its sites are patched: no module may set its GS base, none holds a
// Resume site (Go's asyncPreempt return) that cannot take a gate, and no
// thread may be inside a signal handler entered before the attach (a Go
// program's exact test, goInHandler, else the restorer scan). Only
// then is the attach eager: elsewhere the sites are patched as under a
// launch, a function at its first hit.
//
// Preconditions: on the tracer thread; every thread of mm is stopped.
func (m *mon) mayQuiet(mm *space) bool {
	for _, mp := range mm.maps {
		if mp.Image.MaySetGS {
			return false
		}
		for i := 0; mp.tab != nil && i < mp.tab.Len(); i++ {
			if mp.tab.IsResume(i) && goFor(mp) == nil {
				return false
			}
		}
	}
	for _, mp := range mm.maps {
		if g := goFor(mp); g != nil && mp.Image == m.rootImg {
			if in, ok := m.goInHandler(mm, mp, g); ok {
				return !in
			}
		}
	}
	return !m.inHandler(mm)
}

// stackScan bounds how much of a thread's stack above its stack pointer
// inHandler reads.
const stackScan = 256 << 10

// inHandler reports whether a thread of mm may be inside a signal handler
// it entered before the attach: its saved context may hold an address
// inside the bytes a patch now covers, which the monitor corrects at the
// handler's rt_sigreturn (afterSigreturn), a system call it sees only
// with the system-call stops. A handler's frame begins with its return
// address, the action's restorer (sa_restorer, x86-64 rt_sigframe): it
// looks for any restorer of the program's handlers in the live part of
// each thread's stack. A false match only keeps the stops. Handlers
// whose actions could not be read count as found.
//
// Preconditions: on the tracer thread; every thread of mm is stopped.
func (m *mon) inHandler(mm *space) bool {
	restorers := map[uint64]bool{}
	for _, t := range mm.threads {
		if t.sigs == nil {
			return true
		}
		for _, a := range t.sigs.act {
			if a.handled() {
				if a.Restorer == 0 {
					return true
				}
				restorers[a.Restorer] = true
			}
		}
		break // one table per process
	}
	if len(restorers) == 0 {
		return false
	}
	buf := make([]byte, 64<<10)
	for _, t := range mm.threads {
		sp, err := peekUser(t.tid, offRsp)
		if err != nil {
			return true
		}
		for off := uint64(0); off < stackScan; off += uint64(len(buf)) {
			n, _ := mm.mem.ReadMemory(sp+off, buf)
			for k := 0; k+8 <= n; k += 8 {
				if restorers[binary.LittleEndian.Uint64(buf[k:])] {
					return true
				}
			}
			if n < len(buf) {
				break // the stack's top
			}
		}
	}
	return false
}
