//go:build linux && amd64

package monitor

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/patchprof/patchprof/breakpoint"
	"github.com/patchprof/patchprof/breakpoint/jump"
	"github.com/patchprof/patchprof/breakpoint/relocate"
	"golang.org/x/sys/unix"
)

// The in-process engine (EngineJump) is the out-of-line engine plus jump
// patches. Every site starts as an int3, as under xol. At a site's first hit,
// when the plan marked it (Table.JumpLen), the monitor writes a trampoline
// for it (jump.BuildTrampoline) and replaces the site's first bytes
// with a jmp there: from then on the site counts in the target, in the
// thread's counter slab (counters_linux_amd64.go), without a stop. The
// other sites of the site's function are patched with it; the sites of a
// function that never runs are never patched, and a site whose patch
// cannot be made (no room, a thread inside its bytes) stays with the
// out-of-line engine.
// The counts are folded into the table's Hits whenever the monitor reports
// (snapshots, the end of a process, the end of the run).

// Per-site jump states.
const (
	jumpUntried uint8 = iota
	jumpDone
	jumpRefused
)

// Reasons a site keeps its breakpoint, beside breakpoint's: the process
// runs under seccomp, or uses its GS base (guard_linux_amd64.go).
const (
	jumpSandboxed = "the process runs under seccomp: no system call may be injected"
	jumpOwnGS     = "the program uses its GS base"
)

// jumpHeader is the room at the start of a trampoline region before the
// first trampoline: it holds the memfd's name.
const jumpHeader = 64

// memfdName is the counter memfd's name (memfd_create(2)): what
// /proc/PID/maps shows for the counter mapping.
var memfdName = []byte("patchprof-counters\x00")

// A jumpArea is one mapping's trampolines and counters in one address space.
type jumpArea struct {
	base, size uint64
	state      []uint8            // per site
	tramp      []*jump.Trampoline // per site, nil until patched
	ctrOff     uint64             // offset of the mapping's counters in a slab
	counted    bool               // ctrOff is given
	seen       []uint64           // per site: the counter sum last folded
	callSeen   map[uint64]uint64  // per call slot's count word: its value last folded
	// landings maps the landing of each patched short site (in its host's
	// dead bytes) to the site's trampoline.
	landings map[uint64]*jump.Trampoline
	// The trampolines are packed (trampSlot): owner holds, for each slot
	// of the region after its header, 1 + the site whose trampoline takes
	// it (0: free), in chunks made at their first use (ownerAt). It is
	// written on the tracer thread and read from the profiler's
	// goroutines too (notifyLayout), with atomic loads and stores. first
	// holds each site's first slot, plus 1 (0: none yet); next is the
	// first slot after the last one taken at the end; slots how many the
	// region has.
	owner []atomic.Pointer[ownerChunk]
	slots uint32
	first []uint32
	next  uint32
}

// trampolineAt returns the mapping, site and trampoline of mm whose code
// holds pc.
func (mm *space) trampolineAt(pc uint64) (*mapping, int, *jump.Trampoline) {
	for _, mp := range mm.maps {
		if mp.jmp != nil {
			if i, tr := mp.jmp.trampolineAt(pc); tr != nil {
				return mp, i, tr
			}
		}
	}
	return nil, 0, nil
}

// landingAt returns the short site whose landing is at pc: a thread there
// is about to jump to the site's trampoline, as one at the site itself.
func (mm *space) landingAt(pc uint64) *jump.Trampoline {
	for _, mp := range mm.maps {
		if mp.jmp != nil && mp.jmp.landings != nil {
			if tr := mp.jmp.landings[pc]; tr != nil {
				return tr
			}
		}
	}
	return nil
}

// coveredBy returns the trampoline of mm whose displaced bytes hold pc
// strictly after their first.
func (mm *space) coveredBy(pc uint64) *jump.Trampoline {
	for _, mp := range mm.maps {
		if mp.jmp == nil || pc < mp.Lo || pc >= mp.Hi {
			continue
		}
		// A site covers at most a host block's bytes (MaxHostLen).
		for k := 0; k <= jump.MaxHostLen && uint64(k) < pc; k++ {
			if i, ok := mp.tab.Lookup(pc - uint64(k)); ok && i < len(mp.jmp.tramp) && mp.jmp.tramp[i] != nil && mp.jmp.tramp[i].Covers(pc) {
				return mp.jmp.tramp[i]
			}
		}
	}
	return nil
}

