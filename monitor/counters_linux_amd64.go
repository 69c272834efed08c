//go:build linux && amd64

package monitor

import (
	"errors"
	"fmt"

	"github.com/patchprof/patchprof/breakpoint/jump"
	"golang.org/x/sys/unix"
)

// The in-process engine's counters live in a memfd that the target maps
// shared and patchprof maps too (through /proc/PID/fd), so patchprof reads
// them while the target runs, and they outlive the target: a crash or a
// SIGKILL loses nothing counted. The memfd is divided into slabs, one per
// live thread, each holding every site's counter at the same offset; a
// thread's GS base points at its slab, so a trampoline's `addq $1,
// %gs:OFF` updates the thread's own word, exact without a locked
// instruction. glibc and Go never use GS on x86-64 (a program that does is
// kept off the engine: guard_linux_amd64.go); the base survives signal
// delivery, is inherited by new threads and fork children (the monitor gives
// each new thread a slab of its own before it runs, and each fork child a
// memfd of its own at the same address) and is reset by execve
// (../shared/research/in-process-counters-threads.md).

// sysMemfdCreate is memfd_create's number on Linux x86-64
// (asm/unistd_64.h).
const sysMemfdCreate = 319

// offGsBase is the offset of gs_base in the USER area (struct
// user_regs_struct, sys/user.h): PTRACE_POKEUSER there sets the thread's
// GS base (arch/x86/kernel/ptrace.c, putreg).
const offGsBase = 22 * 8

// Slab geometry: at least minSlab bytes a slab (1 MiB: 131,072 counters),
// maxSlabs slabs, so a process may run that many threads at once.
const (
	minSlab  = 1 << 20
	maxSlabs = 1024
)

// counterMem is the counter memory of one address space.
type counterMem struct {
	base     uint64 // where the target maps it
	slabSize uint64
	mem      []byte // patchprof's mapping of the same memfd
	used     []bool // per slab: given to a live thread
	ever     int    // slabs handed out so far: the ones to sum
	top      uint64 // bytes of each slab given to mappings
	// inherited: a fork child's copy, still the parent's memory, to be
	// replaced by its own before the child runs (ownCounters).
	inherited bool
}

// size returns the bytes of the whole memfd.
func (c *counterMem) size() uint64 { return c.slabSize * maxSlabs }

// reserve gives n counters of each slab to a mapping and returns their
// offset, or false when the slab is full.
func (c *counterMem) reserve(n int) (uint64, bool) {
	need := uint64(n) * 8
	if c.top+need > c.slabSize {
		return 0, false
	}
	off := c.top
	c.top = (c.top + need + 63) &^ 63
	return off, true
}

// slabSizeFor returns the slab size for the images known so far: room for
// all their sites twice over (libraries loaded later), at least minSlab.
func (m *mon) slabSizeFor() uint64 {
	var n uint64
	for _, img := range m.imgs {
		n += uint64(img.Table.Len() + img.Table.ArcCounters() + img.Table.CallWords() + img.Table.EntryCounters())
	}
	n += jump.CallWords / 8
	s := max(uint64(minSlab), 16*n)
	return (s + pageSize - 1) &^ (pageSize - 1)
}

const pageSize = 4096

// mapCounters creates a memfd in the stopped thread via (injected system
// calls at code address at, the memfd's name at name in the target), maps
// it in the target (at fixed, when not 0, over what is there) and in
// patchprof, and closes the target's descriptor again, so its descriptor
// table is as it was.
//
// Preconditions: on the tracer thread; no thread of via's space runs.
func (m *mon) mapCounters(via *thread, at, name, fixed, slabSize uint64) (*counterMem, error) {
	c := &counterMem{slabSize: slabSize, used: make([]bool, maxSlabs), top: jump.CallWords}
	r, err := m.syscallIn(via, at, sysMemfdCreate, name, 0)
	if err == nil && int64(r) < 0 {
		err = unix.Errno(-int64(r))
	}
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	fd := r
	closeTarget := func() error {
		r, err := m.syscallIn(via, at, sysClose, fd)
		if err == nil && int64(r) < 0 {
			err = unix.Errno(-int64(r))
		}
		if err != nil {
			return fmt.Errorf("close the counter memfd %d: %w", fd, err)
		}
		return nil
	}
	ours, err := unix.Open(fmt.Sprintf("/proc/%d/fd/%d", via.tgid, fd), unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("open the counter memfd: %w", err), closeTarget())
	}
	defer unix.Close(ours)
	if err := unix.Ftruncate(ours, int64(c.size())); err != nil {
		return nil, errors.Join(fmt.Errorf("size the counter memfd: %w", err), closeTarget())
	}
	if c.mem, err = unix.Mmap(ours, 0, int(c.size()), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err != nil {
		return nil, errors.Join(fmt.Errorf("map the counter memfd: %w", err), closeTarget())
	}
	flags := uint64(unix.MAP_SHARED)
	if fixed != 0 {
		flags |= unix.MAP_FIXED
	}
	r, err = m.syscallIn(via, at, sysMmap, fixed, c.size(), unix.PROT_READ|unix.PROT_WRITE, flags, fd, 0)
	if err == nil && int64(r) < 0 && int64(r) > -4096 {
		err = unix.Errno(-int64(r))
	}
	if err == nil && fixed != 0 && r != fixed {
		err = fmt.Errorf("mapped at %#x, not %#x", r, fixed)
	}
	if err != nil {
		unix.Munmap(c.mem)
		return nil, errors.Join(fmt.Errorf("map the counters in process %d: %w", via.tgid, err), closeTarget())
	}
	c.base = r
	m.live.add(c)
	if err := closeTarget(); err != nil {
		return c, err // mapped and usable; the descriptor stays open
	}
	return c, nil
}

