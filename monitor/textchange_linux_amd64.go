//go:build linux && amd64

package monitor

import (
	"fmt"
	"slices"

	"github.com/patchprof/patchprof/breakpoint"
	"github.com/patchprof/patchprof/breakpoint/jump"
)

// What a program does to its own code, seen at the system calls that do it
// (the threads run under PTRACE_SYSCALL for the signal state anyway). Our
// bytes in its code (int3s, jump patches) travel with the pages the kernel
// moves, vanish with the pages it drops, and are what the program reads and
// rewrites when it writes its own code; a jump patch moved away from its
// trampoline jumps into nothing (SIGSEGV), an int3 moved away from its site
// traps where no site is (SIGTRAP). So, at the entry of a call that
// changes the code of a profiled mapping, with the process's other threads
// held:
//
//   - mremap, munmap of part of a mapping, madvise(MADV_DONTNEED): the
//     mapping's jump patches become
//     int3s again (unjumpMapping: the counts so far stay in the slabs and
//     are folded as usual), and the original byte of every site in the range
//     is put back. The range is then the program's (textChange.gone): no
//     site there is planted, looked up or restored again. The mapping keeps
//     breakpoints from then on (tryJump refuses it), so no patch is made
//     over code the program moves or writes.
//   - munmap of a whole mapping (dlclose): its counts are folded; its bytes
//     go with it.
//   - mprotect dropping PROT_EXEC: the jump patches become int3s again, so
//     that a thread running into the range faults at the program's own
//     instruction, not in a trampoline that runs on; the int3s stay.
//   - mprotect adding PROT_WRITE: the jump patches become int3s again, so
//     that the program reads and rewrites its own code but for the int3
//     at each site's first byte (a slot is made from the bytes in memory at
//     the site's first hit, a patch at its function's); the mapping may
//     still be patched. Code rewritten inside a block patched after the
//     call runs from the trampoline's stale copy: not handled.
//
// At the call's exit: a failed call plants the range again; the pages of
// MADV_DONTNEED are the file's again and are planted again; after mremap
// and munmap the maps are read again (scanMaps): text moved elsewhere is a
// piece of its module, planted within its own range (textMem), and a range
// moved back to where it was is planted again. A mapping that went away
// whole has its scratch region and trampolines unmapped through the
// calling thread. One note per process and kind of change says what was
// done.

// System calls and arguments that change code (asm/unistd_64.h,
// asm-generic/mman-common.h).
const (
	sysMremap          = 25
	sysMadvise         = 28
	sysPkeyMprotect    = 329
	madvDontneed       = 4
	madvDontneedLocked = 24
	protWrite          = 2
)

// A textKind is what a system call does to code.
type textKind uint8

const (
	textMove   textKind = iota + 1 // mremap
	textUnmap                      // munmap
	textDrop                       // madvise(MADV_DONTNEED): back to the file's bytes
	textWrite                      // mprotect adding PROT_WRITE: the patches go
	textNoExec                     // mprotect dropping PROT_EXEC
)

// A textChange is what the program did to the code of one mapping. It is
// never changed in place: a fork child's mapping shares it.
type textChange struct {
	// gone are the ranges that are the program's now (vacated by mremap or
	// munmap, or made writable): no site there is planted or restored.
	gone []goneRange
	// piece: the mapping is code of its module that mremap moved; it is
	// planted within [Lo, Hi) only.
	piece bool
}

// A goneRange is a range of a mapping's code that is no longer ours.
type goneRange struct {
	lo, hi  uint64
	written bool // made writable by the program; else vacated
}

// A textCall is a system call that changes code, between its entry and
// its exit.
type textCall struct {
	nr       uint64
	kind     textKind
	lo, hi   uint64
	maps     []*mapping // the mappings it changes
	released []bool     // per mapping: its sites in [lo, hi) were restored
}

// jumpable reports whether the in-process engine may patch mp: not after
// the program changed its code.
func (mp *mapping) jumpable() bool { return mp.text == nil }

// isGone reports whether pc is in a range of mp that is the program's.
func (mp *mapping) isGone(pc uint64) bool {
	if mp.text == nil {
		return false
	}
	for _, g := range mp.text.gone {
		if pc >= g.lo && pc < g.hi {
			return true
		}
	}
	return false
}

// memIn returns the memory through which mp's sites are planted and
// restored in mm: mm's own, or, once the program changed mp's code, a view
// that leaves alone everything outside [Lo, Hi) and the ranges that are
// the program's (a piece's table at its bias names sites outside the piece,
// where other mappings may lie).
func (mp *mapping) memIn(mm *space) breakpoint.Memory {
	if mp.text == nil {
		return mm.mem
	}
	return &textMem{mem: mm.mem, lo: mp.Lo, hi: mp.Hi, gone: mp.text.gone}
}

