package cfg

import (
	"encoding/binary"
	"fmt"
	"slices"

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
// and, at gcc -O2, the same with the table's address loaded into a
// callee-saved register before the loops (lea T(%rip),%r13 ... sub
// $C,%eax; cmp $N,%al; ja dflt; movzbl %al,%eax; movslq
// (%r13,%rax,4),%rax; add %r13,%rax; jmp *%rax: a lexer's switch), or
// the index compared where it lies in memory, with spills between the
// compare and its branch (cmpl $N,F(%r14); mov %rcx,S(%rsp); ja dflt;
// mov F(%r14),%eax; ...: jumptable_slot.go).
//
// The block holding the jump is evaluated symbolically from its start
// (the constant a register holds on entry comes from constant propagation
// over the whole graph, jumptable_consts.go), which gives the table base,
// entry size and sign and the index's origin. The bound comes from the
// predecessors: each must end with an unsigned compare of that origin
// with an immediate and a branch to the default (ja, jae) or to the jump
// block (jbe, jb). Anything else is not guessed at: the function is not
// recoverable.
//
// An indirect jump that is no table may be a tail call through a
// function pointer: one passed in, returned by a call, or loaded from
// memory, a variable or a word of an array (an operator table's handler,
// `return ops[t].fn(n)`, or an array of handlers whose bound is out of
// sight). It is read as one only when the function takes no address of
// its own code but its switches' cases (takesLabels), so that no word of
// memory can hold an address inside it; a word of an array further needs
// the data's pointers to be known (a PointerImage), a base that is no
// table of the function's own (ownTable), and never the stack, whose
// words include return addresses.

// searchDepth bounds how many predecessors deep a jump's value is
// followed to tell a function pointer or a computed goto.
const searchDepth = 16

// maxTableEntries bounds a table, against reading megabytes on a wild
// compare.
const maxTableEntries = 1 << 16

// maxSettleRounds bounds the rounds in which only the reading of computed
// gotos changes (no new code to decode): it depends on the graph, which
// depends on it.
const maxSettleRounds = 16

// A pendingJump is an indirect jump that is no jump table: a tail call
// through a function pointer (ptr), a computed goto, or neither (err).
type pendingJump struct {
	off   uint32
	block int
	v     val // its target value
	ptr   bool
	word  bool // ptr through a word of an array (the top of this file)
	err   *Error
}

// resolveTables tries to recover the table of every indirect jump not yet
// resolved, then reads the others as computed gotos or tail calls through
// pointers (which one may change as more of the function is decoded, so
// they are read again every round). grew reports new code queued or a
// jump read differently, either of which changes the graph.
func (b *builder) resolveTables() (grew bool, err error) {
	if b.table == nil {
		b.table = map[uint32]*Table{}
		b.tail = map[uint32]bool{}
		b.ptrTail = map[uint32]bool{}
	}
	queued := len(b.work)
	var firstErr *Error
	var pending []pendingJump
	for _, off := range b.inds {
		if t := b.table[off]; t != nil && !t.Computed || b.tail[off] {
			continue
		}
		b.evals = 0
		t, tail, p, e := b.recoverTable(off)
		switch {
		case e != nil:
			if firstErr == nil {
				firstErr = e
			}
		case tail:
			b.tail[off] = true
			grew = true
		case t != nil:
			b.table[off] = t
			grew = true
			b.addTargets(off, t.Targets)
		default:
			pending = append(pending, p)
		}
	}
	changed := false
	var r *gotoReading
	if len(pending) > 0 {
		r = b.readGotos()
	}
	labels := b.takesLabels(r)
	for _, p := range pending {
		old := b.table[p.off]
		b.evals = 0
		if targets, ok := b.computedGoto(r, p.block, p.v); ok {
			if old == nil || !slices.Equal(old.Targets, targets) || b.ptrTail[p.off] {
				changed = true
				b.table[p.off] = &Table{Jump: b.o.Addr + uint64(p.off), Targets: targets, Computed: true}
				delete(b.ptrTail, p.off)
				b.addTargets(p.off, targets)
			}
			continue
		}
		if p.ptr && !labels && (!p.word || r != nil) {
			// A jump through a function pointer in a function that takes
			// no label's address: a tail call.
			if !b.ptrTail[p.off] || old != nil {
				changed = true
				b.ptrTail[p.off] = true
				delete(b.table, p.off)
			}
			continue
		}
		if firstErr == nil {
			firstErr = p.err
		}
	}
	if changed && len(b.work) == queued {
		if b.settle++; b.settle > maxSettleRounds {
			return false, &Error{Func: b.o.Name, Addr: b.o.Addr, Err: ErrJumpTable, Detail: "computed gotos do not settle"}
		}
	}
	grew = grew || changed
	if !grew && firstErr != nil {
		return false, firstErr
	}
	return grew, nil
}

// recheckTables reads every jump table again over the final graph. A
// table is read once, in the round its jump is decoded, from the graph
// of that round; later rounds add edges (other tables' cases, computed
// gotos, landing pads) that may reach its jump or the blocks before it
// with another base in the register or without the bound check. A table
// that no longer reads the same is an error: the function is left
// without a graph rather than given a wrong one.
func (b *builder) recheckTables() *Error {
	for _, off := range b.inds {
		old := b.table[off]
		if old == nil || old.Computed {
			continue
		}
		b.evals = 0
		t, _, _, e := b.recoverTable(off)
		if e == nil && (t == nil || t.Base != old.Base || !slices.Equal(t.Targets, old.Targets)) {
			e = &Error{Func: b.o.Name, Addr: old.Jump, Err: ErrJumpTable, Detail: "the table reads differently over the whole function's graph"}
		}
		if e != nil {
			return e
		}
	}
	return nil
}

// addTargets makes every target of the indirect jump at off inside the
// function a leader and queues it.
func (b *builder) addTargets(off uint32, targets []uint64) {
	for _, target := range targets {
		if o, ok := b.inside(target); ok {
			b.flag[o] |= fLeader
			if b.flag[o]&fQueued == 0 {
				b.jumps = append(b.jumps, branch{off: off, target: target})
			}
			b.queue(o)
		}
	}
}

// recoverTable finds the table of the indirect jump at off, or reports it
// as a tail call through memory. When it finds neither, it returns the
// jump as pending (a computed goto, a tail call through a function
// pointer, or an error), or an error when the jump's block cannot even be
// evaluated.
func (b *builder) recoverTable(off uint32) (t *Table, tail bool, p pendingJump, e *Error) {
	addr := b.o.Addr + uint64(off)
	errorf := func(format string, args ...any) *Error {
		return &Error{Func: b.o.Name, Addr: addr, Err: ErrJumpTable, Detail: fmt.Sprintf(format, args...)}
	}
	inst, _, err := decodeInst(b.o.Code[off:])
	if err != nil {
		return nil, false, p, errorf("%v", err)
	}
	if mem, ok := inst.Args[0].(x86asm.Mem); ok && mem.Base == x86asm.RIP && mem.Index == 0 {
		// jmp *p(%rip): a tail call through a pointer (the GOT of
		// -fno-plt code, a function pointer variable).
		return nil, true, p, nil
	}
	block, ok := b.g.BlockAt(addr)
	if !ok {
		return nil, false, p, errorf("jump outside every block")
	}
	m := newMachine(b, block, searchDepth)
	if !m.run(addr) {
		return nil, false, p, errorf("cannot evaluate its block")
	}
	var v val
	switch a := inst.Args[0].(type) {
	case x86asm.Reg:
		v = m.get(a)
	case x86asm.Mem:
		v = m.load(a, addr+uint64(inst.Len), 8, false)
	}
	p = pendingJump{off: off, block: block, v: v}
	if v.k != vLoad {
		switch b.isPointer(block, v, searchDepth, map[int]bool{}) {
		case stConst:
			// A jump through a function pointer: loaded from a
			// variable, or passed in. Not a switch: a tail call,
			// unless the function takes label addresses.
			p.ptr = true
			p.err = errorf("a jump through a pointer in a function that takes label addresses, not a provable computed goto")
		case stWord:
			p.ptr, p.word = true, true
			p.err = errorf("a jump through a word of an array in a function whose own addresses the binary holds, not a provable computed goto")
		default:
			p.err = errorf("target is neither a table entry nor a function pointer, nor a provable computed goto")
		}
		return nil, false, p, nil
	}
	t, p.err = b.readTable(addr, block, v)
	if p.err != nil && v.size == 8 && !v.signed && v.c == 0 && !b.ownTable(v.base) {
		// 8-byte entries without a bound: an array of function
		// pointers (return handlers[op](x)), unless the function's own
		// addresses are among the binary's words.
		p.ptr, p.word = true, true
	}
	if p.err != nil {
		return nil, false, p, nil
	}
	return t, false, p, nil
}

// ownTable reports whether base may be a table of the function's own
// addresses: the base of a table already recovered (gcc duplicates a
// switch's dispatch, and one copy's bound may be out of sight), or a
// first word that is an address inside the function, or unreadable.
func (b *builder) ownTable(base uint64) bool {
	for _, t := range b.table {
		if t != nil && !t.Computed && t.Base == base {
			return true
		}
	}
	var w [8]byte
	if b.o.Image == nil {
		return true
	}
	if n, err := b.o.Image.ReadImage(base, w[:]); err != nil || n != len(w) {
		return true
	}
	_, in := b.inside(binary.LittleEndian.Uint64(w[:]))
	return in
}

// readTable reads the jump table of the jump at addr, in block, whose
// target is the table entry v.
func (b *builder) readTable(addr uint64, block int, v val) (*Table, *Error) {
	fail := func(format string, args ...any) (*Table, *Error) {
		return nil, &Error{Func: b.o.Name, Addr: addr, Err: ErrJumpTable, Detail: fmt.Sprintf(format, args...)}
	}
	if v.size == 4 && !v.signed {
		return fail("4-byte table entries that are not sign-extended")
	}
	if v.size == 4 && v.c == 0 {
		return fail("relative table entries not added to a base")
	}
	if v.o.isMem && !b.slotKept(block, addr, v.o.mem) {
		return fail("the index's slot may change between its bound check and the jump")
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
	t := &Table{Jump: addr, Base: v.base, EntrySize: int(v.size), Relative: v.size == 4, Targets: make([]uint64, n)}
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
	return t, nil
}

// isPointer tells whether v, a jump target in block, is a function
// pointer rather than a computed address: a constant, a variable loaded
// from memory, a call's result or a register the function received
// (stConst), or on some path a word of an array (stWord); stCycle for a
// loop that agrees with anything, stUnknown for no.
func (b *builder) isPointer(block int, v val, depth int, seen map[int]bool) int {
	switch {
	case v.k == vConst:
		return stConst
	case v.k != vIndex || v.scale != 1 || v.bound != 0:
		return stUnknown
	case v.o.call:
		return stConst // a function returned it
	case v.o.isMem && v.o.mem.Index == 0:
		return stConst // a variable
	case v.o.isMem:
		return stWord
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
		case stWord:
			st = stWord
		case stConst:
			if st != stWord {
				st = stConst
			}
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
