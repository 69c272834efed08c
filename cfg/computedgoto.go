package cfg

import (
	"encoding/binary"
	"slices"

	"github.com/patchprof/patchprof/symtab"

	"golang.org/x/arch/x86/x86asm"
)

// Computed gotos.
//
// GNU C's labels as values (`static void *disp[] = {&&op_add, ...}; goto
// *disp[op]`, or `void *p = &&l; goto *p`) compile to an indirect jump with
// no bound check: no jump table to recover. GCC gives such a jump every
// label whose address the function takes as a successor (its
// FORCED_LABELs; "Labels as Values", GCC manual 6.3), and so does Build:
// the targets of a computed goto are the function's own code addresses
// that are materialised as values, the taken set:
//
//   - lea of an address inside the function, RIP-relative or absolute
//     (PIE code, and -O0 code building a table on the stack);
//   - a 32- or 64-bit immediate inside the function (mov, push, cmp of
//     non-PIE code);
//   - an aligned 8-byte word of the executable's data whose value lies in
//     the function (a static table: R_X86_64_RELATIVE targets in a PIE,
//     plain words in a non-PIE executable), read through a PointerImage.
//
// The function's entry counts only when its own code takes it: data is
// full of pointers to functions, none of them a label.
//
// The set over-approximates the targets (an address taken for a
// comparison is one too): an edge never taken only costs the flow
// derivation an unknown. A missing target would make counts derived by
// flow conservation wrong, so a jump is taken as a computed goto only
// when its value provably is a taken address, on every path:
//
//   - a word loaded from a constant table whose word at the base is in
//     the taken set (`goto *disp[op]`), read at the jump or in a
//     predecessor the jump's register comes from (gcc -O0 funnels every
//     computed goto into one `jmp *%rax`);
//   - a constant in the taken set, through predecessors (gcc -O2 keeps
//     label addresses in registers);
//   - a variable (a load without an index: `goto *p` at -O0), only when
//     the function holds its stack frame at every indirect jump (a jump
//     then cannot be a tail call: see frameHeld) and every taken address
//     materialised in code is stored or compared as it is, never computed
//     with (`&&base + off[i]`, GCC's relative idiom, takes addresses the
//     binary never holds: see plainUses).
//
// Anything else keeps failing as before.

// A PointerImage is an Image that can list the code addresses its data
// holds. Build recovers computed gotos only through one (ELFImage is one).
type PointerImage interface {
	Image
	// CodePointers returns the sorted code addresses in [lo, hi) that
	// aligned 8-byte words of the data hold.
	CodePointers(lo, hi uint64) []uint64
}

// A taking is a place in the function's code that materialises one of its
// own addresses.
type taking struct {
	off   int        // the instruction's offset
	reg   x86asm.Reg // the register it writes the address into; 0 for a store to memory
	value uint64
}

// taken returns the function's taken set, sorted, and the instructions
// materialising its addresses. ok is false without a PointerImage: the
// set would miss static tables.
func (b *builder) taken() (set []uint64, takings []taking, ok bool) {
	pi, ok := b.o.Image.(PointerImage)
	if !ok {
		return nil, nil, false
	}
	code := b.o.Code
	for off := 0; off < len(code); off++ {
		if b.kind[off] == kNone {
			continue
		}
		inst, n, err := decodeInst(code[off:])
		if err != nil {
			continue
		}
		next := b.o.Addr + uint64(off+n)
		dst, _ := inst.Args[0].(x86asm.Reg)
		for _, a := range inst.Args {
			if a == nil {
				break
			}
			var v uint64
			switch a := a.(type) {
			case x86asm.Imm:
				v = uint64(a)
			case x86asm.Mem:
				if inst.Op != x86asm.LEA || a.Index != 0 {
					continue
				}
				switch a.Base {
				case x86asm.RIP:
					v = next + uint64(a.Disp)
				case 0:
					v = uint64(a.Disp)
				default:
					continue
				}
			default:
				continue
			}
			if _, in := b.inside(v); !in {
				if _, in = b.inside(v & 0xFFFFFFFF); !in {
					continue
				}
				v &= 0xFFFFFFFF // an imm32 into a 32-bit register
			}
			set = append(set, v)
			tk := taking{off: off, value: v}
			if inst.Op == x86asm.MOV || inst.Op == x86asm.LEA {
				tk.reg = dst
			}
			takings = append(takings, tk)
		}
	}
	for _, v := range pi.CodePointers(b.o.Addr, b.end) {
		if v != b.o.Addr {
			set = append(set, v)
		}
	}
	slices.Sort(set)
	return slices.Compact(set), takings, true
}

// Results of gotoValue, from weakest to strongest claim.
const (
	gvFail  = iota // not provably a taken address
	gvVar          // a variable: a taken address if the frame rule holds
	gvTaken        // a taken address
	gvCycle        // only a path back into a block being resolved
)