// hitJumped serves a trap at a site that was patched after the thread had
// already executed its int3: the thread goes to the trampoline, which
// counts the hit.
func (m *mon) hitJumped(t *thread, tr *jump.Trampoline) {
	m.movePend(t)
	if err := pokeUser(t.tid, offRip, tr.At); err != nil {
		m.lose(fmt.Errorf("move thread %d to its trampoline: %w", t.tid, err))
		return
	}
	m.resume(t, 0)
}

// tryJump patches site i of mp at its first hit by t, and with it the
// other sites of its function, and sends t to the trampoline. It reports
// false when the site stays with the out-of-line engine (the reason is
// counted in Result.JumpRefused).
//
// A function's sites are patched together: each first hit is a trap (tens
// of microseconds across CPUs), and most sites of a function that runs at
// all run too (on SQLite, 7,383 first hits were in about 1,000 functions).
//
// Preconditions: on the tracer thread; t is stopped just after the int3.
func (m *mon) tryJump(t *thread, mp *mapping, i int) bool {
	mm := t.mm
	if mm.noJump || !mp.jumpable() {
		return false
	}
	if mp.jmp != nil && mp.jmp.state[i] != jumpUntried {
		return false
	}
	if t.slab != 0 && !m.slabHeld(t) {
		m.gsFallBack(t, "a thread changed it: wrgsbase")
		return false
	}
	m.stopOthers(mm, t)
	// A function's sites are three small writes each, most of them to a
	// few pages of the code and of the trampolines' region: held in the
	// stage, they go in one pwrite per run of pages (SQLite's 913 first
	// hits: 96,000 writes). Every thread is stopped until the flush.
	staged := !mm.mem.staging()
	if staged {
		mm.mem.beginStage()
	}
	tr, reason := m.jumpSite(t, mp, i)
	if tr != nil {
		m.res.JumpSites++
		m.jumpFunction(t, mp, i)
		m.jumpHot(t, mp, i)
	}
	settled := m.settleExits(mm, mp, i)
	if staged {
		if err := mm.mem.endStage(); err != nil {
			m.lose(fmt.Errorf("patch process %d: %w", mm.tgid, err))
			settled = false
		}
	}
	if !settled {
		// Not reached while the process lives: the region is ours.
		m.unjump(mm)
		mm.noJump = true
		tr, reason = nil, breakpoint.JumpNoRoom
	}
	m.resumeOthers(mm, t)
	if tr == nil {
		m.refuseJump(mp, i, reason)
		return false
	}
	m.hitJumped(t, tr)
	return true
}

// jumpFunction patches the other sites of site i's function that have not
// been tried, as tryJump does; a site that cannot take its patch stays an
// int3, for the out-of-line engine.
//
// Preconditions: as for jumpSite.
func (m *mon) jumpFunction(t *thread, mp *mapping, i int) {
	tab := mp.tab
	if tab.Func(i) < 0 || t.mm.noJump {
		return
	}
	lo, hi := mp.tab.FuncSites(i)
	for k := lo; k < hi && !t.mm.noJump; k++ {
		if k == i || mp.jmp.state[k] != jumpUntried || tab.JumpLen(k) == 0 || tab.Derived(k) || tab.IsNotify(k) {
			continue
		}
		if tr, reason := m.jumpSite(t, mp, k); tr != nil {
			m.res.JumpSites++
		} else {
			m.refuseJump(mp, k, reason)
		}
	}
}