// A textMem is a breakpoint.Memory restricted to [lo, hi) less gone: reads
// outside it return zeros (no site there holds an int3 to restore), writes
// outside it are dropped. The breakpoint package reads and writes one
// page's span at a time, and the ranges are whole pages, so an access is
// wholly in or wholly out; one that is not is split by page.
type textMem struct {
	mem    breakpoint.Memory
	lo, hi uint64
	gone   []goneRange
}

func (w *textMem) in(addr uint64) bool {
	if addr < w.lo || addr >= w.hi {
		return false
	}
	for _, g := range w.gone {
		if addr >= g.lo && addr < g.hi {
			return false
		}
	}
	return true
}

// ReadMemory reads buf at addr where the view allows it, zeros elsewhere.
func (w *textMem) ReadMemory(addr uint64, buf []byte) (int, error) {
	for done := 0; done < len(buf); {
		a := addr + uint64(done)
		n := min(len(buf)-done, int(pageSize-a%pageSize))
		if !w.in(a) {
			clear(buf[done : done+n])
		} else if k, err := w.mem.ReadMemory(a, buf[done:done+n]); err != nil || k != n {
			return done + k, err
		}
		done += n
	}
	return len(buf), nil
}

// WriteMemory writes buf at addr where the view allows it.
func (w *textMem) WriteMemory(addr uint64, buf []byte) (int, error) {
	for done := 0; done < len(buf); {
		a := addr + uint64(done)
		n := min(len(buf)-done, int(pageSize-a%pageSize))
		if w.in(a) {
			if k, err := w.mem.WriteMemory(a, buf[done:done+n]); err != nil || k != n {
				return done + k, err
			}
		}
		done += n
	}
	return len(buf), nil
}

// pieceOf marks a mapping about to be planted as a piece of its module
// when mm already maps the same file: code moved by mremap (or the same
// file mapped twice). It is planted within its own range only, and keeps
// breakpoints. r is the piece's first region, of regions. It reports false
// when it cannot be planted soundly: the table's original bytes were never
// read (a piece of a module planted nowhere), or its bias is not known.
func pieceOf(mm *space, mp *mapping, r region, regions []region) bool {
	var other *mapping
	for _, o := range mm.maps {
		if o.Image == mp.Image {
			other = o
		}
	}
	if other == nil {
		return true
	}
	mp.text = &textChange{piece: true}
	if mp.Image.LinkAddr == nil {
		// A root image without segment information took its bias from
		// the entry point, which is the other mapping's: the piece's is
		// that one's moved as the file offsets say.
		at, ok := anchor(other, regions)
		if !ok {
			return false
		}
		mp.Bias = other.Bias + (r.lo - r.off) - at
		mp.tab = mp.Image.Table.At(mp.Bias)
	}
	for i := 0; i < mp.tab.Len(); i++ {
		if !mp.tab.Derived(i) && !mp.tab.Armed(i) {
			return false
		}
	}
	return true
}

// anchor returns the address less the file offset of mp's first region:
// the same for every region of the file mapped at mp's bias.
func anchor(mp *mapping, regions []region) (uint64, bool) {
	for _, r := range regions {
		if r.lo == mp.Lo && r.path == mp.Image.Path {
			return r.lo - r.off, true
		}
	}
	return 0, false
}

// textEntry looks at a system call t is entering: one that moves, unmaps,
// drops, makes writable or takes execution from the code of a profiled
// mapping has that code put back as the program's first (see above).
//
// Preconditions: on the tracer thread; t is in a syscall-entry-stop.
func (m *mon) textEntry(t *thread, nr uint64, args [6]uint64) {
	t.textCall = nil
	mm := t.mm
	if mm.dead || len(mm.maps) == 0 {
		return
	}
	var kind textKind
	switch nr {
	case sysMremap:
		kind = textMove
	case sysMunmap:
		kind = textUnmap
	case sysMadvise:
		if args[2] != madvDontneed && args[2] != madvDontneedLocked {
			return
		}
		kind = textDrop
	case sysMprotect, sysPkeyMprotect:
		switch {
		case args[2]&protWrite != 0:
			kind = textWrite
		case args[2]&protExec == 0:
			kind = textNoExec
		default:
			return
		}
	default:
		return
	}
	// Each of these calls refuses an address that is not page-aligned
	// (EINVAL): nothing changes.
	lo, n := args[0], (args[1]+pageSize-1)&^(pageSize-1)
	if lo%pageSize != 0 || n == 0 || lo+n < lo {
		return
	}
	c := &textCall{nr: nr, kind: kind, lo: lo, hi: lo + n}
	for _, mp := range mm.maps {
		if mp.Lo < c.hi && c.lo < mp.Hi {
			c.maps = append(c.maps, mp)
		}
	}
	if len(c.maps) == 0 {
		return
	}
	t.textCall = c
	c.released = make([]bool, len(c.maps))
	held := m.cur == mm
	if !held {
		m.stopOthers(mm, t)
	}
	for k, mp := range c.maps {
		c.released[k] = m.releaseText(mm, mp, c)
	}
	if !held {
		m.resumeOthers(mm, t)
	}
}

