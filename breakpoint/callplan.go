package breakpoint

import (
	"golang.org/x/arch/x86/x86asm"

	"github.com/patchprof/patchprof/breakpoint/jump"
	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/symtab"
)

// Indirect calls under the in-process engine (--calls): the trampoline of
// a block that ends in one records it as pending in the thread's slab,
// and the trampoline of each function entry counts the pending call that
// entered it (package jump, calls.go). Here is the plan of it: which
// blocks end in an indirect call (planted, never derived, so that their
// trampolines run), which entries check, and where each entry's slots
// are among a mapping's counters: after the sites' and the arcs'.

// An IndirectCall is how a block that ends in a call through a register
// or memory, or leaves its function by a jump through one (a tail call),
// reaches its callee.
type IndirectCall struct {
	// Delta is the callee's stack pointer at its entry less the block's
	// at its start: the block's pushes and pops before the call or jump,
	// less 8 for a call's return address.
	Delta int64
	// Tail says the block leaves by the jump: the callee returns to the
	// caller of the block's function, whose return address is at the
	// callee's stack pointer.
	Tail bool
}

// indirectCallBlocks returns, for each table-wide block of p's graphs that
// ends in an indirect call or leaves its function by an indirect jump, how
// it reaches its callee; a block that moves the stack pointer in a way
// the code does not say is left out.
func (p *Plan) indirectCallBlocks(sym *symtab.File) map[int32]IndirectCall {
	out := map[int32]IndirectCall{}
	for _, fg := range p.Graphs {
		for k, b := range fg.Graph.Blocks {
			call := b.Term == cfg.TermCall || b.Term == cfg.TermNoReturn
			tail := b.Term == cfg.TermTailCall && len(fg.Graph.Succs(k)) == 0
			if !call && !tail {
				continue
			}
			if d, ok := indirectCallDelta(sym, b, tail); ok {
				if !tail {
					d -= 8
				}
				out[fg.FirstBlock+int32(k)] = IndirectCall{Delta: d, Tail: tail}
			}
		}
	}
	return out
}

// indirectCallDelta returns, for block b ending in an indirect call (or,
// with tail, an indirect jump), how its instructions before it move the
// stack pointer; false when b ends otherwise or an instruction moves it
// in another way.
func indirectCallDelta(sym *symtab.File, b cfg.Block, tail bool) (int64, bool) {
	var d int64
	for pc := b.Start; pc < b.End; {
		code, ok := sym.Code(pc, int(b.End-pc))
		if !ok {
			return 0, false
		}
		inst, err := symtab.DecodeInst(code)
		if err != nil || inst.Len == 0 {
			return 0, false
		}
		if pc == b.Last {
			_, direct := inst.Args[0].(x86asm.Rel)
			op := x86asm.CALL
			if tail {
				op = x86asm.JMP
			}
			return d, inst.Op == op && !direct
		}
		pc += uint64(inst.Len)
		dst, _ := inst.Args[0].(x86asm.Reg)
		// In 64-bit mode push and pop move 8 bytes unless a 0x66 prefix
		// makes them move 2 (x86asm says DataSize 32 for the former).
		switch {
		case inst.Op == x86asm.PUSH && inst.DataSize != 16:
			d -= 8
		case inst.Op == x86asm.POP && inst.DataSize != 16 && dst != x86asm.RSP:
			d += 8
		case (inst.Op == x86asm.SUB || inst.Op == x86asm.ADD) && dst == x86asm.RSP:
			imm, ok := inst.Args[1].(x86asm.Imm)
			if !ok {
				return 0, false
			}
			if inst.Op == x86asm.SUB {
				imm = -imm
			}
			d += int64(imm)
		case dst == x86asm.RSP || WritesRSP(inst.Op):
			return 0, false
		}
	}
	return 0, false
}

// WritesRSP reports whether op moves the stack pointer without naming it
// as its first operand (besides push and pop, which indirectCallDelta
// follows).
func WritesRSP(op x86asm.Op) bool {
	switch op {
	case x86asm.PUSH, x86asm.POP, x86asm.PUSHF, x86asm.PUSHFQ, x86asm.POPF, x86asm.POPFQ, x86asm.ENTER, x86asm.LEAVE,
		x86asm.CALL, x86asm.RET, x86asm.SYSCALL, x86asm.INT:
		return true
	}
	return false
}