// aimExits aims the exits of site i's new trampoline tr at the
// trampolines of the sites of its function they go to (aimAt): a thread
// then goes from block to block of the function through its trampolines,
// one jump each, as in the original code (jump.Exit). An exit goes to a
// trampoline already built, or to where one laid out ahead for an
// untried site will be (an eager attach's); done before the trampoline is
// written, this costs no write. settleExits then aims what the sites
// patched after it change, before any thread runs.
func (m *mon) aimExits(mp *mapping, i int, tr *jump.Trampoline) {
	fn := mp.tab.Func(i)
	if fn < 0 {
		return
	}
	for k, x := range tr.Exits() {
		if via := mp.aimAt(fn, x.To, true); via != 0 {
			tr.Aim(k, via)
		}
	}
}

// aimAt returns the trampoline an exit of a trampoline of function fn
// that goes to to may go through: that of the site at to, when it is
// fn's, patched, and entered like any block (no gate); with ahead, also
// where one laid out for an untried site will be. Else 0.
func (mp *mapping) aimAt(fn int32, to uint64, ahead bool) uint64 {
	tab, j := mp.tab, mp.jmp
	s, ok := tab.Lookup(to)
	if !ok || tab.Func(s) != fn || tab.JumpLen(s) == 0 || tab.Derived(s) || tab.IsNotify(s) {
		return 0
	}
	switch {
	case j.tramp[s] != nil:
		return j.tramp[s].At
	case ahead && j.first[s] != 0 && j.state[s] == jumpUntried:
		return j.slotAddr(j.first[s] - 1)
	}
	return 0
}

// settleExits aims every exit of a trampoline of site i's function where
// aimAt says: at a site's trampoline patched after its own, or back at
// original code when the site it was aimed at is no longer patched.
//
// It reports false when one could not be written.
//
// Preconditions: as for jumpSite; called before any thread runs again.
func (m *mon) settleExits(mm *space, mp *mapping, i int) bool {
	j := mp.jmp
	fn := mp.tab.Func(i)
	if j == nil || fn < 0 {
		return true
	}
	lo, hi := mp.tab.FuncSites(i)
	for k := lo; k < hi; k++ {
		tr := j.tramp[k]
		if tr == nil {
			continue
		}
		for n, x := range tr.Exits() {
			via := mp.aimAt(fn, x.To, false)
			if via == x.Via {
				continue
			}
			b, ok := tr.Aim(n, via)
			if !ok {
				continue // out of reach: it stays as it is
			}
			if _, err := mm.mem.WriteMemory(x.At, b); err != nil {
				m.lose(fmt.Errorf("aim a trampoline of %#x at %#x in process %d: %w", tr.Addr, x.To, mm.tgid, err))
				return false
			}
		}
	}
	return true
}

// refuseJump records that site i of mp keeps its breakpoint, and why.
func (m *mon) refuseJump(mp *mapping, i int, reason string) {
	if mp.jmp != nil {
		mp.jmp.state[i] = jumpRefused
	}
	if m.res.JumpRefused == nil {
		m.res.JumpRefused = map[string]int{}
	}
	m.res.JumpRefused[reason]++
}

// jumpSite does tryJump's work with every other thread of the space
// stopped: the region, the counters, the trampoline, the patch, a slab for
// every thread. It returns the trampoline, or nil and why not.
func (m *mon) jumpSite(t *thread, mp *mapping, i int) (*jump.Trampoline, string) {
	if reason := m.jumpRoom(t, mp); reason != "" {
		return nil, reason
	}
	tr, arcs, reason := m.buildJump(t, mp, i)
	if tr == nil {
		return nil, reason
	}
	if reason := m.writeJump(t, mp, i, tr); reason != "" {
		return nil, reason
	}
	for _, k := range arcs {
		mp.tab.ArcServed(k)
	}
	return tr, ""
}