// giveSlab gives t a counter slab of its space and points its GS base at
// it. A thread whose GS base is already set by the program (not one of our
// slabs) makes the space unfit for the engine: that is reported.
//
// Preconditions: on the tracer thread; t is stopped.
func (m *mon) giveSlab(t *thread) error {
	c := t.mm.ctr
	if c == nil || t.slab != 0 {
		return nil
	}
	gs, err := peekUser(t.tid, offGsBase)
	if err != nil {
		return fmt.Errorf("read the GS base of thread %d: %w", t.tid, err)
	}
	if gs != 0 && (gs < c.base || gs >= c.base+c.size()) {
		return fmt.Errorf("thread %d (GS base %#x): %w", t.tid, gs, errOwnGS)
	}
	k := 0
	for k < maxSlabs && c.used[k] {
		k++
	}
	if k == maxSlabs {
		return fmt.Errorf("more than %d threads in process %d", maxSlabs, t.tgid)
	}
	if err := pokeUser(t.tid, offGsBase, c.base+uint64(k)*c.slabSize); err != nil {
		return fmt.Errorf("set the GS base of thread %d: %w", t.tid, err)
	}
	c.used[k] = true
	m.live.setSlabs(c, max(c.ever, k+1))
	t.slab = k + 1
	m.movePend(t)
	return nil
}

// dropSlab takes t's slab back, for the next new thread: its counts stay in
// it, and the sums include them.
func (t *thread) dropSlab() {
	if t.slab != 0 && t.mm.ctr != nil {
		t.mm.ctr.used[t.slab-1] = false
	}
	t.slab = 0
}

// ownCounters gives a fork child, stopped before running any code, counter
// memory of its own at the address of its parent's, which it would
// otherwise share (MAP_SHARED survives fork). Its one thread keeps the slab
// its GS base inherited.
//
// Preconditions: on the tracer thread; t is the child's only thread.
func (m *mon) ownCounters(t *thread) error {
	old := t.mm.ctr
	old.inherited = false
	var at, name uint64
	for _, mp := range t.mm.maps {
		if mp.jmp != nil && mp.jmp.base != 0 {
			at, name = mp.Lo, mp.jmp.base
		}
	}
	if at == 0 {
		return errors.New("no trampoline region")
	}
	c, err := m.mapCounters(t, at, name, old.base, old.slabSize)
	if err != nil {
		t.mm.ctr = nil
		return err
	}
	c.top = old.top
	t.mm.ctr = c
	for _, mp := range t.mm.maps {
		if mp.jmp != nil && mp.jmp.counted {
			m.live.addRange(c, mp.jmp.ctrOff, mp.tab.Len())
		}
	}
	gs, err := peekUser(t.tid, offGsBase)
	if err != nil {
		return err
	}
	if gs >= c.base && gs < c.base+c.size() {
		k := int((gs - c.base) / c.slabSize)
		c.used[k] = true
		m.live.setSlabs(c, k+1)
		t.slab = k + 1
	}
	for _, mp := range t.mm.maps {
		if mp.jmp != nil {
			clear(mp.jmp.seen)
			clear(mp.jmp.callSeen)
		}
	}
	return nil
}

// fold adds to the table of every mapping of mm what its counters gained
// since the last fold.
//
// Preconditions: on the tracer thread.
func (m *mon) fold(mm *space) {
	c := mm.ctr
	if c == nil || c.mem == nil || c.inherited {
		return
	}
	for _, mp := range mm.maps {
		m.foldMapping(c, mp)
		if mp.jmp != nil && mp.jmp.counted {
			m.foldCalls(mm, c, mp)
		}
	}
}

