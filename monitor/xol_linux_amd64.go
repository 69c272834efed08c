//go:build linux && amd64

package monitor

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/patchprof/patchprof/breakpoint"
	"github.com/patchprof/patchprof/breakpoint/jump"
	"github.com/patchprof/patchprof/breakpoint/relocate"
	"golang.org/x/sys/unix"
)

// The out-of-line engine (xol) leaves every int3 in place. Each site gets a
// slot in a scratch region of the target, within ±2 GiB of its module, holding
// a relocated copy of the site's instruction followed by a jump back
// (relocate.Relocate). On a hit the monitor counts and moves the thread's PC
// to the slot: one stop per hit, and no moment when the original byte is in
// memory, so the other threads run on. Sites whose instruction cannot be
// relocated keep the classic cycle.

// slotStride is the distance between two slots: room for the longest
// relocated form, at 16-byte alignment.
const slotStride = (relocate.MaxSlot + 15) &^ 15

// Slot states.
const (
	slotUnknown   uint8 = iota // not relocated yet: done at the site's first hit
	slotReady                  // the slot holds the relocated instruction
	slotReadyLong              // the same, and the instruction is longer than one byte
	slotClassic                // not relocatable: the classic cycle serves the site
)

// An xolArea is one module's scratch region in one address space.
type xolArea struct {
	base, size uint64
	state      []uint8 // per site
	// noCalls: the process runs with a CET shadow stack, which would not
	// hold the return address an emulated call pushes: calls stay classic.
	noCalls bool
}

// slot returns the runtime address of site i's slot.
func (x *xolArea) slot(i int) uint64 { return x.base + uint64(i)*slotStride }

// contains reports whether pc lies in the region.
func (x *xolArea) contains(pc uint64) bool { return pc >= x.base && pc < x.base+x.size }

// clone copies the area for a forked child, whose copy of the region diverges
// from the parent's from now on.
func (x *xolArea) clone() *xolArea {
	c := *x
	c.state = slices.Clone(x.state)
	return &c
}

// Linux x86-64 system call numbers and mmap flags (asm/unistd_64.h,
// asm-generic/mman-common.h).
const (
	sysMmap                  = 9
	sysMunmap                = 11
	sysRestartSyscall        = 219
	sysGetpid                = 39
	mapFixedNoreplace        = 0x100000
	reach             uint64 = 1<<31 - 1<<24 // a little under 2 GiB: rel32 reach with margin
)

// allocXOL gives mp a scratch region in mm, mapped by a system call run in
// the stopped thread via at address at (executable, with no thread running
// there).
//
// Preconditions: on the tracer thread; no thread of mm runs.
func (m *mon) allocXOL(mm *space, via *thread, mp *mapping, at uint64) error {
	n := mp.tab.Len()
	if n == 0 {
		return nil
	}
	if m.jumpOn && mp.jmp == nil && !mm.noJump && m.mapScratch(mm, via, mp, at) == nil {
		return nil
	}
	size := xolSize(n)
	base, err := m.mapNear(via, mp, at, size)
	if err != nil {
		return err
	}
	mp.xol = &xolArea{base: base, size: size, state: make([]uint8, n), noCalls: shadowStack(mm.tgid)}
	return nil
}

// xolSize is the size of the scratch region of a mapping with n sites.
func xolSize(n int) uint64 {
	return (uint64(n)*slotStride + breakpoint.PageSize - 1) &^ (breakpoint.PageSize - 1)
}

// mapScratch maps both scratch regions of mp under the in-process engine,
// the trampolines and the out-of-line slots, by one system call run in the
// stopped thread via at address at: each injected call costs a thread's
// stops (about 0.1 ms across CPUs), and most programs need both, the slots
// for the sites that keep a breakpoint. The trampolines come first; the
// two are unmapped apart (freeJump, freeXOL).
//
// Preconditions: as for allocXOL; mp has neither region.
func (m *mon) mapScratch(mm *space, via *thread, mp *mapping, at uint64) error {
	n := mp.tab.Len()
	jsize, xsize := jumpSize(n), xolSize(n)
	base, err := m.mapNear(via, mp, at, jsize+xsize)
	if err == nil {
		_, err = mm.mem.WriteMemory(base, memfdName)
	}
	if err != nil {
		return err
	}
	mp.jmp = newJumpArea(base, jsize, n)
	mp.xol = &xolArea{base: base + jsize, size: xsize, state: make([]uint8, n), noCalls: shadowStack(mm.tgid)}
	return nil
}