// jumpRoom readies mp's space for its first patch: the trampolines'
// region, the counter memory with a slab for every stopped thread, and
// mp's counters in it. It returns why not, or "".
func (m *mon) jumpRoom(t *thread, mp *mapping) string {
	mm := t.mm
	if (mp.jmp == nil || mm.ctr == nil) && !m.mayInject(mm) {
		// The regions and the counters are mapped by injected calls.
		return jumpSandboxed
	}
	if mm.ctr == nil && !m.gsFree(mm) {
		return jumpOwnGS
	}
	if mp.jmp == nil {
		var err error
		if mp.xol != nil || mp.xolFailed || m.mapScratch(mm, t, mp, mp.Lo) != nil {
			// The slots are there (or cannot be), or the two regions
			// together found no room: the trampolines alone.
			n := mp.tab.Len()
			var base uint64
			base, err = m.mapNear(t, mp, mp.Lo, jumpSize(n))
			if err == nil {
				_, err = mm.mem.WriteMemory(base, memfdName)
			}
			if err == nil {
				mp.jmp = newJumpArea(base, jumpSize(n), n)
			}
		}
		if err != nil {
			m.lose(fmt.Errorf("trampolines for %s in process %d: %w", mp.Image.Path, mm.tgid, err))
			mm.noJump = true
			return breakpoint.JumpNoRoom
		}
		m.notifyLayout(mm)
	}
	j := mp.jmp
	if mm.ctr == nil {
		c, err := m.mapCounters(t, mp.Lo, j.base, 0, m.slabSizeFor())
		if c == nil {
			m.lose(fmt.Errorf("counters in process %d: %w", mm.tgid, err))
			mm.noJump = true
			return breakpoint.JumpNoRoom
		}
		m.lose(err)
		mm.ctr = c
		for _, u := range mm.threads {
			if u.state != stopped || u.fresh {
				// Blocked in vfork, or created and not yet at its first
				// stop (ptrace refuses it with ESRCH): given one when it
				// resumes (resume, counting).
				continue
			}
			if err := m.giveSlab(u); err != nil {
				m.lose(fmt.Errorf("in-process counting in process %d: %w", mm.tgid, err))
				mm.noJump = true
				return breakpoint.JumpNoRoom
			}
		}
	}
	if !j.counted {
		// The sites' counters, then the arcs' (jump.EdgeCount), then the
		// entries' call slots (jump.EntryCheck), then the table entries'
		// (jump.EntryCount).
		n := mp.tab.Len() + mp.tab.ArcCounters() + mp.tab.CallWords() + mp.tab.EntryCounters()
		off, ok := mm.ctr.reserve(n)
		if !ok {
			return breakpoint.JumpNoRoom
		}
		j.ctrOff, j.counted, j.seen = off, true, make([]uint64, n)
		m.live.addRange(mm.ctr, off, mp.tab.Len())
	}
	return ""
}

// buildJump builds site i's trampoline from the original code (an armed
// int3's byte read as the one it replaced), with its arcs' counters and,
// for a short site, its host's trampoline, patched first. It returns the
// trampoline and the arcs it counts, or nil and why not.
func (m *mon) buildJump(t *thread, mp *mapping, i int) (*jump.Trampoline, []int, string) {
	mm, j := t.mm, mp.jmp
	addr := mp.tab.RuntimeAddr(i)
	var code [jump.MaxHostLen + 40]byte
	n := mp.originalCode(mm, addr, code[:])
	if n < jump.JmpLen {
		return nil, nil, breakpoint.JumpNoCode
	}
	var host *jump.Trampoline
	if h, ok := mp.tab.ShortSite(i); ok {
		// The host block runs whole in its trampoline: its bytes after
		// the first JumpLen are dead, and hold this site's landing. It
		// goes first, taking its slots before this one is placed.
		if host = j.tramp[h]; host == nil {
			if j.state[h] != jumpUntried {
				return nil, nil, breakpoint.JumpNoRoom
			}
			var reason string
			if host, reason = m.jumpSite(t, mp, h); host == nil {
				j.state[h] = jumpRefused
				return nil, nil, reason
			}
			m.res.JumpSites++
		}
		if uint64(host.Len) < mp.tab.Landing(i)+jump.JmpLen {
			return nil, nil, breakpoint.JumpNoRoom
		}
	}
	arcs, ecs := mp.arcCounters(i)
	tr, err := mp.prebuilt(i, code[:n], ecs)
	if tr == nil && err == nil {
		if tr = mp.Image.movedJump(i, code[:n], addr, j.place(i), j.counterOf(i), ecs); tr != nil && !j.fits(i, tr) {
			tr = nil
		} else if tr != nil {
			m.res.JumpMoved++
		}
	}
	if tr == nil && err == nil {
		tr, err = mp.tab.BuildTrampoline(i, code[:n], j.place(i), j.counterOf(i), slices.Clone(ecs))
		if err == nil && !j.fits(i, tr) {
			// Longer than laid out for it: built again at the end.
			j.unplace(i)
			tr, err = mp.tab.BuildTrampoline(i, code[:n], j.place(i), j.counterOf(i), ecs)
		}
		if err == nil {
			mp.Image.keepJump(i, tr, code[:n], j.counterOf(i), ecs)
		}
	}
	if err != nil {
		return nil, nil, breakpoint.JumpRelocation
	}
	if !j.fits(i, tr) {
		return nil, nil, breakpoint.JumpNoRoom
	}
	if host != nil && tr.SetShort(host.Addr+mp.tab.Landing(i)) != nil {
		return nil, nil, breakpoint.JumpNoRoom
	}
	return tr, arcs, ""
}

