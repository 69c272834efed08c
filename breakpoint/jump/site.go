package jump

import (
	"github.com/patchprof/patchprof/breakpoint/relocate"
	"github.com/patchprof/patchprof/symtab"
	"golang.org/x/arch/x86/x86asm"
)

// Where a site can take a jump patch: the first step of the in-process
// engine (a 5-byte jmp rel32 at the site to a trampoline that counts, runs
// the displaced instructions and jumps back). A jump covers more than the
// site's own instruction, so it is only safe where nothing jumps into the
// bytes it overwrites and every displaced instruction runs correctly out of
// line; and the trampoline's plain counter update (add) changes the
// arithmetic flags: where they are live, the trampoline counts with a
// longer update that writes none (Site.KeepFlags).

// JmpLen is the length of the patch's jump: jmp rel32 (Intel SDM vol. 2,
// JMP, E9 cd).
const JmpLen = 5

// Reasons a site cannot take a jump patch.
const (
	ReasonTarget      = "a branch target inside the bytes the jump covers"
	ReasonEnd         = "the function ends within the bytes the jump covers"
	ReasonTransfer    = "a control transfer before the last displaced instruction"
	ReasonUndecodable = "an instruction that cannot run out of line"
)

// A Site says whether a site can take a jump patch, and what the patch
// displaces.
type Site struct {
	// Len is the number of bytes the patch displaces: whole instructions,
	// at least JmpLen; 0 when the site cannot take the patch (Reason says
	// why).
	Len int
	// Insns are the lengths of the displaced instructions, in order, then
	// those of the tail.
	Insns []int
	// Tail is the length of the code after the displaced bytes that the
	// trampoline runs too, unpatched (a tail, planned by package
	// breakpoint): the block the last displaced instruction falls into.
	Tail int
	// FlagsDead reports that no instruction reads the arithmetic flags
	// before all of them are written again (or a call clobbers them): the
	// counter update may change them.
	FlagsDead bool
	// KeepFlags has the trampoline count with an update that writes no
	// flag (appendKeepCounter): for a site where they are live, whose
	// caller has checked that the stack below the thread's SP may be
	// used. It costs more than the plain add, so it is only for such
	// sites.
	KeepFlags bool
	// Gate has the trampoline stop the thread for the monitor instead of
	// counting (gate.go).
	Gate bool
	// Dead is how many of the Len bytes follow the last displaced
	// instruction, a return or jump, and are padding no code reaches
	// (PlanGate): the patch covers them, the trampoline runs none.
	Dead   int
	Reason string
	// Edges, if any, have the trampoline count arcs of the jump that ends
	// the displaced instructions (edgecount.go): one of a conditional
	// jump, or any of a jump table's.
	Edges []EdgeCount
	// Pend, if set, has the trampoline record the indirect call that ends
	// its block as pending; Entry, if set, has a function entry's
	// trampoline count the pending call that entered it (calls.go). Entry
	// needs the plain counter update: the flags dead.
	Pend  *Pend
	Entry *EntryCheck
	// TableEntry, if set, has the trampoline count the jump-table entry
	// its dispatch takes too (entrycount.go); only where the flags are
	// dead.
	TableEntry *EntryCount
}

// Options describe the code around a site.
type Options struct {
	// Target reports whether some branch may land at addr (a block
	// leader other than by fall-through, a function entry, a landing
	// pad). The site itself may be one.
	Target func(addr uint64) bool
	// End is the end of the function holding the site: a patch never
	// reaches past it.
	End uint64
	// Func, if set, is the code of the whole function, from FuncAddr: the
	// reading of the flags then follows jumps and both ways of a branch.
	Func     []byte
	FuncAddr uint64
}

// Plan decides whether the site at addr, whose code (from addr on) is
// code, can take a jump patch.
func Plan(code []byte, addr uint64, o Options) Site {
	var js Site
	off := 0
	for off < JmpLen {
		pc := addr + uint64(off)
		if off > 0 && o.Target != nil && o.Target(pc) {
			return Site{Reason: ReasonTarget}
		}
		if o.End != 0 && pc >= o.End {
			return Site{Reason: ReasonEnd}
		}
		form, n, err := relocate.Measure(code[off:], pc)
		if err != nil {
			return Site{Reason: ReasonUndecodable}
		}
		if form != relocate.FormCopy && off+n < JmpLen {
			// The trampoline runs the displaced instructions in order:
			// one that goes elsewhere must be the last.
			return Site{Reason: ReasonTransfer}
		}
		js.Insns = append(js.Insns, n)
		off += n
	}
	if o.End != 0 && addr+uint64(off) > o.End {
		return Site{Reason: ReasonEnd}
	}
	js.Len = off
	if o.Func != nil && addr >= o.FuncAddr && addr-o.FuncAddr < uint64(len(o.Func)) {
		js.FlagsDead = FlagsDead(o.Func, o.FuncAddr, addr, 3)
	} else {
		js.FlagsDead = FlagsDead(code, addr, addr, 0)
	}
	return js
}

