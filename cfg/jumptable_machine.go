package cfg

import (
	"golang.org/x/arch/x86/x86asm"
)

// The symbolic machine: evaluates a block's instructions over values that
// are constants, opaque indices or table loads, enough to tell a jump
// table's base, entry size and index from the code that reads it.

// Kinds of symbolic values.
const (
	vTop   uint8 = iota // unknown
	vConst              // a known constant c
	vIndex              // an opaque value (origin), times scale
	vLoad               // an entry of the table at base, plus c
)

// An origin names where an opaque index came from: a register's value at
// the start of the block, or a memory slot (a local at -O0, a global).
type origin struct {
	call  bool  // the result of a call (in RAX)
	reg   int8  // register family 0..15, or -1
	width uint8 // 1 or 2 when the index is a zero-extended byte or word of reg (MOVZX); 0 for the whole register
	isMem bool
	mem   x86asm.Mem // normalised: RIP-relative becomes absolute in Disp
}

// A val is the symbolic value of a register (or of a load): its kind k
// says which of the other fields mean anything.
type val struct {
	k      uint8
	size   uint8 // vLoad: entry size, 4 or 8
	bound  int   // vIndex, vLoad: the index is below bound (from AND or MOVZX); 0 if unknown
	scale  uint8 // vIndex: multiplier
	signed bool  // vLoad: 4-byte entries sign-extended
	c      uint64
	base   uint64 // vLoad: table address
	o      origin
}

// regFamily returns the 64-bit register family (RAX=0 ... R15=15) of r,
// and its width in bytes.
func regFamily(r x86asm.Reg) (fam int, width int, ok bool) {
	switch {
	case r >= x86asm.RAX && r <= x86asm.R15:
		return int(r - x86asm.RAX), 8, true
	case r >= x86asm.EAX && r <= x86asm.R15L:
		return int(r - x86asm.EAX), 4, true
	case r >= x86asm.AX && r <= x86asm.R15W:
		return int(r - x86asm.AX), 2, true
	case r >= x86asm.AL && r <= x86asm.BL:
		return int(r - x86asm.AL), 1, true
	case r >= x86asm.AH && r <= x86asm.BH:
		return int(r - x86asm.AH), 1, true
	case r >= x86asm.SPB && r <= x86asm.R15B:
		return int(r-x86asm.SPB) + 4, 1, true
	}
	return 0, 0, false
}

// Registers a call may clobber (System V AMD64 ABI 3.2.1; Go's ABIInternal
// clobbers all of them, which clobbers these too).
var callerSaved = [...]int{0, 1, 2, 6, 7, 8, 9, 10, 11}

// machine is the symbolic state of the registers in one block.
type machine struct {
	b     *builder
	block int
	regs  [16]val
	depth int
}

// newMachine starts block with every register holding its own value on
// entry, an opaque index named after it; depth bounds how far the
// searches that start from it look into predecessors, and at 0 constant
// asks for no register's constant on entry (the machine then computes
// what constant propagation itself is built from).
func newMachine(b *builder, block, depth int) *machine {
	m := &machine{b: b, block: block, depth: depth}
	for i := range m.regs {
		m.regs[i] = val{k: vIndex, scale: 1, o: origin{reg: int8(i)}}
	}
	return m
}

// get returns the value of r; a byte or word register is unknown, as the
// machine tracks only whole 32- and 64-bit values.
func (m *machine) get(r x86asm.Reg) val {
	f, w, ok := regFamily(r)
	if !ok || w < 4 {
		return val{}
	}
	v := m.regs[f]
	if w == 4 && v.k == vConst {
		v.c &= 0xFFFFFFFF
	}
	return v
}

// set gives r the value v, with the CPU's rules for partial writes.
func (m *machine) set(r x86asm.Reg, v val) {
	f, w, ok := regFamily(r)
	if !ok {
		return
	}
	if w < 4 {
		v = val{} // a partial write leaves the rest of the register
	}
	if w == 4 && v.k == vConst {
		v.c &= 0xFFFFFFFF // a 32-bit write zero-extends (Intel SDM vol. 1, 3.4.1.1)
	}
	if w == 4 && v.k == vIndex && v.scale == 1 && !v.o.isMem && v.o.reg >= 0 && v.o.width == 0 {
		v.o.width = 4 // the low half of a register's value on entry, not all of it
	}
	m.regs[f] = v
}