// originalCode reads mp's code at addr in mm into buf, an armed int3
// read as the byte it replaced, and returns how many bytes it read.
func (mp *mapping) originalCode(mm *space, addr uint64, buf []byte) int {
	n, _ := mm.mem.ReadMemory(addr, buf)
	n = max(n, 0)
	tab := mp.tab
	for s := tab.From(addr - tab.Bias()); s < tab.Len(); s++ {
		a := tab.RuntimeAddr(s)
		if a >= addr+uint64(n) {
			break
		}
		if tab.Armed(s) {
			buf[a-addr] = tab.OriginalByte(s)
		}
	}
	return n
}

// writeJump moves the threads stopped inside the bytes tr covers, writes
// the trampoline, its landing and the patch, and marks site i patched. It
// returns why not, or "".
func (m *mon) writeJump(t *thread, mp *mapping, i int, tr *jump.Trampoline) string {
	mm, j := t.mm, mp.jmp
	addr := mp.tab.RuntimeAddr(i)
	// A thread stopped inside the covered bytes (attached there, or in a
	// system call made by a displaced instruction) goes on from the
	// equivalent point of the trampoline. One just past this site's int3
	// with its trap still to be reported (queued here, or still pending
	// in the kernel when our interrupt stopped it first) goes to the
	// trampoline when its trap is handled: it has not run the site's
	// first instruction.
	type move struct {
		u  *thread
		to uint64
	}
	var moves []move
	for _, u := range mm.threads {
		// t trapped at a site of this function, whose trap moves it,
		// except in an eager attach (mm.pcs), where t is the thread that
		// runs the injected calls, stopped wherever the attach found it:
		// in a Go program, as likely as any inside the code patched.
		if (u == t && mm.pcs == nil) || u.state != stopped {
			continue
		}
		pc, err := mm.pcOf(u)
		if err != nil || !tr.Covers(pc) || (pc == addr+1 && (u.held > 0 || trapPending(u.tid))) {
			continue
		}
		to, ok := tr.Equivalent(pc)
		if !ok {
			return breakpoint.JumpThreadInside
		}
		moves = append(moves, move{u, to})
	}
	j.take(i, tr)
	m.aimExits(mp, i, tr)
	if _, err := mm.mem.WriteMemory(tr.At, tr.Code); err != nil {
		return breakpoint.JumpNoRoom
	}
	if tr.Landing != 0 {
		if _, err := mm.mem.WriteMemory(tr.Landing, tr.LandingJmp); err != nil {
			return breakpoint.JumpNoRoom
		}
		if j.landings == nil {
			j.landings = map[uint64]*jump.Trampoline{}
		}
		j.landings[tr.Landing] = tr
	}
	if _, err := mm.mem.WriteMemory(addr, tr.Patch); err != nil {
		m.lose(fmt.Errorf("patch %#x in process %d: %w", addr, mm.tgid, err))
		return breakpoint.JumpNoRoom
	}
	for _, mv := range moves {
		if err := pokeUser(mv.u.tid, offRip, mv.to); err != nil {
			m.lose(fmt.Errorf("move thread %d into the trampoline of %#x: %w", mv.u.tid, addr, err))
		}
		if mm.pcs != nil {
			mm.pcs[mv.u.tid] = mv.to
		}
	}
	j.tramp[i], j.state[i] = tr, jumpDone
	return ""
}