// gotoValue classifies v, the value of a jump target in block, as the
// comment at the top of this file describes; set is the taken set. seen
// holds the (block, register) pairs asked already.
func (b *builder) gotoValue(block int, v val, set []uint64, depth int, seen map[int]bool) int {
	switch {
	case v.k == vConst:
		if _, ok := slices.BinarySearch(set, v.c); ok {
			return gvTaken
		}
		return gvFail
	case v.k == vLoad:
		if v.size != 8 || v.c != 0 || v.signed || b.o.Image == nil {
			return gvFail
		}
		var w [8]byte
		if n, err := b.o.Image.ReadImage(v.base, w[:]); err != nil || n != 8 {
			return gvFail
		}
		if _, ok := slices.BinarySearch(set, binary.LittleEndian.Uint64(w[:])); ok {
			return gvTaken
		}
		return gvFail
	case v.k != vIndex || v.scale != 1 || v.bound != 0 || v.o.call || v.o.width != 0:
		return gvFail
	case v.o.isMem:
		if v.o.mem.Index == 0 {
			return gvVar
		}
		return gvFail
	case v.o.reg < 0 || block == 0:
		return gvFail // an argument is no label of this activation
	}
	// A block asked again for the same register is on a loop, or was
	// answered on another path already: either way it adds nothing.
	key := block<<4 | int(v.o.reg)
	if seen[key] {
		return gvCycle
	}
	if depth <= 0 {
		return gvFail
	}
	seen[key] = true
	preds := b.preds(block)
	if len(preds) == 0 {
		return gvFail
	}
	st := gvCycle
	for _, p := range preds {
		m := newMachine(b, p, depth-1)
		if !m.run(0) {
			return gvFail
		}
		st = min(st, b.gotoValue(p, m.regs[v.o.reg], set, depth-1, seen))
		if st == gvFail {
			return gvFail
		}
	}
	if st == gvCycle {
		return gvFail // no path from outside the loop says anything
	}
	return st
}

// A gotoReading is what one round knows of the function for reading its
// jumps as computed gotos: the taken set, the takings, and (computed when
// first needed) whether a variable's value is a taken address.
type gotoReading struct {
	set      []uint64
	takings  []taking
	varsRead bool
	varsOK   bool
}

// readGotos returns the round's reading, nil without a PointerImage.
func (b *builder) readGotos() *gotoReading {
	set, takings, ok := b.taken()
	if !ok {
		return nil
	}
	return &gotoReading{set: set, takings: takings}
}

// computedGoto returns the targets of an indirect jump in block whose
// target value is v, when it is a computed goto (see the top of this
// file), or false.
func (b *builder) computedGoto(r *gotoReading, block int, v val) ([]uint64, bool) {
	if r == nil || len(r.set) == 0 {
		return nil, false
	}
	switch b.gotoValue(block, v, r.set, searchDepth, map[int]bool{}) {
	case gvTaken:
		return r.set, true
	case gvVar:
		if !r.varsRead {
			r.varsOK = b.frameHeld() && b.plainUses(r.takings)
			r.varsRead = true
		}
		if r.varsOK {
			return r.set, true
		}
	}
	return nil, false
}

// takesLabels reports whether the function takes the address of code of
// its own other than its entry and the targets of its jump tables: a
// function that does not cannot jump to such an address (its indirect
// jumps through pointers are tail calls), one that does may.
func (b *builder) takesLabels(r *gotoReading) bool {
	if r == nil {
		return false
	}
	cases := map[uint64]bool{}
	for _, t := range b.table {
		if t != nil && !t.Computed {
			for _, a := range t.Targets {
				cases[a] = true
			}
		}
	}
	for _, a := range r.set {
		if !cases[a] {
			return true
		}
	}
	return false
}

// frameHeld reports whether the function's stack pointer stays below its
// value on entry at every indirect jump, so that none of them can be a
// tail call (a tail call must first release the frame and restore the
// callee-saved registers; psABI 3.2.2 and 3.2.1): the entry starts by
// pushing a register or reserving stack (gcc's prologue), and every
// instruction that moves the stack pointer up again (pop, leave, add or
// lea or mov to %rsp) runs on, through such instructions only, into a
// return.
func (b *builder) frameHeld() bool {
	code := b.o.Code
	first := 0
	if symtab.IsENDBR(code) {
		first = 4
	}
	inst, _, err := decodeInst(code[first:])
	if err != nil || !(inst.Op == x86asm.PUSH && isReg(inst.Args[0]) || inst.Op == x86asm.SUB && inst.Args[0] == x86asm.RSP) {
		return false
	}
	for off := 0; off < len(code); off++ {
		if b.kind[off] == kNone {
			continue
		}
		inst, _, err := decodeInst(code[off:])
		if err != nil {
			return false
		}
		if raisesSP(&inst) && !b.epilogue(off) {
			return false
		}
	}
	return true
}

