package cfg

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/arch/x86/x86asm"
)

// Jump tables.
//
// Compilers emit a dense switch as a bound check on the index followed by
// an indirect jump through a table of targets [Larus and Ball 1994, 3.2
// and 3.4]. The x86-64 forms patchprof recognises:
//
//	gcc -fno-pie:        cmp $N,%eax; ja dflt; mov %eax,%eax; jmp *T(,%rax,8)
//	gcc -O0 -fno-pie:    cmpl $N,-4(%rbp); ja dflt; mov -4(%rbp),%eax; mov T(,%rax,8),%rax; jmp *%rax
//	gcc -fpie (-O2):     cmp $N,%edi; ja dflt; lea T(%rip),%rdx; movslq (%rdx,%rdi,4),%rax; add %rdx,%rax; jmp *%rax
//	gcc -fpie (-O0):     ...; lea 0(,%rax,4),%rdx; lea T(%rip),%rax; mov (%rdx,%rax,1),%eax; cltq; lea T(%rip),%rdx; add %rdx,%rax; jmp *%rax
//	Go 1.19+:            CMPQ AX,$N; JHI dflt; LEAQ T(SB),CX; JMP (CX)(AX*8)
//
// The block holding the jump is evaluated symbolically from its start
// (values a register holds on entry are looked up in the predecessors when
// a constant is needed: gcc hoists the table address out of loops), which
// gives the table base, entry size and sign and the index's origin. The
// bound comes from the predecessors: each must end with an unsigned
// compare of that origin with an immediate and a branch to the default
// (ja, jae) or to the jump block (jbe, jb). Anything else is not guessed
// at: the function is not recoverable.

// searchDepth bounds how many predecessors deep a register's value on
// entry to a block is looked for (gcc hoists a table's address out of
// loops and above the bound check).
const searchDepth = 16

// maxTableEntries bounds a table, against reading megabytes on a wild
// compare.
const maxTableEntries = 1 << 16

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

func newMachine(b *builder, block, depth int) *machine {
	m := &machine{b: b, block: block, depth: depth}
	for i := range m.regs {
		m.regs[i] = val{k: vIndex, scale: 1, o: origin{reg: int8(i)}}
	}
	return m
}

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
	m.regs[f] = v
}

