package breakpoint

import (
	"slices"

	"github.com/patchprof/patchprof/breakpoint/jump"
	"github.com/patchprof/patchprof/symtab"
)

// The patch of a function counted only at its entry (--funcs) needs two
// things of the function's flow: whether a branch may land in the bytes
// it covers, and how long the entry's block is, to run it whole in the
// trampoline (jump.WholeBlock). Building the whole flow graph for that
// was most of planning a large program under --funcs: 100,000 functions
// of which 10 run. A linear scan of the function's jumps gives both
// where nothing in the function could tell the graph more (no indirect
// jump, whose jump table or computed goto the graph reads; no landing
// pad); elsewhere the graph is built as before. TestEntryScanMatchesGraph
// holds the two to the same plan on whole binaries.

// entryScan returns, for function f whose entry is at f.Addr, the length
// jump.WholeBlock would give the entry's block from the flow graph (0
// when it is too long to run whole), and true; false when the graph is
// needed: an indirect jump, a landing pad, code the length decoder does
// not know, or an entry block that runs off the function's end.
func entryScan(sym *symtab.File, opt *PlanOptions, f symtab.Func) (int, bool) {
	if len(opt.LandingPads[f.Addr]) > 0 || opt.LandingPads == nil && sym.HasSection(".gcc_except_table") {
		// A landing pad is a leader only the file's exception tables
		// tell, and they are not read (C++ and Rust under --funcs).
		return 0, false
	}
	code, ok := sym.Code(f.Addr, int(f.Size))
	if !ok {
		return 0, false
	}
	jumps, ok := symtab.ScanJumps(code, f.Addr)
	if !ok {
		return 0, false
	}
	insts := 0
	for off := 0; off < len(code); {
		pc := f.Addr + uint64(off)
		if off > 0 {
			if _, leader := slices.BinarySearch(jumps, pc); leader {
				return whole(insts, off), true // falls into the next block
			}
		}
		n, e := symtab.EndOf(code[off:])
		insts++
		end := off + n
		switch e {
		case symtab.EndsUnknown:
			return 0, false
		case symtab.EndsAfter:
			return whole(insts, end), true
		case symtab.EndsAt:
			// The call, or the trap, stays in the original code.
			return whole(insts, off), true
		case symtab.EndsCond:
			if end >= len(code) {
				return 0, false // the graph refuses a branch that ends the function
			}
			return whole(insts, end), true
		}
		off = end
	}
	return 0, false // falls off the end: the graph refuses the function
}

// whole is jump.WholeBlock's answer for a block of insts instructions whose
// displaced bytes are n.
func whole(insts, n int) int {
	if insts > jump.MaxWholeInsts || n > jump.MaxHostLen {
		return 0
	}
	return n
}