// isReg reports whether a is a register operand.
func isReg(a x86asm.Arg) bool {
	_, ok := a.(x86asm.Reg)
	return ok
}

// raisesSP reports whether inst may move the stack pointer up (release
// stack) other than by returning.
func raisesSP(inst *x86asm.Inst) bool {
	switch inst.Op {
	case x86asm.POP, x86asm.POPF, x86asm.POPFQ, x86asm.LEAVE:
		return true
	case x86asm.PUSH, x86asm.CALL, x86asm.SUB, x86asm.AND:
		return false
	}
	r, ok := inst.Args[0].(x86asm.Reg)
	if !ok {
		return false
	}
	f, _, ok := regFamily(r)
	return ok && f == 4 // RSP
}

// epilogue reports whether the code from off runs straight, through
// instructions that release stack only, into a return.
func (b *builder) epilogue(off int) bool {
	code := b.o.Code
	for off < len(code) && b.kind[off] != kNone {
		inst, n, err := decodeInst(code[off:])
		if err != nil {
			return false
		}
		if b.kind[off] == kRet {
			return true
		}
		if !raisesSP(&inst) {
			return false
		}
		off += n
	}
	return false
}

// maxUseDistance bounds how many instructions after a taking plainUses
// looks for the use of the address.
const maxUseDistance = 8

// plainUses reports whether every address a taking leaves in a register
// is, before anything else reads it, stored to memory whole, compared, or
// jumped to: never added to or otherwise computed with, so that every
// value a variable can hold is a taken address as it was taken.
func (b *builder) plainUses(takings []taking) bool {
	code := b.o.Code
	for _, tk := range takings {
		if tk.reg == 0 {
			continue
		}
		fam, _, ok := regFamily(tk.reg)
		if !ok {
			return false
		}
		_, n, err := decodeInst(code[tk.off:])
		if err != nil {
			return false
		}
		off := tk.off + n
		used := false
		for k := 0; k < maxUseDistance && off < len(code) && b.kind[off] != kNone && !used; k++ {
			inst, n, err := decodeInst(code[off:])
			if err != nil {
				return false
			}
			switch use(&inst, fam) {
			case useNone:
			case usePlain, useOverwrite:
				used = true
			default:
				return false
			}
			if b.kind[off] != kPlain && !used {
				return false // the address lives on past a control transfer
			}
			off += n
		}
		if !used {
			return false
		}
	}
	return true
}

// What an instruction does with a register family (use).
const (
	useNone      = iota // does not touch it
	usePlain            // stores, compares or jumps to it as it is
	useOverwrite        // writes it without reading it
	useOther            // anything else
)

// use says what inst does with register family fam.
func use(inst *x86asm.Inst, fam int) int {
	mentions := func(a x86asm.Arg) bool {
		switch a := a.(type) {
		case x86asm.Reg:
			f, _, ok := regFamily(a)
			return ok && f == fam
		case x86asm.Mem:
			f1, _, ok1 := regFamily(a.Base)
			f2, _, ok2 := regFamily(a.Index)
			return ok1 && f1 == fam || ok2 && f2 == fam
		}
		return false
	}
	var args []x86asm.Arg
	for _, a := range inst.Args {
		if a == nil {
			break
		}
		args = append(args, a)
	}
	switch inst.Op {
	case x86asm.NOP:
		return useNone
	case x86asm.MOV, x86asm.LEA, x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD:
		if len(args) != 2 {
			return useOther
		}
		if mentions(args[1]) {
			r, ok := args[1].(x86asm.Reg)
			if _, store := args[0].(x86asm.Mem); inst.Op == x86asm.MOV && ok && store && !mentions(args[0]) && r >= x86asm.RAX && r <= x86asm.R15 {
				return usePlain
			}
			return useOther
		}
		if _, isMem := args[0].(x86asm.Mem); isMem {
			if mentions(args[0]) {
				return useOther
			}
			return useNone
		}
		if mentions(args[0]) {
			return useOverwrite
		}
		return useNone
	case x86asm.CMP, x86asm.TEST, x86asm.PUSH:
		for _, a := range args {
			if mentions(a) {
				return usePlain
			}
		}
		return useNone
	case x86asm.JMP:
		if len(args) == 1 && mentions(args[0]) {
			if _, ok := args[0].(x86asm.Reg); ok {
				return usePlain
			}
			return useOther
		}
		return useNone
	case x86asm.ADD, x86asm.SUB, x86asm.AND, x86asm.OR, x86asm.XOR, x86asm.MOVQ:
		if inst.Op == x86asm.XOR && len(args) == 2 && args[0] == args[1] && mentions(args[0]) {
			return useOverwrite
		}
		for _, a := range args {
			if mentions(a) {
				return useOther
			}
		}
		return useNone
	}
	return useOther // implicit operands unknown: assume the worst
}