// mapNear maps size bytes within rel32 reach of all of mp's code, by a
// system call run in the stopped thread via at address at, and returns
// where. The region is readable and executable only: patchprof writes it
// through /proc/PID/mem, as it writes code.
//
// Preconditions: on the tracer thread; no thread of via's space runs.
func (m *mon) mapNear(via *thread, mp *mapping, at, size uint64) (uint64, error) {
	for _, h := range nearHints(mp.Lo, mp.Hi, size) {
		r, err := m.syscallIn(via, at, sysMmap, h, size, unix.PROT_READ|unix.PROT_EXEC,
			unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|mapFixedNoreplace, ^uint64(0), 0)
		if err != nil {
			return 0, err
		}
		if int64(r) < 0 && int64(r) > -4096 {
			continue // EEXIST: something is there
		}
		if r != h {
			// A kernel without MAP_FIXED_NOREPLACE took it as a hint.
			if _, err := m.syscallIn(via, at, sysMunmap, r, size); err != nil {
				return 0, fmt.Errorf("unmap the misplaced region at %#x: %w", r, err)
			}
			continue
		}
		return r, nil
	}
	return 0, errors.New("no free address range within 2 GiB of the code")
}

// nearHints returns where mapNear tries to map size bytes for the code
// in [lo, hi), in order: each within rel32 reach of all of it.
func nearHints(lo, hi, size uint64) []uint64 {
	const step = 1 << 21
	var hints []uint64
	// Below the code first (free below a PIE or a library), then well above
	// it, past where a brk heap after the data would grow.
	for k := uint64(1); k <= 8; k++ {
		if lo > size+k*step+1<<16 {
			hints = append(hints, (lo-size-k*step)&^(breakpoint.PageSize-1))
		}
	}
	for k := uint64(0); k < 8; k++ {
		hints = append(hints, ((hi+1<<30+k*16*step)+breakpoint.PageSize-1)&^(breakpoint.PageSize-1))
	}
	kept := hints[:0]
	for _, h := range hints {
		if h+size < h || h+size-lo > reach && hi-h > reach {
			continue
		}
		if max(h+size, hi)-min(h, lo) > reach {
			continue
		}
		kept = append(kept, h)
	}
	return kept
}

// freeNear returns the first of nearHints that overlaps none of used
// ([lo, hi) pairs): where mapNear will map, if nothing is mapped there
// first.
func freeNear(lo, hi, size uint64, used [][2]uint64) (uint64, bool) {
	for _, h := range nearHints(lo, hi, size) {
		free := true
		for _, u := range used {
			if h < u[1] && u[0] < h+size {
				free = false
				break
			}
		}
		if free {
			return h, true
		}
	}
	return 0, false
}

// freeXOL unmaps every scratch region of mm, through a stopped thread of mm.
// It reports false when via ended meanwhile: the caller tries another.
//
// Preconditions: on the tracer thread; no thread of mm runs or has its PC
// in a region.
func (m *mon) freeXOL(mm *space, via *thread) bool {
	if via.inSyscall {
		return false // the caller picks another thread
	}
	for _, mp := range mm.maps {
		if mp.xol == nil {
			continue
		}
		// A region left behind is a change to the process that outlives
		// us: the unmapping is checked against /proc/PID/maps, and tried
		// again before it is reported.
		var err error
		for try := 0; try < 3; try++ {
			var r uint64
			r, err = m.syscallIn(via, mp.Lo, sysMunmap, mp.xol.base, mp.xol.size)
			if err == nil && int64(r) < 0 {
				err = unix.Errno(-int64(r))
			}
			if err == nil {
				var still bool
				if still, err = mapped(mm.tgid, mp.xol.base); err == nil && still {
					err = errors.New("still mapped after munmap")
				}
			}
			if errors.Is(err, errThreadEnded) {
				return false
			}
			if err == nil {
				break
			}
		}
		if err != nil {
			m.leaveChanged(fmt.Errorf("unmap the scratch region at %#x of %s in process %d: %w", mp.xol.base, mp.Image.Path, mm.tgid, err))
		}
		mp.xol = nil
	}
	return true
}

