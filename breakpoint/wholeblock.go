package breakpoint

import (
	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/symtab"
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
// patched (Table.JumpSiteOf), which falls back to the shortest patch.

// maxWholeInsts bounds the instructions of a block displaced whole: a
// thread that a signal finds in the middle of them is single-stepped out
// of the trampoline (monitor's leaveScratch, at most 64 steps).
const maxWholeInsts = 32

// wholeBlock returns how many bytes from addr, the start of a block of g,
// a jump patch displaces to run the block whole in its trampoline, and
// whether its last displaced instruction may go on into the next block
// (falls through, or is a conditional jump), 0 when addr starts no block
// or the block is too long.
func wholeBlock(g *cfg.Graph, addr uint64) (n int, falls bool) {
	b, ok := blockAt(g, addr)
	if !ok || b.Insts > maxWholeInsts {
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

// blockAt returns the block of g that starts at addr.
func blockAt(g *cfg.Graph, addr uint64) (cfg.Block, bool) {
	lo, hi := 0, len(g.Blocks)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if g.Blocks[m].Start < addr {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(g.Blocks) && g.Blocks[lo].Start == addr {
		return g.Blocks[lo], true
	}
	return cfg.Block{}, false
}

// planTails gives a trampoline that runs its block whole and then goes on
// into the next block by fall-through (its conditional jump not taken, or
// no jump) that next block's code too, when no site counts there (a block
// whose count is derived, or one no mode counts, as under --funcs): the
// thread skips the jump back to original code and, when that block ends in
// a jump to a patched site, the jump into its patch too. fib's base case
// (`mov; cltq; jmp` to the epilogue) runs in the entry's trampoline, whose
// exit goes straight to the epilogue's trampoline. The tail is not
// patched: other paths reach it in original code, where it stays intact.
// It returns the tail's length per site.
func (p *Plan) planTails(sym *symtab.File, graphOf map[int32]*cfg.Graph) map[int]uint8 {
	t := p.Table
	tails := map[int]uint8{}
	for i, n := range t.jump.length {
		if n == 0 || t.jump.least[i] == 0 || t.jump.derived[i] || t.jump.reasons[i] != "" {
			continue // not displaced whole
		}
		if _, short := t.jump.host[i]; short {
			continue
		}
		if _, arc := t.jump.arcOf[i]; arc {
			continue
		}
		g := graphOf[t.fn[i]]
		if g == nil {
			continue
		}
		addr := t.addr[i]
		next := addr + uint64(n)
		if w, falls := wholeBlock(g, addr); w != int(n) || !falls {
			continue
		}
		if s, ok := t.Index(next); ok && !t.jump.derived[s] {
			continue // counted there: the thread must reach its patch
		}
		if b, _ := blockAt(g, addr); b.Term == cfg.TermCond && !plainJcc(sym, b.Last) {
			continue // loop, jrcxz, xbegin: not a jcc whose jump back can go
		}
		m, _ := wholeBlock(g, next)
		if m == 0 || int(n)+m > MaxHostLen {
			continue
		}
		tails[i] = uint8(m)
	}
	return tails
}

// plainJcc reports whether the instruction at addr is a jcc without
// prefixes (70-7F rel8 or 0F 80-8F rel32: Intel SDM vol. 2, Jcc), which a
// trampoline relocates as jcc rel32 and a jump back.
func plainJcc(sym *symtab.File, addr uint64) bool {
	b, ok := sym.Code(addr, 2)
	return ok && (b[0] >= 0x70 && b[0] <= 0x7F || b[0] == 0x0F && b[1] >= 0x80 && b[1] <= 0x8F)
}

// JumpSiteOf returns site i's jump site as planned (the lengths of the
// displaced instructions read from code, the site's current original
// bytes, then those of its tail), or false when the site keeps its
// breakpoint or code no longer decodes to the planned length. A block
// planned whole whose instructions do not all run out of line takes the
// shortest patch instead, and a tail that does not is left out.
func (t *Table) JumpSiteOf(i int, code []byte) (JumpSite, bool) {
	n := t.JumpLen(i)
	if n == 0 {
		return JumpSite{}, false
	}
	none := func(uint64) bool { return false }
	addr := t.addr[i] + t.bias
	js, ok := planRun(code, addr, n, none)
	if !ok {
		return t.LeastJumpSiteOf(i, code)
	}
	if tail := int(t.jump.tail[i]); tail > 0 && len(code) >= n+tail {
		if tj, ok := planRun(code[n:], addr+uint64(n), tail, none); ok {
			js.Insns = append(js.Insns, tj.Insns...)
			js.Tail = tj.Len
		}
	}
	return js, true
}

// LeastJumpSiteOf returns the shortest patch of site i, planned displaced
// whole, for a trampoline of the whole block that cannot be built; false
// when there is none other than the planned one.
func (t *Table) LeastJumpSiteOf(i int, code []byte) (JumpSite, bool) {
	if t.jump == nil || t.jump.least[i] == 0 {
		return JumpSite{}, false
	}
	return planRun(code, t.addr[i]+t.bias, int(t.jump.least[i]), func(uint64) bool { return false })
}
