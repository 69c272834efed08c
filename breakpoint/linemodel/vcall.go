package linemodel

import (
	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/symtab"
	"golang.org/x/arch/x86/x86asm"
)

// The value of a C++ virtual call, copied after the call on its line.
//
// g++ gimplifies a virtual call (an OBJ_TYPE_REF) whose value is used into
// the call and a copy of its result, `_24 = OBJ_TYPE_REF (...) (p); _5 =
// _24;`, both located at the call. GCC ends a block after the call for
// gcov (gimple_flow_call_edges_add), so the copy begins the next block,
// which so has the call's line besides those of what follows. -O0 emits
// no instruction for the copy: the block after the call starts with the
// next row, which in a condition over lines (`FirstChild() &&` then
// `FirstChild()->ToDeclaration() &&`, the second test located at the
// first operator's line) is a line above the call's. gcov lists that
// block under its highest line, the call's, not the test's. A direct
// call's value needs no copy (a C function pointer's neither).

// addVirtualCallCopies gives the block after each indirect call of a C++
// function the call's line first, when the block starts at a row on a
// line above the call's in the same file. code starts at base.
func (m *Model) addVirtualCallCopies(g *cfg.Graph, mf *modelFunc, code []byte, base uint64) {
	for _, e := range g.Edges {
		if e.Kind != cfg.Return || e.From < 0 || e.To < 0 {
			continue
		}
		from, to := mf.blocks[e.From], mf.blocks[e.To]
		if len(from) == 0 || len(to) == 0 || to[0].addr != g.Blocks[e.To].Start {
			continue
		}
		call, next := m.keys[from[len(from)-1].line], m.keys[to[0].line]
		if call.File != next.File || call.Line <= next.Line || !indirectCall(code, base, g.Blocks[e.From].Last) {
			continue
		}
		ls := make([]lineAt, 0, len(to)+1)
		ls = append(ls, lineAt{line: from[len(from)-1].line, addr: to[0].addr})
		for _, x := range to {
			if x.line != ls[0].line {
				ls = append(ls, x)
			}
		}
		mf.blocks[e.To] = ls
	}
}

// indirectCall reports whether the instruction at addr (code starts at
// base) is a call through a register or memory.
func indirectCall(code []byte, base, addr uint64) bool {
	if addr < base || addr-base >= uint64(len(code)) {
		return false
	}
	inst, err := symtab.DecodeInst(code[addr-base:])
	if err != nil || inst.Op != x86asm.CALL {
		return false
	}
	switch inst.Args[0].(type) {
	case x86asm.Reg, x86asm.Mem:
		return true
	}
	return false
}