// releaseText does textEntry's work for one mapping. It reports whether
// the sites of the call's range were restored (and the range marked the
// program's).
//
// Preconditions: on the tracer thread; no other thread of mm runs.
func (m *mon) releaseText(mm *space, mp *mapping, c *textCall) bool {
	lo, hi := max(c.lo, mp.Lo), min(c.hi, mp.Hi)
	if c.kind == textUnmap && lo == mp.Lo && hi == mp.Hi {
		// The module goes whole (dlclose): its bytes go with it.
		if mm.ctr != nil && !mm.ctr.inherited && mm.ctr.mem != nil {
			m.foldMapping(mm.ctr, mp)
		}
		return false
	}
	m.unjumpMapping(mm, mp)
	old := mp.text
	if old == nil {
		old = &textChange{}
	}
	if c.kind == textWrite {
		// The int3s stay, at each site's first byte: the program reads
		// and rewrites its own code around them, and a site's slot is
		// made from the bytes in memory at its first hit. A function first
		// run after this is patched from the bytes in memory then.
		m.note(fmt.Sprintf("process %d made code of %s writable (mprotect): its jump patches there were made breakpoints again, so that the program reads and rewrites its own code but for the int3 at each site's first byte", mm.tgid, mp.Image.Path))
		return false
	}
	if c.kind == textNoExec {
		// The int3s stay (a thread running there faults at the program's
		// instruction, as without patchprof); only the patches had to go.
		mp.text = &textChange{gone: old.gone, piece: old.piece}
		m.note(fmt.Sprintf("process %d took execution from code of %s (mprotect): its jump patches there were made breakpoints again, so that the program faults where it would; that code keeps breakpoints", mm.tgid, mp.Image.Path))
		return false
	}
	view := &textMem{mem: mm.mem, lo: lo, hi: hi, gone: old.gone}
	if err := mp.tab.RestoreIn(view); err != nil {
		m.leaveChanged(fmt.Errorf("restore the code at %#x-%#x in process %d before the program changes it: %w", lo, hi, mm.tgid, err))
	}
	gone := append(slices.Clone(old.gone), goneRange{lo: lo, hi: hi, written: c.kind == textWrite})
	mp.text = &textChange{gone: gone, piece: old.piece}
	switch c.kind {
	case textMove:
		m.note(fmt.Sprintf("process %d moved code of %s (mremap): patchprof put its original bytes back first and planted the code again where it went; that code keeps breakpoints", mm.tgid, mp.Image.Path))
	case textUnmap:
		m.note(fmt.Sprintf("process %d unmapped part of the code of %s (munmap): patchprof put its original bytes back first; the rest keeps breakpoints", mm.tgid, mp.Image.Path))
	case textDrop:
		m.note(fmt.Sprintf("process %d dropped pages of the code of %s (madvise MADV_DONTNEED): patchprof put its original bytes back first and planted them again after; that code keeps breakpoints", mm.tgid, mp.Image.Path))
	}
	return true
}

// unjumpMapping puts an int3 back over every patched site of mp (unjump,
// for one mapping) and aims the exits of its trampolines back at original
// code, so that a thread in one leaves at its next exit rather than going
// on through the others.
//
// Preconditions: on the tracer thread; no other thread of mm runs.
func (m *mon) unjumpMapping(mm *space, mp *mapping) {
	j := mp.jmp
	if j == nil {
		return
	}
	var put []*jump.Trampoline
	for _, short := range []bool{true, false} {
		for i, tr := range j.tramp {
			if tr != nil && (tr.Landing != 0) == short && m.unjumpSite(mm, j, i) {
				put = append(put, tr)
			}
		}
	}
	for _, tr := range put {
		for _, k := range tr.Stale(func(uint64) uint64 { return 0 }) {
			x := tr.Exits()[k]
			if b, ok := tr.Aim(k, 0); ok {
				if _, err := mm.mem.WriteMemory(x.At, b); err != nil {
					m.lose(fmt.Errorf("aim a trampoline of %#x back at %#x in process %d: %w", tr.Addr, x.To, mm.tgid, err))
				}
			}
		}
	}
}

