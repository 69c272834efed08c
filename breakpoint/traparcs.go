package breakpoint

import (
	"github.com/patchprof/patchprof/breakpoint/jump"
	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/symtab"
)

// Traps counted on the arc before them.
//
// At -O2 gcc aligns a loop head with padding that the code before it
// falls into: a conditional jump, then a block of one nop, then the loop
// (`test %eax, %eax; je out; nop; loop: ...`). The nop block is too short
// for a jmp and its next byte a branch target, so its site traps at every
// hit; and its count often does not follow from the others' (the jump's
// other arc goes to a block with other arrivals). Its one arrival is the
// conditional jump's arc into it: counted in the trampoline of the block
// that ends in the jump, it gives the nop block's count, and the nop
// block is derived.

// maxTrapArcs bounds the arcs counted per function to free its trapping
// blocks.
const maxTrapArcs = 4

// trapArcBlocks returns how many blocks of g trapArc may count an arc
// for (at most maxTrapArcs): blocks shorter than a jmp rel32 whose one
// arrival is an arc of a conditional jump.
func trapArcBlocks(g *cfg.Graph) int {
	in := make([]int, len(g.Blocks))
	cond := make([]bool, len(g.Blocks))
	for _, e := range g.Edges {
		if e.To >= 0 {
			in[e.To]++
			cond[e.To] = e.From >= 0 && g.Blocks[e.From].Term == cfg.TermCond
		}
	}
	n := 0
	for b, bl := range g.Blocks {
		if bl.End-bl.Start < jump.JmpLen && in[b] == 1 && cond[b] {
			n++
		}
	}
	return min(n, maxTrapArcs)
}

// soleArrival returns the index of the one edge of g into block b, when
// it is an arc of a conditional jump.
func soleArrival(g *cfg.Graph, b int) (int, bool) {
	k := -1
	for e, ed := range g.Edges {
		if ed.To != b {
			continue
		}
		if k >= 0 || ed.From < 0 || g.Blocks[ed.From].Term != cfg.TermCond {
			return 0, false
		}
		k = e
	}
	return k, k >= 0
}

// trapArcs counts, for the blocks of graph gi in traps (its block indexes
// whose sites keep their int3 and whose counts do not follow from the
// others'), the arc of a conditional jump that is each one's sole arrival,
// in the trampoline of the block that ends in the jump: that block then
// displaces its whole code. It returns how many it counted; the graph's
// blocks are then derived again.
func (p *Plan) trapArcs(sym *symtab.File, gi int, fg FuncGraph, traps []int) int {
	t := p.Table
	g := fg.Graph
	if fg.Func < 0 || int(fg.Func) >= len(sym.Funcs) {
		return 0
	}
	f := sym.Funcs[fg.Func]
	fcode, ok := sym.Code(f.Addr, int(f.Size))
	if !ok {
		return 0
	}
	counted := 0
	for _, b := range traps {
		if counted == maxTrapArcs || !p.arcRoom() {
			break
		}
		e, ok := soleArrival(g, b)
		if !ok {
			continue
		}
		from, ok := t.Index(g.Blocks[g.Edges[e].From].Start)
		if !ok || t.JumpLen(from) == 0 || t.jump.derived[from] || len(t.jump.arcOf[from]) > 0 || len(t.jump.hosting[from]) > 0 {
			continue
		}
		if _, short := t.jump.host[from]; short {
			continue
		}
		if _, entries := t.entries[from]; entries {
			continue
		}
		ac, ok := p.arcSite(g, fg, fcode, f.Addr, e)
		if !ok || ac.short || ac.site != from {
			continue
		}
		ac.graph = gi
		if t.jump.measured[gi] == nil {
			t.jump.measured[gi] = make([]bool, len(g.Edges))
		}
		t.jump.measured[gi][e] = true
		t.jump.length[from] = ac.length
		t.jump.arcOf[from] = append(t.jump.arcOf[from], len(t.jump.arcs))
		t.jump.arcs = append(t.jump.arcs, ac)
		counted++
	}
	if counted > 0 && t.jump.funcs == nil {
		// The whole-table plan sized the arcs' counts before.
		t.cnt.ArcHits = append(t.cnt.ArcHits, make([]uint64, len(t.jump.arcs)-len(t.cnt.ArcHits))...)
		t.jump.arcServed = append(t.jump.arcServed, make([]bool, len(t.jump.arcs)-len(t.jump.arcServed))...)
	}
	return counted
}

// arcRoom reports whether one more arc may be counted: always for the
// whole-table plan, within those reserved for functions planned at
// their first hit.
func (p *Plan) arcRoom() bool {
	lf := p.Table.jump.funcs
	return lf == nil || len(p.Table.jump.arcs) < lf.arcCap
}
