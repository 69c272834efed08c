package breakpoint

import "golang.org/x/arch/x86/x86asm"

// goPrologueMax bounds the bytes goPrologueEnd needs: the longest prologue
// is an assembly function's g load in a PIE (11 bytes) followed by the
// huge-frame check (26 bytes with rel32 jumps).
const goPrologueMax = 40

// goPrologueEnd recognises the stack check the Go compiler (and the assembler,
// for assembly functions without NOSPLIT) puts at the start of every function
// that may grow its stack, in each form Go 1.26 emits for amd64
// (cmd/internal/obj/x86/obj6.go, stacksplit and loadG). R14 holds the
// current g; 16(R14) is g.stackguard0, 24(R14) g.stackguard1 (the guard of
// //go:systemstack functions). R12 is the scratch register.
//
//	CMPQ SP, 16(R14)                          frame <= StackSmall (128 bytes)
//	LEAQ -(frame-128)(SP), R12                frame <= StackBig (4096 bytes)
//	CMPQ R12, 16(R14)
//	MOVQ SP, R12                              larger frames: SP-frame may wrap
//	SUBQ $(frame-128), R12
//	JCS  morestack-call                       (the same target as the JLS)
//	CMPQ R12, 16(R14)
//	JLS  morestack-call                       all forms (JBE in Intel terms)
//
// ABI0 functions (assembly) do not receive g in R14 and load it first from
// thread-local storage (MOVQ FS:-8, R14; in a PIE MOVQ $-8, R14; MOVQ
// FS:(R14), R14). The morestack call jumps back to the function's first
// instruction, g load included, so all of it is re-executed when the stack
// grows. Go 1.26 no longer compares against StackPreempt in the prologue
// (older releases did for huge frames); those forms are not recognised and
// leave the entry at the function's address.
//
// It returns the offset of the instruction after the JLS and the JLS's target.
func goPrologueEnd(code []byte, addr uint64) (int, uint64, bool) {
	d := prologueDecoder{code: code}
	inst := d.next()
	if isGLoad(inst) {
		if m, ok := inst.Args[1].(x86asm.Mem); !ok || m.Segment != x86asm.FS {
			// MOVQ $-8, R14 (or the offset from the GOT): FS:(R14) must follow.
			inst = d.next()
			m, ok := inst.Args[1].(x86asm.Mem)
			if !isGLoad(inst) || !ok || m.Segment != x86asm.FS || m.Base != x86asm.R14 || m.Disp != 0 || m.Index != 0 {
				return 0, 0, false
			}
		}
		inst = d.next()
	}
	var scratch x86asm.Reg = x86asm.RSP // the register compared with the guard
	var carry uint64                    // the huge form's JCS target
	switch {
	case inst.Op == x86asm.LEA && isReg(inst.Args[0], x86asm.R12):
		m, ok := inst.Args[1].(x86asm.Mem)
		if !ok || m.Base != x86asm.RSP || m.Index != 0 || m.Disp > 0 {
			return 0, 0, false
		}
		scratch = x86asm.R12
		inst = d.next()
	case inst.Op == x86asm.MOV && isReg(inst.Args[0], x86asm.R12) && isReg(inst.Args[1], x86asm.RSP):
		inst = d.next()
		if _, ok := inst.Args[1].(x86asm.Imm); inst.Op != x86asm.SUB || !isReg(inst.Args[0], x86asm.R12) || !ok {
			return 0, 0, false
		}
		inst = d.next()
		if inst.Op != x86asm.JB {
			return 0, 0, false
		}
		carry = d.target(inst, addr)
		scratch = x86asm.R12
		inst = d.next()
	}
	if inst.Op != x86asm.CMP || !isReg(inst.Args[0], scratch) {
		return 0, 0, false
	}
	if m, ok := inst.Args[1].(x86asm.Mem); !ok || m.Segment != 0 || m.Base != x86asm.R14 || m.Index != 0 || (m.Disp != 16 && m.Disp != 24) {
		return 0, 0, false
	}
	inst = d.next()
	if inst.Op != x86asm.JBE {
		return 0, 0, false
	}
	target := d.target(inst, addr)
	if d.err || (carry != 0 && carry != target) {
		return 0, 0, false
	}
	return d.off, target, true
}

// A prologueDecoder decodes instructions one after the other with a sticky
// failure: once one does not decode, the rest read as the zero Inst (whose Op
// matches nothing goPrologueEnd looks for) and err stays set.
type prologueDecoder struct {
	code []byte
	off  int
	err  bool
}

func (d *prologueDecoder) next() x86asm.Inst {
	if d.err {
		return x86asm.Inst{}
	}
	inst, err := x86asm.Decode(d.code[d.off:], 64)
	if err != nil || inst.Len == 0 {
		d.err = true
		return x86asm.Inst{}
	}
	d.off += inst.Len
	return inst
}

// target is the destination of the relative jump inst, just decoded.
func (d *prologueDecoder) target(inst x86asm.Inst, addr uint64) uint64 {
	rel, ok := inst.Args[0].(x86asm.Rel)
	if !ok {
		d.err = true
		return 0
	}
	return uint64(int64(addr) + int64(d.off) + int64(rel))
}

// isGLoad reports whether inst is a 64-bit MOV into R14 from memory or an
// immediate: the first half of loadG's TLS access.
func isGLoad(inst x86asm.Inst) bool {
	if inst.Op != x86asm.MOV || !isReg(inst.Args[0], x86asm.R14) {
		return false
	}
	switch inst.Args[1].(type) {
	case x86asm.Mem:
		return true
	case x86asm.Imm:
		return true
	}
	return false
}

func isReg(a x86asm.Arg, r x86asm.Reg) bool {
	got, ok := a.(x86asm.Reg)
	return ok && got == r
}