// displaced relocates site i of mp for its slot. The instruction's bytes are
// read from memory, with the original byte of every planted site among them put
// back.
func (m *mon) displaced(mm *space, mp *mapping, i int) (*relocate.Displaced, error) {
	addr := mp.tab.RuntimeAddr(i)
	var code [16]byte
	n, err := mm.mem.ReadMemory(addr, code[:])
	if n <= 0 {
		return nil, fmt.Errorf("read %#x: %w", addr, err)
	}
	for k := 0; k < n; k++ {
		if j, ok := mp.tab.Lookup(addr + uint64(k)); ok && mp.tab.Armed(j) {
			code[k] = mp.tab.OriginalByte(j)
		}
	}
	return relocate.Relocate(code[:n], addr, mp.xol.slot(i))
}

// prepareSlot relocates site i into its slot at its first hit and returns
// its new state.
func (m *mon) prepareSlot(mm *space, mp *mapping, i int) uint8 {
	if mp.tab.OriginalByte(i) == relocate.Int3 {
		return slotClassic // the program's own int3: the classic path delivers its SIGTRAP
	}
	d, err := m.displaced(mm, mp, i)
	if err != nil {
		if debug {
			dbg("site %#x stays classic: %v\n", mp.tab.RuntimeAddr(i), err)
		}
		return slotClassic
	}
	if d.Form == relocate.FormCall && mp.xol.noCalls {
		return slotClassic
	}
	if d.Write(mm.mem) != nil {
		return slotClassic
	}
	if d.Len > 1 {
		return slotReadyLong
	}
	return slotReady
}

// hitXOL serves a trap of t at site i of mp out of line: count, move the PC
// to the slot, continue. It reports false when the site needs the classic
// cycle instead.
//
// Preconditions: on the tracer thread; t is stopped just after the int3, with
// registers regs.
func (m *mon) hitXOL(t *thread, mp *mapping, i int, regs *unix.PtraceRegs) bool {
	if mp.tab.IsNotify(i) {
		// The dynamic linker's notification needs the others held while
		// the maps are re-read: the classic path does that.
		return false
	}
	if j := mp.jmp; j != nil && j.tramp[i] != nil {
		m.hitJumped(t, j.tramp[i])
		return true
	}
	if m.jumpOn && m.settleLazy(t, mp, i) {
		return true
	}
	if m.jumpOn && mp.tab.JumpLen(i) > 0 {
		if m.tryJump(t, mp, i) {
			return true
		}
		// A refused patch may have given the thread a counter slab
		// (giveSlab): the registers read before it carry the old GS
		// base, which PTRACE_SETREGS below (or the classic cycle's)
		// would put back, and the next trampoline would add at an
		// address near 0.
		if gs, err := peekUser(t.tid, offGsBase); err == nil {
			regs.Gs_base = gs
		}
	}
	if mp.xol == nil {
		if mp.xolFailed {
			return false
		}
		if !m.mayInject(t.mm) {
			// No scratch region can be mapped: the classic cycle.
			mp.xolFailed = true
			return false
		}
		// The module's first hit in this process: map its scratch region
		// through this thread, stopped at a trap (not inside a system call
		// the kernel would finish over the injected one), with the others
		// held so none runs the system call instruction written for it.
		mm := t.mm
		m.stopOthers(mm, t)
		err := m.allocXOL(mm, t, mp, mp.Lo)
		if err == nil {
			m.notifyLayout(mm)
		}
		m.resumeOthers(mm, t)
		if err != nil {
			mp.xolFailed = true
			if debug {
				dbg("scratch for %s: %v (classic cycle)\n", mp.Image.Path, err)
			}
			return false
		}
	}
	x := mp.xol
	switch x.state[i] {
	case slotClassic:
		return false
	case slotUnknown:
		x.state[i] = m.prepareSlot(t.mm, mp, i)
		if x.state[i] == slotClassic {
			m.res.ClassicSites++
			return false
		}
	}
	cur := m.cursorOf(t, mp, i, regs.R14)
	t.xolUndo = mp.tab.Hit(cur, i, regs.Rsp)
	m.callTrap(t, mp, i, regs.Rsp)
	m.countEntry(t, mp.tab, i, regs, &t.xolUndo)
	t.xolMap, t.xolSite, t.xolCur = mp, i, cur
	r := *regs
	r.Rip = x.slot(i)
	if err := unix.PtraceSetRegs(t.tid, &r); err != nil {
		m.lose(fmt.Errorf("move thread %d to its slot: %w", t.tid, err))
		return true
	}
	m.resume(t, 0)
	return true
}