// callPlan is the in-process engine's plan of indirect calls.
type callPlan struct {
	pend map[int]int32  // site starting a block that ends in one -> its IndirectCall.Delta
	ret  map[int]uint64 // the same sites, but tail jumps' -> the link-time return address of the call
	tail map[int]bool   // the same sites that end in a tail jump
	// entries are the entry sites that check: those that take a jump
	// with the plain counter update (listEntries).
	entries []int       // the entry sites that check, in site order
	slot    map[int]int // entry site -> its index in entries
	// reserved is how many entries' slots a mapping's counters hold
	// when functions are planned at their first hit (lazyfuncs.go):
	// every entry that may check.
	reserved int
}

// planCalls notes the block starts of p.IndirectCalls, whose blocks are
// never derived when they take a jump (pinned). Call it in PlanJumps once
// the jump lengths are known, before any block is derived.
func (p *Plan) planCalls() {
	t := p.Table
	if p.IndirectCalls == nil || t.jump == nil {
		return
	}
	cp := &callPlan{pend: map[int]int32{}, ret: map[int]uint64{}, tail: map[int]bool{}, slot: map[int]int{}}
	for _, fg := range p.Graphs {
		for k, b := range fg.Graph.Blocks {
			ic, ok := p.IndirectCalls[fg.FirstBlock+int32(k)]
			if !ok {
				continue
			}
			if i, ok := t.Index(b.Start); ok && t.BlockOf(i) == fg.FirstBlock+int32(k) {
				cp.pend[i] = int32(ic.Delta)
				if ic.Tail {
					cp.tail[i] = true
				} else {
					cp.ret[i] = b.End
				}
			}
		}
	}
	t.jump.calls = cp
	t.cnt.Indirect = make(map[IndirectArc]uint64)
}

// pinned reports whether site i must stay planted: its block's trampoline
// records an indirect call, or its hit is planning its function.
func (t *Table) pinned(i int) bool {
	if t.jump != nil && t.jump.pin == i+1 {
		return true // the site whose hit plans its function (lazyfuncs.go)
	}
	if t.jump == nil || t.jump.calls == nil {
		return false
	}
	_, ok := t.jump.calls.pend[i]
	return ok && t.JumpLen(i) > 0
}

// listEntries fixes the entry sites that check, once the plan's keep-flags
// choices are made: those of the functions whose address the module takes
// (taken, by function index), which alone its own indirect calls can
// enter. Every other entry costs nothing more than its count.
func (t *Table) listEntries(taken func(fn int32) bool) {
	t.listEntriesIn(0, len(t.addr), taken)
}

// listEntriesIn lists the entries that check among sites [lo, hi), after
// those listed before: a function planned at its first hit lists its own
// then (lazyfuncs.go), in slots reserved at the start (CallWords).
func (t *Table) listEntriesIn(lo, hi int, taken func(fn int32) bool) {
	cp := t.jump.calls
	for i := lo; i < hi; i++ {
		if t.IsEntry(i) && t.JumpLen(i) > 0 && !t.KeepFlags(i) && !t.jump.derived[i] && taken(t.fn[i]) {
			cp.slot[i] = len(cp.entries)
			cp.entries = append(cp.entries, i)
			// A Go function's stack check runs first, at the entry's
			// stack pointer, and may leave for morestack, which can
			// move the goroutine to another thread (another slab)
			// before the entry runs: its blocks check first, into the
			// same slots, and the entry then finds nothing pending.
			for k := i - 1; k >= 0 && t.fn[k] == t.fn[i]; k-- {
				if t.isPre(k) && t.JumpLen(k) > 0 && !t.KeepFlags(k) && !t.jump.derived[k] {
					cp.slot[k] = cp.slot[i]
				}
			}
		}
	}
}

// SetCallTraps says whether the entry checks of t's trampolines stop at
// an int3 for the monitor to count a caller that finds the entry's call
// slots taken (jump.EntryCheck.Trap); without, such calls are among the
// callers unknown. A process that is to run without system-call stops
// (an eager attach) must have none: the int3 would be a forced SIGTRAP.
// Set it before the views of t are made (At).
func (t *Table) SetCallTraps(on bool) { t.callTraps = on }

