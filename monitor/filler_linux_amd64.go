package monitor

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// A jump patch covers more than its site's first instruction: the 5 bytes
// of its jmp and, for a block displaced whole, int3s up to the block's
// end. A thread whose saved context holds an address strictly inside those
// bytes (a goroutine preempted there before the patch was written, a
// signal handler's frame, an address no analysis found) must not run them.
// Three places send such a thread to the trampoline's copy of its
// instruction instead (jump.Trampoline.Equivalent): the return of a
// signal handler (afterSigreturn), the return of Go's asyncPreempt (a
// Resume site, hitResume), and, for any other way in past the jmp's 5
// bytes, the int3 filler's trap (intoCovered).

// hitResume serves a trap at a Resume site, the ret of Go's
// runtime.asyncPreempt: it returns for the thread (pops the interrupted PC
// from its stack), to the trampoline's equivalent when that PC is inside a
// patched site's bytes, else to the PC itself. The ret never runs: its
// byte stays an int3 for the next goroutine.
//
// Preconditions: on the tracer thread; t is stopped just after the int3.
func (m *mon) hitResume(t *thread, mp *mapping, i int) {
	sp, err := peekUser(t.tid, offRsp)
	if err != nil {
		m.lose(fmt.Errorf("read the stack pointer of thread %d: %w", t.tid, err))
		return
	}
	var w [8]byte
	if _, err := t.mm.mem.ReadMemory(sp, w[:]); err != nil {
		m.lose(fmt.Errorf("read the return address of thread %d at %#x: %w", t.tid, sp, err))
		return
	}
	to := binary.LittleEndian.Uint64(w[:])
	if eq, ok := m.equivalent(t, to); ok {
		to = eq
	}
	if err := pokeUser(t.tid, offRsp, sp+8); err != nil {
		m.lose(fmt.Errorf("pop the return address of thread %d: %w", t.tid, err))
		return
	}
	if err := pokeUser(t.tid, offRip, to); err != nil {
		m.lose(fmt.Errorf("return thread %d to %#x: %w", t.tid, to, err))
		return
	}
	m.resume(t, 0)
}

// intoCovered serves a trap at an int3 that is no site's: when it is the
// filler of a patched site, at the start of one of the instructions it
// displaced, the thread goes on at that instruction's copy in the
// trampoline, and a note says so once. It reports whether it did.
//
// Preconditions: on the tracer thread; t is stopped just after the int3
// at pc.
func (m *mon) intoCovered(t *thread, pc uint64) bool {
	to, ok := m.equivalent(t, pc)
	if !ok {
		return false
	}
	if err := pokeUser(t.tid, offRip, to); err != nil {
		m.lose(fmt.Errorf("move thread %d into its trampoline: %w", t.tid, err))
		return true
	}
	name := fmt.Sprintf("%#x", pc)
	if mp, _, ok := t.mm.lookup(pc); ok {
		name = fmt.Sprintf("%#x (%s+%#x)", pc, mp.Image.Path, pc-mp.Bias)
	}
	note := "a thread came back into the middle of a site the in-process engine patched, at " + name + ", by a way no analysis found; it ran on from the trampoline's copy of its instruction"
	if !slices.Contains(m.res.Notes, note) {
		m.res.Notes = append(m.res.Notes, note)
	}
	m.resume(t, 0)
	return true
}

// equivalent returns where a thread that would run the original code at
// pc goes on instead: the trampoline's copy of the displaced instruction
// that starts at pc, when pc is inside a patched site's bytes after their
// first.
func (m *mon) equivalent(t *thread, pc uint64) (uint64, bool) {
	if t.mm.ctr == nil || t.mm.dead {
		return 0, false
	}
	tr := t.mm.coveredBy(pc)
	if tr == nil {
		return 0, false
	}
	return tr.Equivalent(pc)
}