// hitXOLFast serves a trap of t at site i of mp whose slot is ready and whose
// instruction is longer than one byte: the hit reads and writes only the
// words it needs (RSP, R14 in Go code, RIP), and not the siginfo.
//
// Preconditions: on the tracer thread; t is stopped just after the int3.
func (m *mon) hitXOLFast(t *thread, mp *mapping, i int) {
	rsp, err := peekUser(t.tid, offRsp)
	if err != nil {
		m.lose(fmt.Errorf("read the stack pointer of thread %d: %w", t.tid, err))
		return
	}
	var g uint64
	if mp.tab.IsGo(i) {
		if g, err = peekUser(t.tid, offR14); err != nil {
			m.lose(fmt.Errorf("read R14 of thread %d: %w", t.tid, err))
			return
		}
	}
	cur := m.cursorOf(t, mp, i, g)
	t.xolUndo = mp.tab.Hit(cur, i, rsp)
	m.callTrap(t, mp, i, rsp)
	m.countEntry(t, mp.tab, i, nil, &t.xolUndo)
	t.xolMap, t.xolSite, t.xolCur = mp, i, cur
	if err := pokeUser(t.tid, offRip, mp.xol.slot(i)); err != nil {
		m.lose(fmt.Errorf("move thread %d to its slot: %w", t.tid, err))
		return
	}
	m.resume(t, 0)
}

// leaveScratch moves a stopped thread whose PC is in a slot back to the
// equivalent original address, or single-steps it until it leaves the slot,
// so the scratch region can be unmapped. It returns a signal that arrived
// meanwhile, to hand back, or 0.
//
// The steps are the monitor's own: their stops are decoded here, not
// dispatched (no task event is expected from an instruction in a slot).
//
// Preconditions: on the tracer thread; t is stopped.
func (m *mon) leaveScratch(t *thread, restoring bool) int {
	var regs unix.PtraceRegs
	pending := 0
	for steps := 0; steps < 64; steps++ {
		if err := unix.PtraceGetRegs(t.tid, &regs); err != nil {
			m.lose(fmt.Errorf("read the registers of thread %d: %w", t.tid, err))
			return pending
		}
		if tr := t.mm.landingAt(regs.Rip); tr != nil {
			// At a short site's landing: as at the site, not yet counted.
			regs.Rip = tr.Addr
			if err := unix.PtraceSetRegs(t.tid, &regs); err != nil {
				m.lose(fmt.Errorf("move thread %d off a landing: %w", t.tid, err))
			}
			return pending
		}
		if tmp, ti, tr := t.mm.trampolineAt(regs.Rip); tr != nil {
			if _, p := tr.Where(regs.Rip); p == jump.InCount {
				// Inside a counter update that keeps the flags: back
				// at the site as it was there, its count (if made)
				// kept as at a Counted point.
				if _, ok := m.rewindRegs(t, tr, &regs); ok {
					if err := unix.PtraceSetRegs(t.tid, &regs); err != nil {
						m.lose(fmt.Errorf("move thread %d out of its counter update: %w", t.tid, err))
					}
				}
				return pending
			}
			if orig, p := tr.Where(regs.Rip); p != jump.Inside && (restoring || !tr.Covers(orig)) {
				if p == jump.Counted && !restoring {
					// Stepped on from between two counter updates (a
					// dispatch's site and table entry) to where both
					// are made: back at the site, the thread makes
					// them again.
					m.uncount(t, tmp, ti)
				}
				regs.Rip = orig
				if err := unix.PtraceSetRegs(t.tid, &regs); err != nil {
					m.lose(fmt.Errorf("move thread %d out of its trampoline: %w", t.tid, err))
				}
				return pending
			}
		}
		var mp *mapping
		for _, c := range t.mm.maps {
			if c.xol != nil && c.xol.contains(regs.Rip) {
				mp = c
			}
		}
		if mp == nil {
			if _, _, tr := t.mm.trampolineAt(regs.Rip); tr == nil {
				return pending
			}
		}
		if mp != nil {
			i := int((regs.Rip - mp.xol.base) / slotStride)
			if i >= mp.tab.Len() {
				mp = nil
			} else if d, err := m.displaced(t.mm, mp, i); err == nil {
				if to, ok := d.Resume(regs.Rip); ok {
					regs.Rip = to
					if err := unix.PtraceSetRegs(t.tid, &regs); err != nil {
						m.lose(fmt.Errorf("move thread %d out of its slot: %w", t.tid, err))
					}
					return pending
				}
			}
		}
		sig, ok := m.stepOnce(t, regs.Rip, "out of its slot")
		if sig != 0 {
			pending = sig
		}
		if !ok {
			return pending
		}
	}
	return pending
}

