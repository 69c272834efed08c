package jump

import (
	"sort"

	"github.com/patchprof/patchprof/cfg"
)

// A trampoline that runs only the first instructions of its block costs two
// jumps a hit: into the trampoline and back. One that runs its block whole,
// through the branch, jump or return that ends it, needs no way back of its
// own: its exits are the block's own control transfers, which the monitor
// aims at the trampolines of the sites they go to (Trampoline.Exits), and a
// loop whose blocks are all patched then runs in its trampolines, one jump
// a block as in the original code. A block that ends in a call is displaced
// up to the call, which stays in original code: an emulated call pushes its
// return address without the return stack buffer, and every return to it
// would be mispredicted. The plan reads the blocks from the flow graph
// alone; whether their instructions run out of line is read when a site is
// patched (package breakpoint's Table.BuildTrampoline), which falls back to
// the shortest patch.

// MaxHostLen bounds the code a trampoline runs whole: a block displaced
// whole, with its tail, and a host block, whose bytes after its own jmp are
// a short site's landing (package breakpoint's Table.ShortSite). It must
// fit in TrampolineSize with what a trampoline adds (the counter update,
// flags kept, an arc's count, the branch grown to rel32, the jmp back); a
// build that does not fit is refused (ErrTrampolineTooLong), and the site
// takes a shorter patch or keeps its breakpoint.
const MaxHostLen = 176

// MaxWholeInsts bounds the instructions of a block displaced whole: a
// thread that a signal finds in the middle of them is single-stepped out
// of the trampoline (monitor's leaveScratch, at most 64 steps).
const MaxWholeInsts = 48

// WholeBlock returns how many bytes from addr, the start of a block of g,
// a jump patch displaces to run the block whole in its trampoline, and
// whether its last displaced instruction may go on into the next block
// (falls through, or is a conditional jump), 0 when addr starts no block
// or the block is too long.
func WholeBlock(g *cfg.Graph, addr uint64) (n int, falls bool) {
	b, ok := BlockAt(g, addr)
	if !ok || b.Insts > MaxWholeInsts {
		return 0, false
	}
	switch b.Term {
	case cfg.TermCall, cfg.TermNoReturn, cfg.TermTrap:
		n = int(b.Last - addr) // the call, or ud2, stays
	case cfg.TermFall:
		n, falls = int(b.End-addr), true
	case cfg.TermCond:
		n, falls = int(b.End-addr), true
	default:
		n = int(b.End - addr)
	}
	if n > MaxHostLen {
		return 0, false
	}
	return n, falls
}

// BlockAt returns the block of g that starts at addr.
func BlockAt(g *cfg.Graph, addr uint64) (cfg.Block, bool) {
	k := sort.Search(len(g.Blocks), func(k int) bool { return g.Blocks[k].Start >= addr })
	if k < len(g.Blocks) && g.Blocks[k].Start == addr {
		return g.Blocks[k], true
	}
	return cfg.Block{}, false
}

// PlainJcc reports whether code starts with a jcc without prefixes (70-7F
// rel8 or 0F 80-8F rel32: Intel SDM vol. 2, Jcc), which a trampoline
// relocates as jcc rel32 and a jump back: a block ending in one may run
// on into its tail.
func PlainJcc(code []byte) bool {
	return len(code) >= 2 && (code[0] >= 0x70 && code[0] <= 0x7F || code[0] == 0x0F && code[1] >= 0x80 && code[1] <= 0x8F)
}
