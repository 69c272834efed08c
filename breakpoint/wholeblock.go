package breakpoint

import (
	"fmt"
	"sort"

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
// patched (Table.BuildTrampoline), which falls back to the shortest patch.

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
	k := sort.Search(len(g.Blocks), func(k int) bool { return g.Blocks[k].Start >= addr })
	if k < len(g.Blocks) && g.Blocks[k].Start == addr {
		return g.Blocks[k], true
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

// BuildTrampoline builds the trampoline of site i at runtime address at,
// from code, the site's current original bytes (from the site on, at least
// MaxHostLen of them or to the end of the mapping): the planned patch with
// its tail; failing that (an instruction that does not run out of line, or
// does not end where the plan says), without the tail; failing that, for a
// block planned whole, the shortest patch. edges are the arcs its
// trampoline counts, none for a site displaced whole by this file (they
// need the planned block). It returns the first error when none can be
// built, or false when site i takes no jump.
func (t *Table) BuildTrampoline(i int, code []byte, at uint64, counter uint32, edges []EdgeCount) (*Trampoline, error) {
	n := t.JumpLen(i)
	if n == 0 {
		return nil, fmt.Errorf("breakpoint: site %d takes no jump", i)
	}
	addr := t.addr[i] + t.bias
	js := JumpSite{Len: n, Tail: int(t.jump.tail[i]), Edges: edges}
	if len(code) < js.Len+js.Tail {
		js.Tail = 0
	}
	tr, err := BuildTrampoline(code, addr, at, js, counter)
	if err == nil || len(edges) > 0 {
		return tr, err
	}
	if js.Tail > 0 {
		js.Tail = 0
		if tr, e := BuildTrampoline(code, addr, at, js, counter); e == nil {
			return tr, nil
		}
	}
	if least := int(t.jump.least[i]); least > 0 {
		js.Len = least
		if tr, e := BuildTrampoline(code, addr, at, js, counter); e == nil {
			return tr, nil
		}
	}
	return nil, err
}
