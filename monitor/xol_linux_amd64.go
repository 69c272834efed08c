//go:build linux && amd64

package monitor

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/patchprof/patchprof/breakpoint"
	"golang.org/x/sys/unix"
)

// The out-of-line engine (xol) leaves every int3 in place. Each site gets a
// slot in a scratch region of the target, within ±2 GiB of its module, holding
// a relocated copy of the site's instruction followed by a jump back
// (breakpoint.Relocate). On a hit the monitor counts and moves the thread's PC
// to the slot: one stop per hit, and no moment when the original byte is in
// memory, so the other threads run on. Sites whose instruction cannot be
// relocated keep the classic cycle.

// slotStride is the distance between two slots: room for the longest
// relocated form, at 16-byte alignment.
const slotStride = (breakpoint.MaxSlot + 15) &^ 15

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
	mapFixedNoreplace        = 0x100000
	reach             uint64 = 1<<31 - 1<<24 // a little under 2 GiB: rel32 reach with margin
)

// allocXOL gives mp a scratch region in sp, mapped by a system call run in
// the stopped thread via at address at (executable, with no thread running
// there). The region is readable and executable only: patchprof writes it
// through /proc/PID/mem, as it writes code.
//
// Preconditions: on the tracer thread; no thread of sp runs.
func (m *mon) allocXOL(sp *space, via *thread, mp *mapping, at uint64) error {
	n := mp.tab.Len()
	if n == 0 {
		return nil
	}
	size := (uint64(n)*slotStride + breakpoint.PageSize - 1) &^ (breakpoint.PageSize - 1)
	const step = 1 << 21
	var hints []uint64
	// Below the code first (free below a PIE or a library), then well above
	// it, past where a brk heap after the data would grow.
	for k := uint64(1); k <= 8; k++ {
		if mp.Lo > size+k*step+1<<16 {
			hints = append(hints, (mp.Lo-size-k*step)&^(breakpoint.PageSize-1))
		}
	}
	for k := uint64(0); k < 8; k++ {
		hints = append(hints, ((mp.Hi+1<<30+k*16*step)+breakpoint.PageSize-1)&^(breakpoint.PageSize-1))
	}
	for _, h := range hints {
		if h+size < h || h+size-mp.Lo > reach && mp.Hi-h > reach {
			continue
		}
		if max(h+size, mp.Hi)-min(h, mp.Lo) > reach {
			continue
		}
		r, err := m.syscallIn(via, at, sysMmap, h, size, unix.PROT_READ|unix.PROT_EXEC,
			unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|mapFixedNoreplace, ^uint64(0), 0)
		if err != nil {
			return err
		}
		if int64(r) < 0 && int64(r) > -4096 {
			continue // EEXIST: something is there
		}
		if r != h {
			// A kernel without MAP_FIXED_NOREPLACE took it as a hint.
			m.syscallIn(via, at, sysMunmap, r, size)
			continue
		}
		mp.xol = &xolArea{base: r, size: size, state: make([]uint8, n), noCalls: shadowStack(sp.tgid)}
		return nil
	}
	return errors.New("no free address range within 2 GiB of the code")
}

// freeXOL unmaps every scratch region of sp, through a stopped thread of sp.
//
// Preconditions: on the tracer thread; no thread of sp runs or has its PC
// in a region.
func (m *mon) freeXOL(sp *space, via *thread) {
	if via.inSyscall {
		return // the caller picks another thread
	}
	for _, mp := range sp.maps {
		if mp.xol == nil {
			continue
		}
		if _, err := m.syscallIn(via, mp.Lo, sysMunmap, mp.xol.base, mp.xol.size); err != nil && debug {
			dbg("munmap scratch in %d: %v\n", sp.tgid, err)
		}
		mp.xol = nil
	}
}

// displaced relocates site i of mp for its slot. The instruction's bytes are
// read from memory, with the original byte of every planted site among them put
// back.
func (m *mon) displaced(sp *space, mp *mapping, i int) (*breakpoint.Displaced, error) {
	addr := mp.tab.RuntimeAddr(i)
	var code [16]byte
	n, err := sp.mem.ReadMemory(addr, code[:])
	if n <= 0 {
		return nil, fmt.Errorf("read %#x: %w", addr, err)
	}
	for k := 0; k < n; k++ {
		if j, ok := mp.tab.Lookup(addr + uint64(k)); ok && mp.tab.Armed(j) {
			code[k] = mp.tab.OriginalByte(j)
		}
	}
	return breakpoint.Relocate(code[:n], addr, mp.xol.slot(i))
}