// constant resolves v to a constant, a register's value on entry to the
// block from constant propagation (constAtEntry).
func (m *machine) constant(v val) (uint64, bool) {
	switch {
	case v.k == vConst:
		return v.c, true
	case v.k == vIndex && v.scale == 1 && !v.o.isMem && v.o.reg >= 0 && v.o.width == 0 && m.depth > 0:
		return m.b.constAtEntry(m.block, int(v.o.reg))
	}
	return 0, false
}

// load evaluates a load of size bytes from mem (in an instruction ending
// at next): a table entry when mem is a constant table address plus an
// index scaled by the entry size, an opaque index when mem is a plain
// variable.
func (m *machine) load(mem x86asm.Mem, next uint64, size int, signed bool) val {
	if mem.Segment != 0 && mem.Segment != x86asm.DS {
		return val{} // FS/GS: thread-local, never a table
	}
	if mem.Index == 0 {
		// A non-indexed load: a local variable (-O0), a struct field or
		// a global. It may be the switch index.
		if mem.Base == x86asm.RIP {
			mem.Base, mem.Disp = 0, int64(next+uint64(mem.Disp))
		}
		return val{k: vIndex, scale: 1, o: origin{reg: -1, isMem: true, mem: mem}}
	}
	// A word of an array that is no table of this jump's (a field of an
	// array of structs, or an entry at an index the machine cannot
	// follow): what it holds is data, a function pointer when jumped to
	// (an operator table's handler, called as a tail call). The stack is
	// left out: return addresses are words of it.
	word := val{}
	if f, _, ok := regFamily(mem.Base); size == 8 && !(ok && f == 4) {
		word = val{k: vIndex, scale: 1, o: origin{reg: -1, isMem: true, mem: absolute(mem, next)}}
	}
	var base uint64
	var idx val
	haveIdx := false
	switch {
	case mem.Base == x86asm.RIP:
		base = next
	case mem.Base != 0:
		bv := m.get(mem.Base)
		if bv.k == vIndex && bv.scale > 1 && mem.Scale == 1 {
			// (%base,%index,1) with the base the scaled index and the
			// index the table address (gcc -O0 PIE).
			idx, haveIdx = bv, true
		} else if c, ok := m.constant(bv); ok {
			base = c
		} else {
			return word
		}
	}
	base += uint64(mem.Disp)
	iv := m.get(mem.Index)
	scale := mem.Scale
	if haveIdx {
		c, ok := m.constant(iv)
		if !ok {
			return word
		}
		base += c
		iv = idx
	}
	if iv.k == vIndex && iv.scale > 1 && scale == 1 {
		scale, iv.scale = iv.scale, 1
	}
	if iv.k != vIndex || iv.scale != 1 || int(scale) != size || (size != 4 && size != 8) {
		return word
	}
	return val{k: vLoad, size: uint8(size), signed: signed, base: base, o: iv.o, bound: iv.bound}
}

// maxEvals bounds the instructions the machine evaluates to read one
// jump: the search through predecessors can branch at every block, and the
// dense graphs of computed gotos (every label a successor of every
// dispatch) would make it exponential. Past the bound the jump is not
// read, never read wrong.
const maxEvals = 1 << 16

// run evaluates block from its start up to (not including) stop, or to
// its end when stop is 0.
func (m *machine) run(stop uint64) bool {
	bl := &m.b.g.Blocks[m.block]
	code := m.b.o.Code
	for addr := bl.Start; addr < bl.End && addr != stop; {
		if m.b.evals++; m.b.evals > maxEvals {
			return false
		}
		off := addr - m.b.o.Addr
		inst, n, err := decodeInst(code[off:])
		if err != nil {
			return false
		}
		m.step(&inst, addr)
		addr += uint64(n)
	}
	return true
}
