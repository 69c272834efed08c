package cfg

import (
	"golang.org/x/arch/x86/x86asm"
)

// Each instruction is evaluated only as far as jump-table recovery needs:
// constants (table addresses), opaque indices and their scaling, and table
// loads. Everything else leaves the registers it writes unknown, so an
// instruction not modelled here can make recovery fail, never make it wrong.

// step applies one instruction to the state.
func (m *machine) step(inst *x86asm.Inst, addr uint64) {
	next := addr + uint64(inst.Len)
	a0, _ := inst.Args[0].(x86asm.Reg)
	switch inst.Op {
	case x86asm.NOP, x86asm.CMP, x86asm.TEST, x86asm.BT, x86asm.PUSH, x86asm.JMP,
		x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JNE,
		x86asm.JG, x86asm.JGE, x86asm.JL, x86asm.JLE, x86asm.JS, x86asm.JNS,
		x86asm.JO, x86asm.JNO, x86asm.JP, x86asm.JNP,
		x86asm.UCOMISS, x86asm.UCOMISD, x86asm.COMISS, x86asm.COMISD, x86asm.PREFETCHT0:
		return
	case x86asm.CALL:
		m.call(inst, next)
		return
	case x86asm.MOV:
		m.stepMov(inst, a0, next)
		return
	case x86asm.MOVSXD, x86asm.MOVZX:
		m.stepExtend(inst, a0, next)
		return
	case x86asm.CDQE:
		m.stepCDQE()
		return
	case x86asm.LEA:
		if m.stepLea(inst, a0, next) {
			return
		}
	case x86asm.ADD:
		m.stepAdd(inst, a0)
		return
	case x86asm.AND:
		if m.stepAnd(inst, a0) {
			return
		}
	case x86asm.XOR, x86asm.SUB:
		if r1, ok := inst.Args[1].(x86asm.Reg); ok && r1 == a0 && a0 != 0 {
			m.set(a0, val{k: vConst}) // xor %r,%r and sub %r,%r zero it
			return
		}
	case x86asm.MUL, x86asm.DIV, x86asm.IDIV, x86asm.CQO, x86asm.CDQ, x86asm.CWD,
		x86asm.CPUID, x86asm.RDTSC, x86asm.RDTSCP, x86asm.SYSCALL, x86asm.CMPXCHG,
		x86asm.CMPXCHG8B, x86asm.CMPXCHG16B, x86asm.XCHG, x86asm.XADD,
		x86asm.LODSB, x86asm.LODSW, x86asm.LODSD, x86asm.LODSQ,
		x86asm.STOSB, x86asm.STOSW, x86asm.STOSD, x86asm.STOSQ,
		x86asm.MOVSB, x86asm.MOVSW, x86asm.MOVSD, x86asm.MOVSQ,
		x86asm.SCASB, x86asm.SCASW, x86asm.SCASD, x86asm.SCASQ,
		x86asm.CMPSB, x86asm.CMPSW, x86asm.CMPSD, x86asm.CMPSQ,
		x86asm.RDRAND, x86asm.XGETBV, x86asm.IMUL:
		// Instructions with implicit register results: their operands
		// do not name every register they write (only the two- and
		// three-operand IMUL forms do).
		if inst.Op != x86asm.IMUL || inst.Args[1] == nil {
			for i := range m.regs {
				m.regs[i] = val{}
			}
			return
		}
	}
	// Anything else: whatever register it names may have changed.
	for _, a := range inst.Args {
		if r, ok := a.(x86asm.Reg); ok {
			m.set(r, val{})
		}
	}
}

// call forgets the registers call inst (next is the address after it) may
// clobber, and makes RAX an opaque value the call returned, which
// isPointer accepts as a function pointer (a tail call through what a
// function returned). A direct call clobbers the caller-saved registers
// Options.CalleeWrites says its callee may write; any other call, all of
// them.
func (m *machine) call(inst *x86asm.Inst, next uint64) {
	w := AllRegs
	if rel, ok := inst.Args[0].(x86asm.Rel); ok && m.b.o.CalleeWrites != nil {
		w = m.b.o.CalleeWrites(uint64(int64(next) + int64(rel)))
	}
	for _, f := range callerSaved {
		if w&(1<<f) != 0 {
			m.regs[f] = val{}
		}
	}
	m.regs[0] = val{k: vIndex, scale: 1, o: origin{reg: -1, call: true}}
}

// stepMov evaluates mov into register a0 (a store, a0 == 0, changes no
// register). A load may be a table entry or the index variable; a 64-bit
// entry copied through a 32-bit register is truncated, so no longer an
// address.
func (m *machine) stepMov(inst *x86asm.Inst, a0 x86asm.Reg, next uint64) {
	if a0 == 0 {
		return // a store
	}
	switch src := inst.Args[1].(type) {
	case x86asm.Imm:
		m.set(a0, val{k: vConst, c: uint64(int64(src))})
	case x86asm.Reg:
		v := m.get(src)
		if _, w, _ := regFamily(a0); w == 4 && v.k == vLoad && v.size == 8 {
			v = val{} // truncated
		}
		m.set(a0, v)
	case x86asm.Mem:
		_, w, _ := regFamily(a0)
		m.set(a0, m.load(src, next, w, false))
	default:
		m.set(a0, val{})
	}
}

