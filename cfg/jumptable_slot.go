package cfg

import (
	"golang.org/x/arch/x86/x86asm"
)

// A switch index in memory.
//
// gcc compares a switch's index where it lies, in memory, and reads it
// again in the jump's block: `switch (info->type)` at -O2 is
//
//	cmpl $4,0xd8(%r14); mov %rcx,0x20(%rsp); ...; ja dflt
//	mov 0xd8(%r14),%eax; lea T(%rip),%rdx; movslq (%rdx,%rax,4),%rax; ...
//
// with spills to the stack scheduled between the compare and the branch;
// at -O0 (`cmpl $N,-4(%rbp)`) the index is a local. The compare bounds the
// index only if nothing between it and the reading writes the slot: no
// instruction writes a register its address is made of, and every store
// provably lands elsewhere (keepsSlot).

// keepsSlot reports whether inst, ending at next, leaves the value of the
// compared operand a (a register, or a slot of size bytes in an
// instruction ending at aNext) as it was.
func (b *builder) keepsSlot(inst *x86asm.Inst, next uint64, a x86asm.Arg, aNext uint64, size int) bool {
	if inst.Op == x86asm.NOP {
		return true
	}
	switch d := inst.Args[0].(type) {
	case x86asm.Reg:
		f, _, ok := regFamily(d)
		if !ok {
			return false
		}
		switch a := a.(type) {
		case x86asm.Reg:
			fa, _, _ := regFamily(a)
			return f != fa
		case x86asm.Mem:
			return !usesFamily(a, f)
		}
		return false
	case x86asm.Mem:
		s, ok := a.(x86asm.Mem)
		if !ok {
			return true // a store leaves registers alone
		}
		return b.disjoint(d, next, inst.MemBytes, s, aNext, size)
	}
	return false
}

// usesFamily reports whether the address of m is made of register family
// f.
func usesFamily(m x86asm.Mem, f int) bool {
	for _, r := range []x86asm.Reg{m.Base, m.Index} {
		if g, _, ok := regFamily(r); ok && g == f {
			return true
		}
	}
	return false
}

// disjoint reports whether a store of sBytes to s (in an instruction
// ending at sNext) provably writes none of the cBytes of slot c (in one
// ending at cNext):
//
//   - both are addressed from the same register, or both absolute, with
//     no index, and their bytes do not overlap (-O0 locals off %rbp);
//   - the store is to the stack frame (%rsp with no index and no negative
//     offset: this activation's own frame or its incoming arguments), the
//     slot is not addressed from %rsp, and the function never makes a
//     value of its stack pointer (frameEscapes): a pointer into a frame
//     exists only if its own function forms one, so any other pointer
//     (an argument, a global, a field) addresses memory elsewhere.
func (b *builder) disjoint(s x86asm.Mem, sNext uint64, sBytes int, c x86asm.Mem, cNext uint64, cBytes int) bool {
	if sBytes <= 0 || cBytes <= 0 || s.Segment != 0 && s.Segment != x86asm.DS || c.Segment != 0 && c.Segment != x86asm.DS {
		return false
	}
	s, c = absolute(s, sNext), absolute(c, cNext)
	if s.Index == 0 && c.Index == 0 && s.Base == c.Base {
		return s.Disp+int64(sBytes) <= c.Disp || c.Disp+int64(cBytes) <= s.Disp
	}
	const rsp = 4
	return s.Base == x86asm.RSP && s.Index == 0 && s.Disp >= 0 && !usesFamily(c, rsp) && !b.frameEscapes()
}

// absolute returns m with a RIP-relative address made absolute.
func absolute(m x86asm.Mem, next uint64) x86asm.Mem {
	if m.Base == x86asm.RIP {
		m.Base, m.Disp = 0, int64(next+uint64(m.Disp))
	}
	return m
}

// frameEscapes reports whether any instruction of the function makes a
// value of its stack pointer: lea of a %rsp-relative address, %rsp as a
// source operand (mov %rsp,%rbp), or %rsp read by anything but an
// instruction that moves it. It is computed once per graph.
func (b *builder) frameEscapes() bool {
	if b.escapesOf == b.g && b.g != nil {
		return b.escapes
	}
	b.escapes, b.escapesOf = b.readsSP(), b.g
	return b.escapes
}

// readsSP is frameEscapes, uncached.
func (b *builder) readsSP() bool {
	code := b.o.Code
	for off := 0; off < len(code); off++ {
		if b.kind[off] == kNone {
			continue
		}
		inst, _, err := decodeInst(code[off:])
		if err != nil {
			return true
		}
		for i, a := range inst.Args {
			if a == nil {
				break
			}
			switch a := a.(type) {
			case x86asm.Mem:
				if inst.Op == x86asm.LEA && (usesFamily(a, 4)) {
					return true
				}
			case x86asm.Reg:
				if f, _, ok := regFamily(a); !ok || f != 4 {
					continue
				}
				if i > 0 || !movesSP(inst.Op) {
					return true
				}
			}
		}
	}
	return false
}

// movesSP reports whether op with %rsp as its first operand only moves
// the stack pointer (reserves, releases or aligns the frame).
func movesSP(op x86asm.Op) bool {
	switch op {
	case x86asm.SUB, x86asm.ADD, x86asm.AND, x86asm.MOV, x86asm.LEA:
		return true
	}
	return false
}

// slotKept reports whether the instructions of block before the jump at
// stop leave the slot m (of a compare ending at mNext) unchanged, for the
// jump block reading a switch index from memory: only moves, address
// arithmetic and sign extensions, none of them writing a register m is
// addressed from or a store that may land on it.
func (b *builder) slotKept(block int, stop uint64, m x86asm.Mem) bool {
	bl := &b.g.Blocks[block]
	for addr := bl.Start; addr < bl.End && addr != stop; {
		inst, n, err := decodeInst(b.o.Code[addr-b.o.Addr:])
		if err != nil {
			return false
		}
		next := addr + uint64(n)
		switch inst.Op {
		case x86asm.MOV, x86asm.LEA, x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD, x86asm.NOP, x86asm.ADD:
			if !b.keepsSlot(&inst, next, m, 0, 8) {
				return false
			}
		case x86asm.CDQE:
			if usesFamily(m, 0) {
				return false
			}
		default:
			return false
		}
		addr = next
	}
	return true
}