// CallTraps reports what SetCallTraps set.
func (t *Table) CallTraps() bool { return t.callTraps }

// TracksCalls reports whether the in-process engine counts the callees of
// t's indirect calls in the target.
func (t *Table) TracksCalls() bool { return t.jump != nil && t.jump.calls != nil }

// CallWords returns how many 8-byte words of a mapping's counters, after
// its sites' and arcs', hold its entries' call slots.
func (t *Table) CallWords() int {
	if !t.TracksCalls() {
		return 0
	}
	return max(len(t.jump.calls.entries), t.jump.calls.reserved) * jump.CallSlotLen / 8
}

// CallEntries returns the entry sites that count their callers, in the
// order of their slots; the slice is shared.
func (t *Table) CallEntries() []int {
	if !t.TracksCalls() {
		return nil
	}
	return t.jump.calls.entries
}

// PendDelta reports whether site i starts a block that ends in an
// indirect call (or tail jump) its trampoline records, and the callee's
// stack pointer at its entry less the block's at its start
// (IndirectCall.Delta).
func (t *Table) PendDelta(i int) (int32, bool) {
	if !t.TracksCalls() {
		return 0, false
	}
	d, ok := t.jump.calls.pend[i]
	return d, ok
}

// PendTail reports whether the block site i starts ends in an indirect
// tail jump its trampoline records (PendDelta): its callee's return
// address is the one at the callee's stack pointer.
func (t *Table) PendTail(i int) bool { return t.TracksCalls() && t.jump.calls.tail[i] }

// PendRet returns the runtime return address of the indirect call ending
// the block site i starts (PendDelta), 0 when there is none or it ends in
// a tail jump.
func (t *Table) PendRet(i int) uint64 {
	if !t.TracksCalls() {
		return 0
	}
	if r, ok := t.jump.calls.ret[i]; ok {
		return r + t.bias
	}
	return 0
}

// AddIndirect adds n calls from the indirect call ending the block that
// site caller starts to the function whose entry is site callee.
func (t *Table) AddIndirect(caller, callee int, n uint64) {
	gb := t.BlockOf(caller)
	if gb < 0 || t.cnt.Indirect == nil || n == 0 {
		return
	}
	t.cnt.Indirect[IndirectArc{Block: gb, Callee: t.fn[callee]}] += n
}

// callSite returns the call tracking of site i's trampoline, given the
// site's counter offset (a mapping's counters start at counter - 8*i).
func (t *Table) callSite(i int, counter uint32) (*jump.Pend, *jump.EntryCheck) {
	if !t.TracksCalls() {
		return nil, nil
	}
	var pend *jump.Pend
	var entry *jump.EntryCheck
	if d, ok := t.jump.calls.pend[i]; ok && t.JumpLen(i) > 0 {
		pend = &jump.Pend{Key: counter, Delta: d, Ret: uint32(t.PendRet(i)), Tail: t.PendTail(i)}
	}
	if k, ok := t.jump.calls.slot[i]; ok {
		base := counter - 8*uint32(i) + 8*uint32(t.Len()+t.ArcCounters())
		lo, hi := t.FuncSites(i)
		entry = &jump.EntryCheck{Slots: base + uint32(k*jump.CallSlotLen), Lo: counter - 8*uint32(i-lo), Hi: counter + 8*uint32(hi-i), Trap: t.callTraps}
	}
	return pend, entry
}

// Prologue returns what site i's trampoline runs at its start that moves
// the stack pointer (jump.Prologue): as BuildTrampoline lays it out.
func (t *Table) Prologue(i int) jump.Prologue {
	switch {
	case t.jump == nil || t.JumpLen(i) == 0:
		return jump.PrologueNone
	case t.KeepFlags(i):
		return jump.PrologueKeepFlags
	case t.TracksCalls():
		if _, ok := t.jump.calls.slot[i]; ok {
			return jump.PrologueEntryCheck
		}
	}
	return jump.PrologueNone
}