// PlanRun decodes whole instructions from addr until at least n bytes, and
// returns them as a jump site: for a planned length, when they end at
// exactly n; for a short site (n = 2), as soon as they cover n. Every one
// must run out of line, only the last may transfer control, and none but
// the first may start where leader says a branch may land. Unlike Plan,
// it reads no flags: FlagsDead is the caller's.
func PlanRun(code []byte, addr uint64, n int, leader func(uint64) bool) (Site, bool) {
	var js Site
	off := 0
	for off < n {
		pc := addr + uint64(off)
		if off > 0 && leader(pc) {
			return Site{}, false
		}
		if off >= len(code) {
			return Site{}, false
		}
		form, k, err := relocate.Measure(code[off:], pc)
		if err != nil || (form != relocate.FormCopy && off+k < n) {
			return Site{}, false
		}
		js.Insns = append(js.Insns, k)
		off += k
	}
	js.Len = off
	return js, true
}

// Arithmetic flags (Intel SDM vol. 1, 3.4.3.1): bits of a set.
const (
	flagCF = 1 << iota
	flagPF
	flagAF
	flagZF
	flagSF
	flagOF
	flagsAll = flagCF | flagPF | flagAF | flagZF | flagSF | flagOF
)

// FlagsDead reports whether the arithmetic flags are dead at addr:
// reading fn (code from fnAddr) forward, every flag is written before any
// is read, or a call or a return comes first (the psABI preserves no flag
// across either). It follows a direct jump to its target and both ways of
// a conditional branch (each must find the flags dead), up to depth
// branches deep. An instruction it does not know, or an indirect branch,
// ends the reading with the answer "live".
func FlagsDead(fn []byte, fnAddr, addr uint64, depth int) bool {
	need := flagsAll
	for n := 0; n < 64; n++ {
		if addr < fnAddr || addr-fnAddr >= uint64(len(fn)) {
			return false
		}
		code := fn[addr-fnAddr:]
		if symtab.IsENDBR(code) {
			addr += 4 // a nop to the flags
			continue
		}
		inst, err := x86asm.Decode(code, 64)
		if err != nil {
			return false
		}
		next := addr + uint64(inst.Len)
		rel, isRel := inst.Args[0].(x86asm.Rel)
		switch {
		case inst.Op == x86asm.RET:
			return true
		case inst.Op == x86asm.JMP && isRel:
			addr = next + uint64(int64(rel))
			continue
		case isCond(inst.Op) && isRel:
			if condReads(inst.Op)&need != 0 || depth == 0 {
				return false
			}
			return FlagsDead(fn, fnAddr, next, depth-1) && FlagsDead(fn, fnAddr, next+uint64(int64(rel)), depth-1)
		}
		reads, writes, ok := flagEffect(inst)
		if !ok || reads&need != 0 {
			return false
		}
		if inst.Op == x86asm.CALL {
			return true
		}
		need &^= writes
		if need == 0 {
			return true
		}
		addr = next
	}
	return false
}

// isCond reports whether op is a conditional branch on the flags.
func isCond(op x86asm.Op) bool { return condReads(op) != 0 }

// condReads returns the flags a conditional branch reads (Intel SDM vol. 2,
// Jcc), 0 for any other instruction.
func condReads(op x86asm.Op) int {
	switch op {
	case x86asm.JO, x86asm.JNO:
		return flagOF
	case x86asm.JB, x86asm.JAE:
		return flagCF
	case x86asm.JE, x86asm.JNE:
		return flagZF
	case x86asm.JBE, x86asm.JA:
		return flagCF | flagZF
	case x86asm.JS, x86asm.JNS:
		return flagSF
	case x86asm.JP, x86asm.JNP:
		return flagPF
	case x86asm.JL, x86asm.JGE:
		return flagSF | flagOF
	case x86asm.JLE, x86asm.JG:
		return flagZF | flagSF | flagOF
	}
	return 0
}

