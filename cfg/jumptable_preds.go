package cfg

import (
	"golang.org/x/arch/x86/x86asm"
)

// What the predecessors of a block say about it: the constant a register
// holds on entry, and the bound check guarding a table's index.

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

// Results of isPointer.
const (
	stUnknown = iota // not a pointer, or not known within the depth
	stConst          // a pointer
	stCycle          // only a path back into a block being resolved: agrees with anything
	stWord           // a pointer, on some path a word of an array (jumptable.go)
)

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

// predBound returns the bound the predecessor p puts on an index from o
// for the jump block starting at start, as bound describes, and whether it
// puts one.
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
			// Flags unchanged; the compared register or slot must be too.
			if haveCmp && !b.keepsSlot(&inst, addr+uint64(n), cmp.Args[0], cmpAddr+uint64(cmp.Len), cmp.MemBytes) {
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
