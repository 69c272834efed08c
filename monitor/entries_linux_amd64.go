package monitor

import (
	"fmt"

	"github.com/patchprof/patchprof/breakpoint"
	"golang.org/x/sys/unix"
)

// userReg is, per general register in x86 numbering (%rax, %rcx, %rdx,
// %rbx, %rsp, %rbp, %rsi, %rdi, %r8 to %r15), its word in struct
// user_regs_struct (sys/user.h), which starts the USER area.
var userReg = [16]uintptr{10, 11, 12, 5, 19, 4, 13, 14, 9, 8, 7, 6, 3, 2, 1, 0}

// regValue returns general register r (x86 numbering) of regs.
func regValue(regs *unix.PtraceRegs, r uint8) uint64 {
	words := [...]uint64{regs.R15, regs.R14, regs.R13, regs.R12, regs.Rbp, regs.Rbx, regs.R11, regs.R10,
		regs.R9, regs.R8, regs.Rax, regs.Rcx, regs.Rdx, regs.Rsi, regs.Rdi, regs.Orig_rax, regs.Rip, regs.Cs,
		regs.Eflags, regs.Rsp}
	return words[userReg[r&15]]
}

// countEntry counts, at a trap of t at site i of tab that is a dispatch
// whose table entries are counted (breakpoint.Plan.CountEntries), the
// entry its index register picks, noted in u, the trap's Undo. regs are
// t's registers when read already, else nil (the register is peeked).
//
// Preconditions: on the tracer thread; t is stopped at the trap.
func (m *mon) countEntry(t *thread, tab *breakpoint.Table, i int, regs *unix.PtraceRegs, u *breakpoint.Undo) {
	r, ok := tab.EntryRegOf(i)
	if !ok {
		return
	}
	var v uint64
	if regs != nil {
		v = regValue(regs, r.Reg)
	} else {
		var err error
		if v, err = peekUser(t.tid, userReg[r.Reg&15]*8); err != nil {
			m.lose(fmt.Errorf("read the table index of thread %d: %w", t.tid, err))
			return
		}
	}
	tab.HitEntry(i, v, u)
}

// entryOf returns, for t stopped at a point of site i's trampoline past
// its counter updates (uncount), the index of the entry counter the
// trampoline added to among tab's entry counters (after the sites', the
// arcs' and the call slots'); false when site i counts no entry. The index register
// still holds what it held at the site.
func (m *mon) entryOf(t *thread, tab *breakpoint.Table, i int) (int, bool) {
	r, ok := tab.EntryRegOf(i)
	if !ok {
		return 0, false
	}
	v, err := peekUser(t.tid, userReg[r.Reg&15]*8)
	if err != nil {
		m.lose(fmt.Errorf("read the table index of thread %d: %w", t.tid, err))
		return 0, false
	}
	k, ok := tab.EntryIndex(i, v)
	if !ok {
		return 0, false
	}
	for _, es := range tab.EntrySites() {
		if es.Site == i {
			return es.Base + k, true
		}
	}
	return 0, false
}