// prepareSlot relocates site i into its slot at its first hit and returns
// its new state.
func (m *mon) prepareSlot(sp *space, mp *mapping, i int) uint8 {
	if mp.tab.OriginalByte(i) == breakpoint.Int3 {
		return slotClassic // the program's own int3: the classic path delivers its SIGTRAP
	}
	d, err := m.displaced(sp, mp, i)
	if err != nil {
		if debug {
			dbg("site %#x stays classic: %v\n", mp.tab.RuntimeAddr(i), err)
		}
		return slotClassic
	}
	if d.Form == breakpoint.FormCall && mp.xol.noCalls {
		return slotClassic
	}
	if d.Write(sp.mem) != nil {
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
// its registers in m.regs.
func (m *mon) hitXOL(t *thread, mp *mapping, i int) bool {
	if mp.tab.IsNotify(i) {
		// The dynamic linker's notification needs the others held while
		// the maps are re-read: the classic path does that.
		return false
	}
	if mp.xol == nil {
		if mp.xolFailed {
			return false
		}
		// The module's first hit in this process: map its scratch region
		// through this thread, stopped at a trap (not inside a system call
		// the kernel would finish over the injected one), with the others
		// held so none runs the system call instruction written for it.
		sp := t.sp
		m.stopOthers(sp, t)
		err := m.allocXOL(sp, t, mp, mp.Lo)
		m.resumeOthers(sp, t)
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
		x.state[i] = m.prepareSlot(t.sp, mp, i)
		if x.state[i] == slotClassic {
			m.res.ClassicSites++
			return false
		}
	}
	cur := m.cursorOf(t, mp, i, m.regs.R14)
	t.xolUndo = mp.tab.Hit(cur, i, m.regs.Rsp)
	t.xolMap, t.xolSite, t.xolCur = mp, i, cur
	m.regs.Rip = x.slot(i)
	if unix.PtraceSetRegs(t.tid, &m.regs) != nil {
		return true // killed meanwhile
	}
	m.resume(t, 0)
	return true
}

// leaveScratch moves a stopped thread whose PC is in a slot back to the
// equivalent original address, or single-steps it until it leaves the slot,
// so the scratch region can be unmapped. It returns a signal that arrived
// meanwhile, to hand back, or 0.
//
// Preconditions: on the tracer thread; t is stopped.
func (m *mon) leaveScratch(t *thread) int {
	var regs unix.PtraceRegs
	pending := 0
	for steps := 0; steps < 64; steps++ {
		if unix.PtraceGetRegs(t.tid, &regs) != nil {
			return pending
		}
		var mp *mapping
		for _, c := range t.sp.maps {
			if c.xol != nil && c.xol.contains(regs.Rip) {
				mp = c
			}
		}
		if mp == nil {
			return pending
		}
		i := int((regs.Rip - mp.xol.base) / slotStride)
		if i < mp.tab.Len() {
			if d, err := m.displaced(t.sp, mp, i); err == nil {
				if to, ok := d.Resume(regs.Rip); ok {
					regs.Rip = to
					unix.PtraceSetRegs(t.tid, &regs)
					return pending
				}
			}
		}
		if singleStep(t.tid, 0) != nil {
			return pending
		}
		ev, err := m.waitFor(t)
		if err != nil || ev.ws.Exited() || ev.ws.Signaled() {
			if err == nil {
				m.reap(ev)
			}
			return pending
		}
		if s := ev.ws.StopSignal(); trapCause(ev.ws) == 0 && s != unix.SIGTRAP {
			pending = int(s)
		}
	}
	return pending
}

// syscallIn runs system call nr with args in the stopped thread t, executing
// a syscall instruction written over the two bytes at at (put back after), and
// returns its result (a negative errno on failure). The thread's registers are
// restored, including orig_rax, so a system call it was stopped in restarts as
// it would have. A signal that arrives meanwhile is sent again after.
//
// Preconditions: on the tracer thread; t is stopped and no other thread runs
// code at at.
func (m *mon) syscallIn(t *thread, at uint64, nr uint64, args ...uint64) (uint64, error) {
	var saved, regs unix.PtraceRegs
	if err := unix.PtraceGetRegs(t.tid, &saved); err != nil {
		return 0, fmt.Errorf("get registers: %w", err)
	}
	var orig [2]byte
	if _, err := t.sp.mem.ReadMemory(at, orig[:]); err != nil {
		return 0, fmt.Errorf("read %#x: %w", at, err)
	}
	if _, err := t.sp.mem.WriteMemory(at, []byte{0x0f, 0x05}); err != nil { // syscall
		return 0, fmt.Errorf("write %#x: %w", at, err)
	}
	regs = saved
	regs.Rip = at
	regs.Rax = nr
	regs.Orig_rax = ^uint64(0) // not in a system call: nothing to restart
	a := make([]uint64, 6)
	copy(a, args)
	regs.Rdi, regs.Rsi, regs.Rdx, regs.R10, regs.R8, regs.R9 = a[0], a[1], a[2], a[3], a[4], a[5]
	var (
		result uint64
		err    error
		resend []int
	)
	if err = unix.PtraceSetRegs(t.tid, &regs); err == nil {
		err = errors.New("the system call did not complete")
		for tries := 0; tries < 16; tries++ {
			if singleStep(t.tid, 0) != nil {
				break
			}
			ev, werr := m.waitFor(t)
			if werr != nil || ev.ws.Exited() || ev.ws.Signaled() {
				if werr == nil {
					m.reap(ev)
				}
				return 0, errors.New("the thread ended")
			}
			if trapCause(ev.ws) != 0 {
				continue // an event stop before the instruction: step again
			}
			if s := ev.ws.StopSignal(); s != unix.SIGTRAP {
				resend = append(resend, int(s))
				continue
			}
			if unix.PtraceGetRegs(t.tid, &regs) == nil && regs.Rip == at+2 {
				result, err = regs.Rax, nil
				break
			}
		}
	}
	t.sp.mem.WriteMemory(at, orig[:])
	unix.PtraceSetRegs(t.tid, &saved)
	for _, s := range resend {
		unix.Tgkill(t.tgid, t.tid, unix.Signal(s))
	}
	return result, err
}

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
// Preconditions: on the tracer thread; t is stopped; m.si holds the signal's
// siginfo.
func (m *mon) outOfSlot(t *thread, fault bool) {
	if t.sp.dead {
		return
	}
	any := false
	for _, c := range t.sp.maps {
		any = any || c.xol != nil
	}
	if !any {
		return
	}
	var regs unix.PtraceRegs
	if unix.PtraceGetRegs(t.tid, &regs) != nil {
		return
	}
	var mp *mapping
	for _, c := range t.sp.maps {
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
	d, err := m.displaced(t.sp, mp, i)
	if err != nil {
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
	if unix.PtraceSetRegs(t.tid, &regs) != nil {
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