// textExit finishes what textEntry began, at the call's exit (see above).
//
// Preconditions: on the tracer thread; t is in a syscall-exit-stop and may
// run an injected system call.
func (m *mon) textExit(t *thread, nr, ret uint64) {
	c := t.textCall
	t.textCall = nil
	mm := t.mm
	if c == nil || c.nr != nr || mm.dead {
		return
	}
	failed := int64(ret) < 0 && int64(ret) > -4096
	held := m.cur == mm
	if !held {
		m.stopOthers(mm, t)
	}
	defer func() {
		if !held {
			m.resumeOthers(mm, t)
		}
	}()
	switch {
	case c.kind == textNoExec:
	case failed, c.kind == textDrop:
		// Nothing moved; or the pages are the file's again.
		for k, mp := range c.maps {
			if c.released[k] {
				m.replant(mm, mp, c.lo, c.hi)
			}
		}
	case c.kind == textMove, c.kind == textUnmap:
		before := slices.Clone(mm.maps)
		if err := m.scanMaps(mm); err != nil {
			m.lose(fmt.Errorf("read the mappings of process %d after it moved its code: %w", mm.tgid, err))
		}
		m.refill(mm)
		for _, mp := range before {
			if !slices.Contains(mm.maps, mp) {
				m.freeGone(mm, t, mp)
			}
		}
	}
}

// replant makes [lo, hi) of mp ours again and plants its sites there.
//
// Preconditions: on the tracer thread; no other thread of mm runs.
func (m *mon) replant(mm *space, mp *mapping, lo, hi uint64) {
	old := mp.text
	if old == nil {
		return
	}
	var gone []goneRange
	for _, g := range old.gone {
		if g.written || g.hi <= lo || g.lo >= hi {
			gone = append(gone, g)
			continue
		}
		if g.lo < lo {
			gone = append(gone, goneRange{lo: g.lo, hi: lo})
		}
		if g.hi > hi {
			gone = append(gone, goneRange{lo: hi, hi: g.hi})
		}
	}
	mp.text = &textChange{gone: gone, piece: old.piece}
	view := &textMem{mem: mm.mem, lo: max(lo, mp.Lo), hi: min(hi, mp.Hi), gone: gone}
	if err := mp.tab.Plant(view); err != nil {
		m.lose(fmt.Errorf("plant %s again at %#x-%#x in process %d: %w", mp.Image.Path, lo, hi, mm.tgid, err))
	}
}

// refill plants again the vacated ranges of mm's mappings that their file
// maps again at the mapping's own bias: code moved back where it was.
//
// Preconditions: on the tracer thread; no other thread of mm runs.
func (m *mon) refill(mm *space) {
	var regions []region
	for _, mp := range mm.maps {
		if mp.text == nil {
			continue
		}
		for _, g := range mp.text.gone {
			if g.written {
				continue
			}
			if regions == nil {
				var err error
				if regions, err = readMaps(mm.tgid); err != nil {
					return
				}
			}
			at, ok := anchor(mp, regions)
			if !ok {
				continue
			}
			for _, r := range regions {
				if r.path != mp.Image.Path || r.lo-r.off != at || r.hi <= g.lo || r.lo >= g.hi {
					continue
				}
				m.replant(mm, mp, max(g.lo, r.lo), min(g.hi, r.hi))
			}
		}
	}
}

// freeGone unmaps, through t, the scratch region and trampolines of a
// mapping the program unmapped or moved away whole: no code of its jumps
// or slots back to it any more.
//
// Preconditions: on the tracer thread; t may run an injected system call.
func (m *mon) freeGone(mm *space, t *thread, mp *mapping) {
	if len(mm.maps) == 0 || !t.canInject() || !m.mayInject(mm) {
		return
	}
	if mp.jmp != nil && mp.jmp.base != 0 {
		m.unmapIn(mm, t, mp.jmp.base, mp.jmp.size, "trampolines of "+mp.Image.Path)
		mp.jmp.base = 0
	}
	if mp.xol != nil {
		m.unmapIn(mm, t, mp.xol.base, mp.xol.size, "scratch region of "+mp.Image.Path)
		mp.xol = nil
	}
}