// foldMapping folds one mapping's counters (see fold).
func (m *mon) foldMapping(c *counterMem, mp *mapping) {
	j := mp.jmp
	if j == nil || !j.counted {
		return
	}
	// gained returns what counter k (a site's, then an arc's) gained in
	// every slab since the last fold.
	gained := func(k int) uint64 {
		var sum uint64
		off := j.ctrOff + 8*uint64(k)
		for s := 0; s < c.ever; s++ {
			sum += loadCounter(c.mem, uint64(s)*c.slabSize+off)
		}
		d := sum - j.seen[k]
		j.seen[k] = sum
		return d
	}
	// A site patched and then put back (unjump) may still count: a thread
	// that was in a trampoline goes on through the others it is aimed at.
	for i, st := range j.state {
		if st != jumpUntried {
			mp.tab.AddHits(i, gained(i))
		}
	}
	n := mp.tab.Len()
	for k := 0; k < mp.tab.ArcCounters() && n+k < len(j.seen); k++ {
		mp.tab.AddArcHits(k, gained(n+k))
	}
	n += mp.tab.ArcCounters() + mp.tab.CallWords()
	for _, es := range mp.tab.EntrySites() {
		for k := 0; k < es.N && n+es.Base+k < len(j.seen); k++ {
			mp.tab.AddEntryHits(es.Site, k, gained(n+es.Base+k))
		}
	}
}

// foldAll folds the counters of every live address space.
func (m *mon) foldAll() {
	done := map[*space]bool{}
	for _, t := range m.threads {
		if !done[t.mm] {
			done[t.mm] = true
			m.fold(t.mm)
		}
	}
}

// uncount takes back one count of site i of mp from t's slab: the thread
// is taken back to the site, where it counts again.
func (m *mon) uncount(t *thread, mp *mapping, i int) {
	c := t.mm.ctr
	if c == nil || t.slab == 0 || mp.jmp == nil || mp.jmp.tramp[i] != nil && mp.jmp.tramp[i].IsGate() {
		return // a gate counts nothing
	}
	addCounter(c.mem, uint64(t.slab-1)*c.slabSize+mp.jmp.ctrOff+8*uint64(i), ^uint64(0))
	if k, ok := m.entryOf(t, mp.tab, i); ok {
		n := mp.tab.Len() + mp.tab.ArcCounters() + mp.tab.CallWords() + k
		addCounter(c.mem, uint64(t.slab-1)*c.slabSize+mp.jmp.ctrOff+8*uint64(n), ^uint64(0))
	}
}

// dropCounters folds mm's counters a last time and unmaps patchprof's view;
// the target's mapping goes with the process, or with freeJump.
func (m *mon) dropCounters(mm *space) {
	c := mm.ctr
	if c == nil {
		return
	}
	m.fold(mm)
	if c.mem != nil && !c.inherited {
		m.live.remove(c)
		if err := unix.Munmap(c.mem); err != nil {
			m.lose(fmt.Errorf("unmap the counters of process %d: %w", mm.tgid, err))
		}
	}
	c.mem = nil
}

// counting readies t to run code of a space that counts in-process: a fork
// child gets counter memory of its own first, and every thread a slab. A
// thread that cannot be given one must not run a trampoline: the sites go
// back to breakpoints.
//
// Preconditions: on the tracer thread; t is stopped, about to be resumed.
func (m *mon) counting(t *thread) {
	mm := t.mm
	if mm.noJump && !mm.ctr.inherited {
		// Off the engine (every site an int3 again): a new thread
		// needs no slab, and one with a GS base of its own keeps it.
		return
	}
	if mm.ctr.inherited {
		if !t.canInject() {
			return // in a system call: at its next stop
		}
		if !m.mayInject(mm) {
			// Its own counter memory needs injected calls: the child
			// counts by breakpoints, never in the memory it shares
			// with its parent.
			mm.ctr.inherited = false
			mm.ctr.mem = nil
			m.unjump(mm)
			mm.noJump = true
			return
		}
		if err := m.ownCounters(t); err != nil {
			m.lose(fmt.Errorf("counters of process %d: %w", mm.tgid, err))
			m.unjump(mm)
			mm.noJump = true
			return
		}
	}
	if t.slab == 0 {
		if err := m.giveSlab(t); errors.Is(err, errOwnGS) {
			m.gsFallBack(t, "a new thread has one")
		} else if err != nil {
			m.lose(fmt.Errorf("in-process counting in process %d stops: %w", mm.tgid, err))
			m.unjump(mm)
			mm.noJump = true
		}
	}
}

// errOwnGS: a thread's GS base is the program's, not a slab.
var errOwnGS = errors.New("the thread uses its GS base")

// slabHeld reports whether t's GS base is still the slab it was given: a
// thread that ran wrgsbase changed it without a system call.
//
// Preconditions: on the tracer thread; t is stopped.
func (m *mon) slabHeld(t *thread) bool {
	c := t.mm.ctr
	if c == nil || t.slab == 0 {
		return true
	}
	gs, err := peekUser(t.tid, offGsBase)
	return err != nil || gs == c.base+uint64(t.slab-1)*c.slabSize
}