// unjump puts an int3 back over every patched site of mm (its planted
// state, which Table.RestoreIn then undoes): the int3 first, so a thread
// that runs meanwhile traps rather than reading half a jmp. The
// trampolines stay: a thread in one runs on to original code.
func (m *mon) unjump(mm *space) {
	for _, short := range []bool{true, false} {
		m.unjumpSites(mm, short)
	}
}

// unjumpSites is unjump for the short sites, which go first (their
// landings are in their hosts' bytes), or for the others.
func (m *mon) unjumpSites(mm *space, short bool) {
	for _, mp := range mm.maps {
		if mp.jmp == nil {
			continue
		}
		for i, tr := range mp.jmp.tramp {
			if tr != nil && (tr.Landing != 0) == short {
				m.unjumpSite(mm, mp.jmp, i)
			}
		}
	}
}

// unjumpSite puts site i of j back to an int3 over its original bytes,
// the int3 first, so that a thread running meanwhile traps rather than
// reading half a jmp, and refuses its jump from then on. It reports
// whether it did (a failed write is recorded: the target was changed).
//
// Preconditions: on the tracer thread; j.tramp[i] is set.
func (m *mon) unjumpSite(mm *space, j *jumpArea, i int) bool {
	tr := j.tramp[i]
	_, err := mm.mem.WriteMemory(tr.Addr, []byte{relocate.Int3})
	if err == nil {
		_, err = mm.mem.WriteMemory(tr.Addr+1, tr.Orig[1:])
	}
	if err != nil {
		m.leaveChanged(fmt.Errorf("restore the code at %#x in process %d: %w", tr.Addr, mm.tgid, err))
		return false
	}
	j.tramp[i], j.state[i] = nil, jumpRefused
	return true
}

// freeJump ends the engine in mm, through the stopped thread via: the
// counters are folded, every thread's GS base is put back, and the
// trampoline regions and the counter mapping are unmapped (checked against
// /proc/PID/maps). Patched sites must already be restored (unjump).
//
// Preconditions: on the tracer thread; no thread of mm runs or has its PC
// in a trampoline.
func (m *mon) freeJump(mm *space, via *thread) bool {
	c := mm.ctr
	if c != nil {
		m.fold(mm)
		// Every thread's GS base that is a slab goes back to 0, as glibc
		// and Go leave it (giveSlab refuses a thread that had another):
		// those given a slab, and a fork child's, inherited from its
		// parent's thread. One the program set is its own.
		m.restoreGS(mm)
		if !m.unmapIn(mm, via, c.base, c.size(), "counter memory") {
			return false
		}
		m.dropCounters(mm)
		mm.ctr = nil
	}
	for _, mp := range mm.maps {
		if mp.jmp != nil && mp.jmp.base != 0 {
			if !m.unmapIn(mm, via, mp.jmp.base, mp.jmp.size, "trampolines of "+mp.Image.Path) {
				return false
			}
			mp.jmp = nil
		}
	}
	return true
}

// unmapIn unmaps [base, base+size) in mm through via, and checks it is gone.
// It reports false when via ended (or vanished) before the call ran: another
// thread is to try.
func (m *mon) unmapIn(mm *space, via *thread, base, size uint64, what string) bool {
	r, err := m.syscallIn(via, mm.maps[0].Lo, sysMunmap, base, size)
	if errors.Is(err, errThreadEnded) || gone(err) {
		return false
	}
	if err == nil && int64(r) < 0 {
		err = unix.Errno(-int64(r))
	}
	if err == nil {
		if still, e := mapped(mm.tgid, base); e == nil && still {
			err = fmt.Errorf("still mapped after munmap")
		}
	}
	if err != nil {
		m.leaveChanged(fmt.Errorf("unmap the %s at %#x in process %d: %w", what, base, mm.tgid, err))
	}
	return true
}