// stepExtend evaluates movsxd and movzx into a0. movsxd of a 4-byte table
// entry is what makes a relative table's entries signed offsets (gcc
// -fpie); movzx of a byte or word gives an index narrower than its
// register, which the bound check then compares at that width.
func (m *machine) stepExtend(inst *x86asm.Inst, a0 x86asm.Reg, next uint64) {
	switch src := inst.Args[1].(type) {
	case x86asm.Mem:
		if inst.Op == x86asm.MOVSXD {
			m.set(a0, m.load(src, next, 4, true))
		} else {
			m.set(a0, val{k: vIndex, scale: 1, o: origin{reg: -1, isMem: true, width: uint8(inst.MemBytes), mem: src}})
		}
	case x86asm.Reg:
		v := m.get(src)
		if f, w, _ := regFamily(src); inst.Op == x86asm.MOVZX && w < 4 {
			// A byte or word zero-extended: the index is that part of
			// the register (gcc: cmp $N,%r9b; ja; movzbl %r9b,%r9d).
			v = val{}
			r := m.regs[f]
			switch {
			case r.k == vIndex && !r.o.isMem && r.o.reg == int8(f) && (r.o.width == 0 || r.o.width == 4):
				v = val{k: vIndex, scale: 1, o: origin{reg: int8(f), width: uint8(w)}}
			case r.k == vIndex && r.scale == 1 && r.o.width != 0 && int(r.o.width) <= w:
				// Already a zero-extended byte or word (gcc -O0:
				// movzbl (%rax),%eax; movzbl %al,%eax): unchanged.
				v = r
			}
		} else if inst.Op == x86asm.MOVSXD && v.k == vLoad && v.size == 4 {
			v.signed = true
		} else if v.k == vLoad || v.k == vConst {
			v = val{}
		}
		m.set(a0, v)
	default:
		m.set(a0, val{})
	}
}

// stepCDQE evaluates cltq (sign-extend EAX into RAX), which gcc -O0 uses
// instead of movslq to sign-extend a relative table's entry.
func (m *machine) stepCDQE() {
	if v := m.regs[0]; v.k == vLoad && v.size == 4 {
		v.signed = true
		m.regs[0] = v
	} else if v.k != vIndex {
		m.regs[0] = val{}
	}
}

// stepLea evaluates lea into a0: a RIP-relative or absolute address is a
// constant (a table's base), and lea 0(,%idx,s) scales an index (gcc -O0
// PIE). It reports false when the form is not one of these registers, for
// step to forget whatever registers it names.
func (m *machine) stepLea(inst *x86asm.Inst, a0 x86asm.Reg, next uint64) bool {
	mem, ok := inst.Args[1].(x86asm.Mem)
	if !ok || a0 == 0 {
		return false
	}
	switch {
	case mem.Base == x86asm.RIP && mem.Index == 0:
		m.set(a0, val{k: vConst, c: next + uint64(mem.Disp)})
	case mem.Base == 0 && mem.Index != 0 && mem.Disp == 0:
		if v := m.get(mem.Index); v.k == vIndex && v.scale == 1 {
			v.scale = mem.Scale
			m.set(a0, v)
		} else {
			m.set(a0, val{})
		}
	case mem.Base == 0 && mem.Index == 0:
		m.set(a0, val{k: vConst, c: uint64(mem.Disp)})
	default:
		m.set(a0, val{})
	}
	return true
}

// stepAdd evaluates add into a0: constants fold, and a signed or 8-byte
// table entry plus the table's base (in either operand order) is the jump
// target of a relative table.
func (m *machine) stepAdd(inst *x86asm.Inst, a0 x86asm.Reg) {
	if a0 == 0 {
		return
	}
	x := m.get(a0)
	var y val
	switch src := inst.Args[1].(type) {
	case x86asm.Imm:
		y = val{k: vConst, c: uint64(int64(src))}
	case x86asm.Reg:
		y = m.get(src)
	}
	if x.k == vConst && y.k != vConst {
		x, y = y, x
	}
	switch {
	case x.k == vConst && y.k == vConst:
		m.set(a0, val{k: vConst, c: x.c + y.c})
	case x.k == vLoad && (x.signed || x.size == 8):
		if c, ok := m.constant(y); ok {
			x.c += c
			m.set(a0, x)
			return
		}
		m.set(a0, val{})
	case x.k == vIndex && x.scale == 1 && !x.o.isMem && y.k == vLoad && (y.signed || y.size == 8):
		// add %rdx,%rax with %rax the entry and %rdx the base
		// written in the other order.
		if c, ok := m.constant(x); ok {
			y.c += c
			m.set(a0, y)
			return
		}
		m.set(a0, val{})
	default:
		m.set(a0, val{})
	}
}

// stepAnd evaluates and $mask,%reg, which bounds an index: a type switch on
// a masked kind (Go's reflect.Kind switches). It reports false for any
// other and, for step to forget the registers it names.
func (m *machine) stepAnd(inst *x86asm.Inst, a0 x86asm.Reg) bool {
	if imm, ok := inst.Args[1].(x86asm.Imm); ok && a0 != 0 && imm >= 0 && imm < maxTableEntries {
		if _, w, _ := regFamily(a0); w >= 4 {
			m.set(a0, val{k: vIndex, scale: 1, bound: int(imm) + 1, o: origin{reg: -1}})
			return true
		}
	}
	return false
}