// flagEffect returns the arithmetic flags an instruction reads and writes
// (undefined counts as written), and whether it is known. Control
// transfers other than call are not known: the reading stops there.
func flagEffect(inst x86asm.Inst) (reads, writes int, ok bool) {
	switch inst.Op {
	case x86asm.MOV, x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD, x86asm.LEA,
		x86asm.PUSH, x86asm.POP, x86asm.NOP, x86asm.XCHG, x86asm.CDQE, x86asm.CQO,
		x86asm.CDQ, x86asm.CWDE, x86asm.MOVSS, x86asm.MOVSD_XMM, x86asm.MOVAPS,
		x86asm.MOVAPD, x86asm.MOVUPS, x86asm.MOVUPD, x86asm.MOVQ, x86asm.MOVD,
		x86asm.MOVDQA, x86asm.MOVDQU, x86asm.PXOR, x86asm.CVTSI2SD, x86asm.CVTSI2SS,
		x86asm.CVTTSD2SI, x86asm.CVTTSS2SI, x86asm.NOT, x86asm.CALL, x86asm.LEAVE,
		x86asm.CVTSS2SD, x86asm.CVTSD2SS, x86asm.CWD, x86asm.CBW,
		// SSE arithmetic leaves RFLAGS alone (Intel SDM vol. 2, ADDSD,
		// MULSD, ...: "Flags Affected: None"): a floating-point loop's
		// body has the flags dead at its start, and counts in the target.
		x86asm.ADDSD, x86asm.SUBSD, x86asm.MULSD, x86asm.DIVSD, x86asm.SQRTSD,
		x86asm.MINSD, x86asm.MAXSD, x86asm.ADDSS, x86asm.SUBSS, x86asm.MULSS,
		x86asm.DIVSS, x86asm.SQRTSS, x86asm.MINSS, x86asm.MAXSS, x86asm.ADDPD,
		x86asm.SUBPD, x86asm.MULPD, x86asm.ADDPS, x86asm.SUBPS, x86asm.MULPS,
		x86asm.XORPD, x86asm.XORPS, x86asm.ANDPD, x86asm.ANDPS, x86asm.UNPCKLPD,
		// x87 arithmetic sets the FPU's own condition codes, not RFLAGS
		// (Intel SDM vol. 2: "EFLAGS: none" for FLD ... FDIVRP; only
		// FCOMI and FUCOMI write them, and stay unknown); BSWAP none.
		x86asm.FLD, x86asm.FILD, x86asm.FST, x86asm.FSTP, x86asm.FIST, x86asm.FISTP,
		x86asm.FISTTP, x86asm.FXCH, x86asm.FLDZ, x86asm.FLD1, x86asm.FADD, x86asm.FADDP,
		x86asm.FIADD, x86asm.FSUB, x86asm.FSUBP, x86asm.FSUBR, x86asm.FSUBRP, x86asm.FISUB,
		x86asm.FMUL, x86asm.FMULP, x86asm.FIMUL, x86asm.FDIV, x86asm.FDIVP, x86asm.FDIVR,
		x86asm.FDIVRP, x86asm.FIDIV, x86asm.FCHS, x86asm.FABS, x86asm.FNSTCW, x86asm.FLDCW,
		x86asm.BSWAP:
		return 0, 0, true
	case x86asm.ADD, x86asm.SUB, x86asm.CMP, x86asm.AND, x86asm.OR, x86asm.XOR,
		x86asm.TEST, x86asm.NEG, x86asm.IMUL, x86asm.MUL, x86asm.UCOMISD,
		x86asm.UCOMISS, x86asm.COMISD, x86asm.COMISS,
		// Atomic read-modify-writes set the flags as ADD and CMP do (Go's
		// atomic.Add is a LOCK XADD, its CompareAndSwap a LOCK CMPXCHG);
		// the others below leave some undefined, which is written too
		// (Intel SDM vol. 2: XADD, CMPXCHG, BSF, BSR, POPCNT, LZCNT,
		// TZCNT, DIV, IDIV).
		x86asm.XADD, x86asm.CMPXCHG, x86asm.BSF, x86asm.BSR, x86asm.POPCNT,
		x86asm.LZCNT, x86asm.TZCNT, x86asm.DIV, x86asm.IDIV:
		return 0, flagsAll, true
	case x86asm.BT, x86asm.BTS, x86asm.BTR, x86asm.BTC:
		// CF is the bit; OF, SF, AF and PF are undefined; ZF is unaffected.
		return 0, flagsAll &^ flagZF, true
	case x86asm.INC, x86asm.DEC:
		return 0, flagsAll &^ flagCF, true
	case x86asm.SHL, x86asm.SHR, x86asm.SAR:
		// A shift by 0 leaves the flags alone (Intel SDM vol. 2, SAL/SAR/
		// SHL/SHR): only a constant count (the one-operand form shifts
		// by 1) is known to write them.
		switch c := inst.Args[1].(type) {
		case nil:
			return 0, flagsAll, true
		case x86asm.Imm:
			if c&0x3f != 0 {
				return 0, flagsAll, true
			}
		}
		return 0, 0, false
	case x86asm.ADC, x86asm.SBB:
		return flagCF, flagsAll, true
	}
	return 0, 0, false
}