// stepOnce single-steps t, stopped at pc, by one instruction (why says
// where to, for an error). It returns a signal that arrived instead of
// the step's trap, to hand back, or 0, and false when t is gone or could
// not be stepped.
//
// The step is the monitor's own: its stop is decoded here, not
// dispatched.
//
// Preconditions: on the tracer thread; t is stopped.
func (m *mon) stepOnce(t *thread, pc uint64, why string) (int, bool) {
	var op [1]byte
	t.mm.mem.ReadMemory(pc, op[:])
	if err := singleStep(t.tid, 0); err != nil {
		m.lose(fmt.Errorf("single-step thread %d %s: %w", t.tid, why, err))
		return 0, false
	}
	t.trapped = true // the step's trap is forced like an int3's
	ev, err := m.waitFor(t)
	if err != nil {
		m.lose(fmt.Errorf("wait for thread %d: %w", t.tid, err))
		return 0, false
	}
	switch st := decodeStatus(ev.ws); st.kind {
	case stopGone:
		m.reap(ev.tid, st)
		return 0, false
	case stopSignal:
		if st.sig != unix.SIGTRAP {
			return int(st.sig), true
		} else if op[0] == opPushf {
			m.clearPushedTF(t)
		}
	}
	return 0, true
}

// errThreadEnded: the thread running an injected system call ended.
var errThreadEnded = errors.New("the thread ended")

// outOfSlot moves a thread that is about to receive a signal out of the slot
// its PC is in, to the equivalent original address, so that the handler sees
// (and unwinds from, and returns to) the program's own code: Go's sigpanic
// throws on a PC outside Go code, and a signal frame must never point into a
// region unmapped at detach. When a signal came before the displaced
// instruction ran, the thread returns to the site and traps again: its hit is
// undone, as the classic cycle does for a handler entered before the
// instruction. A fault of the instruction itself (fault) keeps its count, as
// in the classic cycle: the line was entered.
//
// Preconditions: on the tracer thread; t is stopped.
func (m *mon) outOfSlot(t *thread, fault bool) {
	if t.mm.dead {
		return
	}
	any := false
	for _, c := range t.mm.maps {
		any = any || c.xol != nil
	}
	if !any {
		return
	}
	var regs unix.PtraceRegs
	if err := unix.PtraceGetRegs(t.tid, &regs); err != nil {
		m.lose(fmt.Errorf("read the registers of thread %d: %w", t.tid, err))
		return
	}
	var mp *mapping
	for _, c := range t.mm.maps {
		if c.xol != nil && c.xol.contains(regs.Rip) {
			mp = c
		}
	}
	if mp == nil {
		return
	}
	i := int((regs.Rip - mp.xol.base) / slotStride)
	if i >= mp.tab.Len() {
		return
	}
	d, err := m.displaced(t.mm, mp, i)
	if err != nil {
		m.lose(fmt.Errorf("thread %d stays in the slot of %#x: %w", t.tid, mp.tab.RuntimeAddr(i), err))
		return
	}
	to, ok := d.Resume(regs.Rip)
	if !ok {
		// An emulated indirect call about to jump: its return address is
		// pushed; the original call has not happened.
		to = d.Addr
		regs.Rsp += 8
	}
	regs.Rip = to
	if err := unix.PtraceSetRegs(t.tid, &regs); err != nil {
		m.lose(fmt.Errorf("move thread %d out of its slot: %w", t.tid, err))
		return
	}
	if to == d.Addr && !fault && t.xolMap == mp && t.xolSite == i {
		mp.tab.Unhit(t.xolCur, t.xolUndo)
		t.xolMap = nil
	}
}

// shadowStack reports whether process pid runs with a CET shadow stack
// (proc(5): x86_Thread_features in /proc/PID/status).
func shadowStack(pid int) bool {
	v, _ := statusField("/proc/"+strconv.Itoa(pid)+"/status", "x86_Thread_features")
	return strings.Contains(v, "shstk")
}