// constant resolves v to a constant, looking into predecessors for a
// register's value on entry to the block.
func (m *machine) constant(v val) (uint64, bool) {
	switch {
	case v.k == vConst:
		return v.c, true
	case v.k == vIndex && v.scale == 1 && !v.o.isMem && v.o.reg >= 0:
		return m.b.constAtEntry(m.block, int(v.o.reg), m.depth, map[int]bool{})
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
			return val{}
		}
	}
	base += uint64(mem.Disp)
	iv := m.get(mem.Index)
	scale := mem.Scale
	if haveIdx {
		c, ok := m.constant(iv)
		if !ok {
			return val{}
		}
		base += c
		iv = idx
	}
	if iv.k == vIndex && iv.scale > 1 && scale == 1 {
		scale, iv.scale = iv.scale, 1
	}
	if iv.k != vIndex || iv.scale != 1 || int(scale) != size || (size != 4 && size != 8) {
		return val{}
	}
	return val{k: vLoad, size: uint8(size), signed: signed, base: base, o: iv.o, bound: iv.bound}
}

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
		for _, f := range callerSaved {
			m.regs[f] = val{}
		}
		m.regs[0] = val{k: vIndex, scale: 1, o: origin{reg: -1, call: true}}
		return
	case x86asm.MOV:
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
		return
	case x86asm.MOVSXD, x86asm.MOVZX:
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
				if m.regs[f].k == vIndex && !m.regs[f].o.isMem && m.regs[f].o.reg == int8(f) && m.regs[f].o.width == 0 {
					v = val{k: vIndex, scale: 1, o: origin{reg: int8(f), width: uint8(w)}}
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
		return
	case x86asm.CDQE:
		if v := m.regs[0]; v.k == vLoad && v.size == 4 {
			v.signed = true
			m.regs[0] = v
		} else if v.k != vIndex {
			m.regs[0] = val{}
		}
		return
	case x86asm.LEA:
		mem, ok := inst.Args[1].(x86asm.Mem)
		if !ok || a0 == 0 {
			break
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
		return
	case x86asm.ADD:
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
		return
	case x86asm.AND:
		// and $mask,%reg bounds an index: a type switch on a masked
		// kind (Go's reflect.Kind switches).
		if imm, ok := inst.Args[1].(x86asm.Imm); ok && a0 != 0 && imm >= 0 && imm < maxTableEntries {
			if _, w, _ := regFamily(a0); w >= 4 {
				m.set(a0, val{k: vIndex, scale: 1, bound: int(imm) + 1, o: origin{reg: -1}})
				return
			}
		}
	case x86asm.XOR, x86asm.SUB:
		if r1, ok := inst.Args[1].(x86asm.Reg); ok && r1 == a0 && a0 != 0 {
			m.set(a0, val{k: vConst})
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
		// Instructions with implicit register results.
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

// run evaluates block from its start up to (not including) stop, or to
// its end when stop is 0.
func (m *machine) run(stop uint64) bool {
	bl := &m.b.g.Blocks[m.block]
	code := m.b.o.Code
	for addr := bl.Start; addr < bl.End && addr != stop; {
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

// preds returns the blocks with an edge to block i. The lists are built
// once per graph.
func (b *builder) preds(i int) []int {
	if b.predOf != b.g {
		nb := len(b.g.Blocks)
		b.predStart = make([]int32, nb+1)
		for _, e := range b.g.Edges {
			if e.To >= 0 {
				b.predStart[e.To+1]++
			}
		}
		for j := 0; j < nb; j++ {
			b.predStart[j+1] += b.predStart[j]
		}
		b.predList = make([]int, b.predStart[nb])
		fill := make([]int32, nb)
		for _, e := range b.g.Edges {
			if e.To >= 0 {
				b.predList[b.predStart[e.To]+fill[e.To]] = e.From
				fill[e.To]++
			}
		}
		b.predOf = b.g
	}
	return b.predList[b.predStart[i]:b.predStart[i+1]]
}

// Results of constAtEntry.
const (
	stUnknown = iota // not a constant, or not found within the depth
	stConst          // the constant
	stCycle          // only a path back into a block being resolved: agrees with anything
)

// constAtEntry returns the constant register reg holds on entry to block,
// when every predecessor leaves the same constant in it (a loop that does
// not write the register agrees with its preheader).
func (b *builder) constAtEntry(block, reg, depth int, seen map[int]bool) (uint64, bool) {
	c, st := b.entryConst(block, reg, depth, seen)
	return c, st == stConst
}

func (b *builder) entryConst(block, reg, depth int, seen map[int]bool) (uint64, int) {
	if seen[block] {
		return 0, stCycle
	}
	if depth <= 0 {
		return 0, stUnknown
	}
	seen[block] = true
	preds := b.preds(block)
	var c uint64
	st := stCycle
	if len(preds) == 0 {
		return 0, stUnknown
	}
	for _, p := range preds {
		m := newMachine(b, p, depth-1)
		if !m.run(0) {
			return 0, stUnknown
		}
		v := m.regs[reg]
		var pc uint64
		pst := stUnknown
		switch {
		case v.k == vConst:
			pc, pst = v.c, stConst
		case v.k == vIndex && v.scale == 1 && !v.o.isMem && int(v.o.reg) == reg:
			pc, pst = b.entryConst(p, reg, depth-1, seen)
		}
		switch {
		case pst == stUnknown:
			return 0, stUnknown
		case pst == stConst && st == stConst && pc != c:
			return 0, stUnknown
		case pst == stConst:
			c, st = pc, stConst
		}
	}
	return c, st
}

// resolveTables tries to recover the table of every indirect jump not yet
// resolved. grew reports a new table (whose targets are queued).
func (b *builder) resolveTables() (grew bool, err error) {
	if b.table == nil {
		b.table = map[uint32]*Table{}
		b.tail = map[uint32]bool{}
	}
	var firstErr *Error
	for _, off := range b.inds {
		if b.table[off] != nil || b.tail[off] {
			continue
		}
		t, tail, e := b.recoverTable(off)
		if e != nil {
			if firstErr == nil {
				firstErr = e
			}
			continue
		}
		if tail {
			b.tail[off] = true
			grew = true
			continue
		}
		b.table[off] = t
		grew = true
		for _, target := range t.Targets {
			if o, ok := b.inside(target); ok {
				b.flag[o] |= fLeader
				b.queue(o)
				b.jumps = append(b.jumps, branch{off: off, target: target})
			}
		}
	}
	if !grew && firstErr != nil {
		return false, firstErr
	}
	return grew, nil
}

// recoverTable finds the table of the indirect jump at off, or reports it
// as a tail call through memory.
func (b *builder) recoverTable(off uint32) (t *Table, tail bool, e *Error) {
	addr := b.o.Addr + uint64(off)
	fail := func(format string, args ...any) (*Table, bool, *Error) {
		return nil, false, &Error{Func: b.o.Name, Addr: addr, Err: ErrJumpTable, Detail: fmt.Sprintf(format, args...)}
	}
	inst, _, err := decodeInst(b.o.Code[off:])
	if err != nil {
		return fail("%v", err)
	}
	if mem, ok := inst.Args[0].(x86asm.Mem); ok && mem.Base == x86asm.RIP && mem.Index == 0 {
		// jmp *p(%rip): a tail call through a pointer (the GOT of
		// -fno-plt code, a function pointer variable).
		return nil, true, nil
	}
	block, ok := b.g.BlockAt(addr)
	if !ok {
		return fail("jump outside every block")
	}
	m := newMachine(b, block, searchDepth)
	if !m.run(addr) {
		return fail("cannot evaluate its block")
	}
	var v val
	switch a := inst.Args[0].(type) {
	case x86asm.Reg:
		v = m.get(a)
	case x86asm.Mem:
		v = m.load(a, addr+uint64(inst.Len), 8, false)
	}
	if v.k != vLoad {
		if b.isPointer(block, v, searchDepth, map[int]bool{}) == stConst {
			// A jump through a function pointer: loaded from one memory
			// word (no index), or passed in. Not a switch: a tail call.
			return nil, true, nil
		}
		return fail("target is neither a table entry nor a function pointer (a computed goto?)")
	}
	if v.size == 4 && !v.signed {
		return fail("4-byte table entries that are not sign-extended")
	}
	if v.size == 4 && v.c == 0 {
		return fail("relative table entries not added to a base")
	}
	n, ok := b.bound(block, v.o)
	if v.bound > 0 && (!ok || v.bound < n) {
		n, ok = v.bound, true
	}
	if !ok {
		return fail("no bound check on the index of the table at %#x", v.base)
	}
	if n <= 0 || n > maxTableEntries {
		return fail("table at %#x bound %d out of range", v.base, n)
	}
	if b.o.Image == nil {
		return fail("no image to read the table at %#x from", v.base)
	}
	buf := make([]byte, n*int(v.size))
	if got, err := b.o.Image.ReadImage(v.base, buf); err != nil || got != len(buf) {
		return fail("cannot read the %d-entry table at %#x: %v", n, v.base, err)
	}
	t = &Table{Jump: addr, Base: v.base, EntrySize: int(v.size), Relative: v.size == 4, Targets: make([]uint64, n)}
	for i := range t.Targets {
		var target uint64
		if v.size == 8 {
			target = binary.LittleEndian.Uint64(buf[8*i:]) + v.c
		} else {
			target = uint64(int64(int32(binary.LittleEndian.Uint32(buf[4*i:])))) + v.c
		}
		if _, ok := b.inside(target); !ok && !isCode(b.o.Image, target) {
			return fail("entry %d of the table at %#x points outside the function and outside the code, to %#x", i, v.base, target)
		}
		t.Targets[i] = target
	}
	return t, false, nil
}

// isPointer tells whether v, a jump target in block, is a function
// pointer rather than a computed address: a constant, a word loaded from
// memory without an index, or a register the function received. It
// returns stConst for yes, stCycle for a loop that agrees with anything,
// stUnknown for no.
func (b *builder) isPointer(block int, v val, depth int, seen map[int]bool) int {
	switch {
	case v.k == vConst:
		return stConst
	case v.k != vIndex || v.scale != 1 || v.bound != 0:
		return stUnknown
	case v.o.call:
		return stConst // a function returned it
	case v.o.isMem:
		if v.o.mem.Index == 0 {
			return stConst
		}
		return stUnknown
	case v.o.reg < 0:
		return stUnknown
	case block == 0:
		return stConst // an argument
	}
	if seen[block] {
		return stCycle
	}
	if depth <= 0 {
		return stUnknown
	}
	seen[block] = true
	preds := b.preds(block)
	if len(preds) == 0 {
		return stUnknown
	}
	st := stCycle
	for _, p := range preds {
		m := newMachine(b, p, depth-1)
		if !m.run(0) {
			return stUnknown
		}
		switch b.isPointer(p, m.regs[v.o.reg], depth-1, seen) {
		case stUnknown:
			return stUnknown
		case stConst:
			st = stConst
		}
	}
	return st
}

// isCode reports whether addr is in the executable code of im, when im
// can tell (a CodeImage); a table entry outside the function must be, as
// gcc sends cold cases to the split-off foo.cold part.
func isCode(im Image, addr uint64) bool {
	ci, ok := im.(CodeImage)
	return ok && ci.IsCode(addr)
}

// bound returns the number of table entries the predecessors of block
// allow for an index from o: every predecessor must end in an unsigned
// compare of o with an immediate and a branch that leaves for the default
// when the index is out of range.
func (b *builder) bound(block int, o origin) (int, bool) {
	preds := b.preds(block)
	if len(preds) == 0 {
		return 0, false
	}
	start := b.g.Blocks[block].Start
	n := 0
	for _, p := range preds {
		pn, ok := b.predBound(p, start, o)
		if !ok {
			return 0, false
		}
		n = max(n, pn)
	}
	return n, true
}

func (b *builder) predBound(p int, start uint64, o origin) (int, bool) {
	bl := &b.g.Blocks[p]
	code := b.o.Code
	// Decode the block, remembering the last compare and what the
	// instructions after it write.
	var cmp x86asm.Inst
	var cmpAddr uint64
	haveCmp := false
	clobbered := false
	var last x86asm.Inst
	for addr := bl.Start; addr < bl.End; {
		inst, n, err := decodeInst(code[addr-b.o.Addr:])
		if err != nil {
			return 0, false
		}
		if addr == bl.Last {
			last = inst
			break
		}
		switch inst.Op {
		case x86asm.CMP:
			cmp, cmpAddr, haveCmp, clobbered = inst, addr, true, false
		case x86asm.MOV, x86asm.LEA, x86asm.MOVZX, x86asm.MOVSXD, x86asm.NOP:
			// Flags unchanged; the compared register must be too.
			if haveCmp && writesOperand(&inst, cmp.Args[0], cmpAddr+uint64(cmp.Len), addr+uint64(n)) {
				clobbered = true
			}
		default:
			haveCmp = false
		}
		addr += uint64(n)
	}
	if !haveCmp || clobbered {
		return 0, false
	}
	imm, ok := cmp.Args[1].(x86asm.Imm)
	if !ok || imm < 0 {
		return 0, false
	}
	if !sameOrigin(cmp.Args[0], cmpAddr+uint64(cmp.Len), o) {
		return 0, false
	}
	rel, ok := last.Args[0].(x86asm.Rel)
	if !ok {
		return 0, false
	}
	takenTo := bl.End + uint64(int64(rel))
	switch {
	case last.Op == x86asm.JA && bl.End == start && takenTo != start:
		return int(imm) + 1, true
	case last.Op == x86asm.JAE && bl.End == start && takenTo != start:
		return int(imm), true
	case last.Op == x86asm.JBE && takenTo == start:
		return int(imm) + 1, true
	case last.Op == x86asm.JB && takenTo == start:
		return int(imm), true
	}
	return 0, false
}

// sameOrigin reports whether operand a (of an instruction ending at next)
// is the index origin o.
func sameOrigin(a x86asm.Arg, next uint64, o origin) bool {
	switch a := a.(type) {
	case x86asm.Reg:
		// A compare of the low byte or word bounds the index only when
		// the index is that byte or word zero-extended.
		f, w, ok := regFamily(a)
		return ok && !o.isMem && int(o.reg) == f && (w >= 4 || o.width != 0 && w >= int(o.width))
	case x86asm.Mem:
		if !o.isMem {
			return false
		}
		o.width = 0
		if a.Base == x86asm.RIP {
			a.Base, a.Disp = 0, int64(next+uint64(a.Disp))
		}
		return a == o.mem
	}
	return false
}

// writesOperand reports whether inst (a move) writes the register or
// memory slot a.
func writesOperand(inst *x86asm.Inst, a x86asm.Arg, aNext, next uint64) bool {
	switch d := inst.Args[0].(type) {
	case x86asm.Reg:
		r, ok := a.(x86asm.Reg)
		if !ok {
			return false
		}
		f1, _, _ := regFamily(d)
		f2, _, _ := regFamily(r)
		return f1 == f2
	case x86asm.Mem:
		// A store may alias the compared slot.
		_, isMem := a.(x86asm.Mem)
		return isMem
	}
	return false
}
