package linemodel

import (
	"github.com/patchprof/patchprof/lineinfo"
	"github.com/patchprof/patchprof/symtab"
	"golang.org/x/arch/x86/x86asm"
)

// An inMemory is the set of a function's locals that are no registers of
// GIMPLE's, so that their scope ends their lifetimes with clobbers:
// aggregates, and variables whose frame slot's address the code takes
// (a macro may take it where the source shows no &): per name, the lines
// that declare one.
type inMemory map[string][]int

// declares reports whether scope s declares one of mem's variables.
func (mem inMemory) declares(s scope) bool {
	for _, name := range s.names {
		for _, l := range mem[name] {
			if s.open <= l && l <= s.close {
				return true
			}
		}
	}
	return false
}

// localsInMemory returns the inMemory of a function: its DWARF locals that
// are aggregates or whose frame slot is the operand of a lea (-O0 keeps
// every local in the frame, addressed from %rbp, which is the CFA less
// 16 after the prologue). code is the function's, from base.
func localsInMemory(locals []lineinfo.Local, code []byte) inMemory {
	if len(locals) == 0 {
		return nil
	}
	leas := map[int64]bool{}
	for off := 0; off < len(code); {
		inst, err := symtab.DecodeInst(code[off:])
		if err != nil || inst.Len == 0 {
			off++
			continue
		}
		if inst.Op == x86asm.LEA {
			if mem, ok := inst.Args[1].(x86asm.Mem); ok && mem.Base == x86asm.RBP && mem.Index == 0 {
				leas[mem.Disp] = true
			}
		}
		off += inst.Len
	}
	mem := inMemory{}
	for _, l := range locals {
		if l.Aggregate || leas[l.FrameOffset+16] {
			mem[l.Name] = append(mem[l.Name], l.Line)
		}
	}
	return mem
}
